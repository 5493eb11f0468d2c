"""The ASGI application: `create_app(path_or_config)` -> a Starlette app.

Routes (JSON in and out, orjson):

    POST /v1/tokenize    {"text": str} | {"texts": [str]}, allowed_special, disallowed_special,
                         return_pieces, return_offsets, version
    POST /v1/count       the same input; counts only
    POST /v1/detokenize  {"ids": [int]} | {"ids": [[int]]}, errors, version
    GET  /v1/vocab       size, pattern, special tokens, merges, sha256, version
    POST /v1/admin/reload  (Authorization: Bearer TOKEN; off without a configured token)
    GET  /healthz  /readyz  /metrics  /openapi.json

Every /v1 answer carries the vocabulary version that served it, in the body and in the
`X-Bytebpe-Vocab-Version` header. Small requests are encoded on the event loop; larger
ones in a bounded thread pool (the Rust core releases the GIL).
"""

from __future__ import annotations

import asyncio
import hmac
import os
import random
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.to_thread
import orjson
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Route

from bytebpe.observe import get_logger
from bytebpe.serve import metrics
from bytebpe.serve.asgi import JSON, AsgiEndpoint, Reply, ServiceApp, Watchdog, json_response
from bytebpe.serve.config import ServeConfig
from bytebpe.serve.holder import ReloadResult, Served, VersionUnavailable, VocabularyHolder
from bytebpe.serve.openapi import openapi_document
from bytebpe.serve.schema import ApiError, invalid, parse_decode, parse_encode, parse_reload
from bytebpe.serve.work import VERSION_HEADER, decode_lists, encode_answer

log = get_logger("bytebpe.serve")


def error_response(error: ApiError, served: Served | None = None) -> Reply:
    headers = dict(error.headers)
    if served is not None:
        headers[VERSION_HEADER] = served.name
    return json_response(error.body(), error.status, headers)


class Service:
    """The state of one worker: configuration, the vocabulary holder, the thread pool."""

    def __init__(self, config: ServeConfig) -> None:
        config.check()
        self.config = config
        # Without polling of the source, a trigger file (several workers) is still
        # watched, so that an admin reload reaches every worker.
        poll = config.poll_interval or (0.1 if config.trigger_file else 0.0)
        self.holder = VocabularyHolder(
            config.path, kind=config.kind, poll_interval=poll,
            keep_versions=config.keep_versions, trigger_file=config.trigger_file,
            watch_source=config.poll_interval > 0, on_reload=self._on_reload,
        )
        self.limiter: anyio.CapacityLimiter | None = None
        self.watchdog = Watchdog()
        self.own_trigger: tuple[int, int] | None = None
        self._publish(self.holder.current)

    # ------------------------------------------------------------ lifetime
    def startup(self) -> None:
        threads = self.config.threads or 2 * (os.cpu_count() or 1)
        self.limiter = anyio.CapacityLimiter(threads)
        self.holder.start()
        current = self.holder.current
        log.info("serve.start", path=self.config.path, kind=current.kind, version=current.name,
                 vocab_size=current.vocab_size, pid=os.getpid(),
                 admin=self.config.admin_token is not None)

    def shutdown(self) -> None:
        self.watchdog.stop()
        self.holder.stop()
        metrics.worker_exit()
        log.info("serve.stop", pid=os.getpid())

    # ------------------------------------------------------------ reloads
    @staticmethod
    def _publish(served: Served) -> None:
        metrics.set_serving(served.name, served.version.merges, served.vocab_size,
                            served.loaded_at)

    def _on_reload(self, result: ReloadResult) -> None:
        metrics.RELOADS.labels(result.result).inc()
        metrics.RELOAD_SECONDS.observe(result.seconds)
        if result.result == "success":
            self._publish(self.holder.current)
            log.info("serve.reload", result="success", version=result.version,
                     previous=result.previous, seconds=round(result.seconds, 4),
                     reason=result.reason, pid=os.getpid())
        elif result.result == "failure":
            log.warning("serve.reload", result="failure", version=result.version,
                        error=result.error, seconds=round(result.seconds, 4),
                        reason=result.reason, pid=os.getpid())
        else:
            log.debug("serve.reload", result="unchanged", version=result.version,
                      reason=result.reason)

    # ------------------------------------------------------------ helpers
    async def body(self, request: Request, deadline: float) -> Any:
        """The JSON body, read within the limits and the deadline."""
        declared = None
        for name, value in request.scope["headers"]:
            if name == b"content-length":
                declared = value.decode("latin-1")
        limit = self.config.max_body_bytes
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise ApiError(413, "too_large", f"the body ({declared} bytes) is over the limit of "
                           f"{limit} bytes", None)
        chunks: list[bytes] = []
        size = 0
        receive = request.receive
        task = self.watchdog.watch(deadline)
        try:
            try:
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        raise ClientDisconnect()
                    chunk = message.get("body", b"")
                    size += len(chunk)
                    if size > limit:
                        raise ApiError(413, "too_large", "the body is over the limit of "
                                       f"{limit} bytes", None)
                    chunks.append(chunk)
                    if not message.get("more_body", False):
                        break
            finally:
                expired = self.watchdog.unwatch(task)
        except asyncio.CancelledError:
            if not expired:
                raise
            raise ApiError(408, "timeout", f"the body was not received within "
                           f"{self.config.timeout} s", None) from None
        data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        if not data:
            return None
        try:
            if len(data) > 16 * self.config.inline_bytes:  # keep the event loop answering
                return await self.offload(orjson.loads, data, deadline=deadline)
            return orjson.loads(data)
        except orjson.JSONDecodeError as e:
            raise ApiError(400, "malformed_json", f"the body is not valid JSON: {e}", None) from None

    async def served_for(self, pinned: str | None, deadline: float) -> Served:
        current = self.holder.current
        if pinned is None:
            return current
        cached = self.holder.cached(pinned)
        try:
            if cached is not None:
                served = cached
            else:
                served = await self.offload(self.holder.resolve, pinned, deadline=deadline)
        except ValueError as e:
            metrics.PINNED.labels("unavailable").inc()
            raise invalid("version", str(e)) from None
        except VersionUnavailable as e:
            metrics.PINNED.labels("unavailable").inc()
            raise ApiError(409, "version_unavailable", str(e), "version",
                           {VERSION_HEADER: current.name}) from None
        metrics.PINNED.labels("current" if served is current else "earlier").inc()
        return served

    async def offload(self, fn: Callable[..., Any], *args: Any, deadline: float) -> Any:
        """Runs `fn` in the thread pool, giving up (408) at the deadline."""
        try:
            with anyio.fail_after(max(deadline - time.monotonic(), 0.0)):
                return await anyio.to_thread.run_sync(fn, *args, limiter=self.limiter,
                                                      abandon_on_cancel=True)
        except TimeoutError:
            raise ApiError(408, "timeout", f"the request took longer than {self.config.timeout} s",
                           None) from None

    async def run(self, fn: Callable[..., Any], n_bytes: int, deadline: float, *args: Any) -> Any:
        if n_bytes <= self.config.inline_bytes:
            return fn(*args)
        return await self.offload(fn, *args, deadline=deadline)


# ==================================================================== the app


def create_app(source: str | os.PathLike[str] | ServeConfig, **settings: Any) -> ServiceApp:
    """The service as an ASGI app. `source` is a path (any file `bytebpe serve` takes) or a
    `ServeConfig`; keyword arguments are `ServeConfig` fields (`admin_token=...`,
    `max_batch=...`, ...). The vocabulary is loaded (and verified) before this returns, so
    a bad path fails here; the reload poller runs during the app's lifespan."""
    if isinstance(source, ServeConfig):
        config = source
    else:
        config = ServeConfig(path=os.fspath(source), **settings)
    service = Service(config)
    sample = config.access_log_sample

    def endpoint(route: str, handler: Callable[[Request, float], Awaitable[Reply]]) -> Any:
        """The route as a plain ASGI app: metrics, one deadline, every error as JSON."""
        counters: dict[tuple[str, int], Any] = {}
        latency = metrics.LATENCY.labels(route)

        async def asgi(scope: Any, receive: Any, send: Any) -> None:
            start = time.perf_counter()
            deadline = time.monotonic() + config.timeout
            request = Request(scope, receive)
            metrics.IN_FLIGHT.inc()
            try:
                reply = await handler(request, deadline)
            except ApiError as e:
                # Errors also name a version: the one that served, else the current one.
                e.headers.setdefault(VERSION_HEADER, service.holder.current.name)
                reply = error_response(e)
            except ClientDisconnect:
                reply = Reply(b"", 499)
            except Exception as e:  # a bug: logged, answered as JSON
                log.exception("serve.error", route=route, error=f"{type(e).__name__}: {e}")
                reply = json_response({"error": {"code": "internal", "message":
                                       "internal error (logged)", "field": None}}, 500)
            finally:
                metrics.IN_FLIGHT.dec()
            if reply.status_code != 499:
                await reply.send(send)
            seconds = time.perf_counter() - start
            key = (scope["method"], reply.status_code)
            counter = counters.get(key)
            if counter is None:
                counter = counters[key] = metrics.REQUESTS.labels(route, key[0], str(key[1]))
            counter.inc()
            latency.observe(seconds)
            if reply.status_code >= 500 or (sample and random.random() < sample):
                log.info("serve.request", route=route, status=reply.status_code,
                         seconds=round(seconds, 6))

        return AsgiEndpoint(asgi)

    async def tokenize(request: Request, deadline: float, *, count: bool = False) -> Reply:
        route = "count" if count else "tokenize"
        req = parse_encode(await service.body(request, deadline), config, count=count)
        served = await service.served_for(req.version, deadline)
        try:
            ids, extra = await service.run(encode_answer, req.n_bytes, deadline, served, req)
        except ApiError as e:
            e.headers.setdefault(VERSION_HEADER, served.name)
            raise
        n_tokens = sum(map(len, ids))
        metrics.INPUT_BYTES_BY_ROUTE[route].inc(req.n_bytes)
        metrics.OUTPUT_TOKENS_BY_ROUTE[route].inc(n_tokens)
        body: dict[str, Any]
        if count:
            body = ({"count": n_tokens} if req.single
                    else {"counts": [len(x) for x in ids], "total": n_tokens})
        else:
            body = {"ids": ids[0] if req.single else ids, **extra}
        body["version"] = served.name
        body["vocab_size"] = served.vocab_size
        return json_response(body, headers={VERSION_HEADER: served.name})

    async def count(request: Request, deadline: float) -> Reply:
        return await tokenize(request, deadline, count=True)

    async def detokenize(request: Request, deadline: float) -> Reply:
        req = parse_decode(await service.body(request, deadline), config)
        served = await service.served_for(req.version, deadline)
        texts = await service.run(decode_lists, req.n_ids * 4, deadline, served, req)
        metrics.DECODED_TOKENS.inc(req.n_ids)
        metrics.DECODED_BYTES.inc(sum(len(t.encode("utf-8", "surrogatepass")) for t in texts))
        body: dict[str, Any] = {"text": texts[0]} if req.single else {"texts": texts}
        body["version"] = served.name
        body["vocab_size"] = served.vocab_size
        return json_response(body, headers={VERSION_HEADER: served.name})

    async def vocab(request: Request, deadline: float) -> Reply:
        served = service.holder.current
        tok = served.tokenizer
        body = {
            "version": served.name,
            "merges": served.version.merges,
            "sha256": served.version.sha256,
            "vocab_size": served.vocab_size,
            "pattern": tok.pattern,
            "pattern_name": getattr(tok, "pattern_name", None),
            "special_tokens": tok.special_tokens,
            "kind": served.kind,
            "loaded_at": served.loaded_at,
        }
        return json_response(body, headers={VERSION_HEADER: served.name})

    async def reload(request: Request, deadline: float) -> Reply:
        if config.admin_token is None:
            raise ApiError(404, "admin_disabled", "admin endpoints are off; start the service "
                           "with an admin token (--admin-token-file) to use them", None)
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token:
            raise ApiError(401, "unauthorized", "send \"Authorization: Bearer <admin token>\"",
                           "authorization", {"www-authenticate": "Bearer"})
        if not hmac.compare_digest(token.encode(), config.admin_token.encode()):
            raise ApiError(403, "forbidden", "the admin token is wrong", "authorization")
        parse_reload(await service.body(request, deadline))
        result = await service.offload(service.holder.reload, "admin", deadline=deadline)
        if config.trigger_file:  # the other workers' pollers reload on this change
            await anyio.to_thread.run_sync(_touch, config.trigger_file)
            service.holder.note_trigger()
        body = {"result": result.result, "version": result.version,
                "previous": result.previous, "seconds": result.seconds, "error": result.error}
        status = 409 if result.result == "failure" else 200
        return json_response(body, status, headers={VERSION_HEADER: result.version})

    async def healthz(request: Request, deadline: float) -> Reply:
        return json_response({"status": "ok"})

    async def readyz(request: Request, deadline: float) -> Reply:
        served = service.holder.current
        return json_response({"status": "ready", "version": served.name},
                             headers={VERSION_HEADER: served.name})

    async def metrics_endpoint(request: Request, deadline: float) -> Reply:
        data, content_type = await anyio.to_thread.run_sync(metrics.exposition)
        return Reply(data, media_type=content_type)

    openapi_body = orjson.dumps(openapi_document())

    async def openapi(request: Request, deadline: float) -> Reply:
        return Reply(openapi_body)

    routes = [
        Route("/v1/tokenize", endpoint("tokenize", tokenize), methods=["POST"]),
        Route("/v1/count", endpoint("count", count), methods=["POST"]),
        Route("/v1/detokenize", endpoint("detokenize", detokenize), methods=["POST"]),
        Route("/v1/vocab", endpoint("vocab", vocab), methods=["GET"]),
        Route("/v1/admin/reload", endpoint("admin_reload", reload), methods=["POST"]),
        Route("/healthz", endpoint("healthz", healthz), methods=["GET"]),
        Route("/readyz", endpoint("readyz", readyz), methods=["GET"]),
        Route("/metrics", endpoint("metrics", metrics_endpoint), methods=["GET"]),
        Route("/openapi.json", endpoint("openapi", openapi), methods=["GET"]),
    ]

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        metrics.REQUESTS.labels("unmatched", request.method, str(exc.status_code)).inc()
        return Response(orjson.dumps({"error": {"code": code, "message": str(exc.detail),
                                             "field": None}}), exc.status_code, exc.headers,
                        media_type=JSON)

    from contextlib import asynccontextmanager

    @asynccontextmanager
    async def lifespan(app: Starlette) -> Any:
        service.startup()
        try:
            yield
        finally:
            service.shutdown()

    starlette = Starlette(routes=routes, lifespan=lifespan,
                          exception_handlers={HTTPException: http_error})
    starlette.state.service = service
    hot = {("POST", "/v1/tokenize"): routes[0].app, ("POST", "/v1/count"): routes[1].app,
           ("POST", "/v1/detokenize"): routes[2].app}
    return ServiceApp(starlette, hot)


def _touch(path: str) -> None:
    """Changes `path` (every worker's poller watches it) by replacing it atomically."""
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        f.write(f"{time.time_ns()} {os.getpid()}\n")
    os.replace(tmp, path)


def app_from_env() -> ServiceApp:
    """The factory `bytebpe serve` gives the server (settings from the environment)."""
    from bytebpe.observe import configure_logging

    configure_logging()
    return create_app(ServeConfig.from_env())
