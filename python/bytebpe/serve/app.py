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
from bytebpe.serve.config import ServeConfig
from bytebpe.serve.holder import ReloadResult, Served, VersionUnavailable, VocabularyHolder
from bytebpe.serve.openapi import openapi_document
from bytebpe.serve.schema import (
    ApiError,
    DecodeRequest,
    EncodeRequest,
    invalid,
    parse_decode,
    parse_encode,
    parse_reload,
)

VERSION_HEADER = "x-bytebpe-vocab-version"
JSON = "application/json"

log = get_logger("bytebpe.serve")


class Reply:
    """A response sent straight to the ASGI `send` (lighter than Starlette's Response)."""

    __slots__ = ("body", "headers", "media_type", "status_code")

    def __init__(self, body: bytes, status: int = 200, headers: dict[str, str] | None = None,
                 media_type: str = JSON) -> None:
        self.body = body
        self.status_code = status
        self.headers = headers
        self.media_type = media_type

    async def send(self, send: Any) -> None:
        raw = [(b"content-type", self.media_type.encode("latin-1")),
               (b"content-length", str(len(self.body)).encode("latin-1"))]
        if self.headers:
            raw += [(k.lower().encode("latin-1"), v.encode("latin-1"))
                    for k, v in self.headers.items()]
        await send({"type": "http.response.start", "status": self.status_code, "headers": raw})
        await send({"type": "http.response.body", "body": self.body})


def json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Reply:
    return Reply(orjson.dumps(body), status, headers)


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


class Watchdog:
    """Cancels requests past their deadline. One task per event loop wakes every
    `tick` seconds; a request costs a dict insert and delete (a timer handle or a cancel
    scope per request cost more than encoding a 1 KB text)."""

    def __init__(self, tick: float = 0.05) -> None:
        self.tick = tick
        self.deadlines: dict[asyncio.Task[Any], float] = {}
        self.expired: set[asyncio.Task[Any]] = set()
        self._runner: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def watch(self, deadline: float) -> asyncio.Task[Any] | None:
        task = asyncio.current_task()
        if task is None:
            return None
        loop = task.get_loop()
        if self._loop is not loop or self._runner is None or self._runner.done():
            self._loop = loop
            self.deadlines.clear()
            self.expired.clear()
            self._runner = loop.create_task(self._run())
        self.deadlines[task] = deadline
        return task

    def unwatch(self, task: asyncio.Task[Any] | None) -> bool:
        """Stops watching; True if the task was cancelled for its deadline."""
        if task is None:
            return False
        self.deadlines.pop(task, None)
        if task in self.expired:
            self.expired.discard(task)
            if hasattr(task, "uncancel"):
                task.uncancel()
            return True
        return False

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.tick)
            now = time.monotonic()
            late = [task for task, deadline in self.deadlines.items() if deadline <= now]
            for task in late:
                del self.deadlines[task]
                self.expired.add(task)
                task.cancel()

    def stop(self) -> None:
        if self._runner is not None:
            self._runner.cancel()
            self._runner = None


# ==================================================================== encoding work


def _special_sets(served: Served, req: EncodeRequest) -> tuple[set[str], set[str]]:
    specials = set(served.tokenizer.special_tokens)
    for key in ("allowed_special", "disallowed_special"):
        value = getattr(req, key)
        if value != "all":
            for name in sorted(value):
                if name not in specials:
                    raise invalid(key, f"{name!r} is not a special token of this vocabulary "
                                       f"(it has {sorted(specials)})")
    allowed = specials if req.allowed_special == "all" else set(req.allowed_special)
    disallowed = (specials - allowed if req.disallowed_special == "all"
                  else set(req.disallowed_special))
    return allowed, disallowed


def encode_texts(served: Served, req: EncodeRequest) -> list[list[int]]:
    """The ids of every text, exactly as `Tokenizer.encode` gives them."""
    tok = served.tokenizer
    texts = req.texts
    if served.special_ids and req.allowed_special == frozenset() and req.disallowed_special == "all":
        # The default: any special token's text is an error; no set building per request.
        specials = served.special_texts
        for i, text in enumerate(texts):
            for token in specials:
                if token in text:
                    _special_in_text(req, i, token)
    elif served.special_ids or req.allowed_special != frozenset() or req.disallowed_special != "all":
        allowed, disallowed = _special_sets(served, req)
        for i, text in enumerate(texts):
            for token in disallowed:
                if token in text:
                    _special_in_text(req, i, token)
        if allowed:
            return [tok.encode(t, allowed_special=allowed, disallowed_special=()) for t in texts]
    if len(texts) == 1:
        return [tok.encode_ordinary(texts[0])]
    return tok.encode_batch(texts) if texts else []


def encode_answer(served: Served, req: EncodeRequest) -> tuple[list[list[int]], dict[str, Any]]:
    """The ids, and the pieces and offsets when asked for (all the per-token work, so that
    a large request does all of it in the thread pool)."""
    ids = encode_texts(served, req)
    extra: dict[str, Any] = {}
    if req.return_pieces or req.return_offsets:
        both = [pieces_and_offsets(served, x) for x in ids]
        if req.return_pieces:
            extra["pieces"] = both[0][0] if req.single else [p for p, _ in both]
        if req.return_offsets:
            extra["offsets"] = both[0][1] if req.single else [o for _, o in both]
    return ids, extra


def _special_in_text(req: EncodeRequest, i: int, token: str) -> None:
    field = "text" if req.single else f"texts[{i}]"
    raise invalid(field, f"contains the special token {token!r}; pass \"allowed_special\": "
                         f"[{token!r}] (or \"all\") to encode it as that token, or "
                         "\"disallowed_special\": [] to encode it as ordinary text")


def pieces_and_offsets(served: Served, ids: list[int]) -> tuple[list[Any], list[list[int]]]:
    """Each token's text (or {"hex": ...} where its bytes are not valid UTF-8) and its
    [start, end) byte offsets in the text's UTF-8."""
    table = served.token_bytes_table()
    pieces: list[Any] = []
    offsets: list[list[int]] = []
    at = 0
    for token in ids:
        data = table[token] or b""
        try:
            pieces.append(data.decode("utf-8"))
        except UnicodeDecodeError:
            pieces.append({"hex": data.hex()})
        offsets.append([at, at + len(data)])
        at += len(data)
    return pieces, offsets


def check_ids(served: Served, req: DecodeRequest) -> None:
    for i, tokens in enumerate(req.lists):
        for j, token in enumerate(tokens):
            if type(token) is not int or not served.is_valid_id(token):
                field = f"ids[{j}]" if req.single else f"ids[{i}][{j}]"
                if type(token) is not int:
                    raise invalid(field, f"must be an integer token id, not {token!r}")
                raise ApiError(
                    400, "unknown_id",
                    f"{field}: {token} is not a token id of this vocabulary (ids are "
                    f"0..{served.valid_end - 1}" + (f" except {len(served.gaps)} unused ids"
                                                    if served.gaps else "") + ")",
                    field, {VERSION_HEADER: served.name})


def decode_lists(served: Served, req: DecodeRequest) -> list[str]:
    check_ids(served, req)
    tok = served.tokenizer
    out: list[str] = []
    for i, tokens in enumerate(req.lists):
        data = tok.decode_bytes(tokens)
        try:
            out.append(data.decode("utf-8"))
        except UnicodeDecodeError as e:
            if req.errors == "strict":
                field = "ids" if req.single else f"ids[{i}]"
                raise ApiError(
                    400, "invalid_utf8",
                    f"{field}: the tokens decode to bytes that are not valid UTF-8 (at byte "
                    f"{e.start}); pass \"errors\": \"replace\" or \"ignore\"", field,
                    {VERSION_HEADER: served.name}) from None
            out.append(tok.decode(tokens, errors=req.errors))  # type: ignore[arg-type]
    return out


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

        return _AsgiEndpoint(asgi)

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


class ServiceApp:
    """The ASGI app: the encoding routes are dispatched by one dict lookup; everything
    else (other routes, 404/405, lifespan) goes through Starlette."""

    def __init__(self, starlette: Starlette, hot: dict[tuple[str, str], Any]) -> None:
        self.starlette = starlette
        self.state = starlette.state
        self.routes = starlette.routes
        self._hot = hot

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            path = scope["path"]
            root = scope.get("root_path")
            if root and path.startswith(root):
                path = path[len(root):]
            endpoint = self._hot.get((scope["method"], path))
            if endpoint is not None:
                await endpoint(scope, receive, send)
                return
        await self.starlette(scope, receive, send)


class _AsgiEndpoint:
    """Marks a coroutine function as an ASGI app for Starlette's Route (which would
    otherwise wrap a plain function as a request -> response endpoint)."""

    __slots__ = ("app",)

    def __init__(self, app: Callable[[Any, Any, Any], Awaitable[None]]) -> None:
        self.app = app

    def __call__(self, scope: Any, receive: Any, send: Any) -> Awaitable[None]:
        return self.app(scope, receive, send)


def _touch(path: str) -> None:
    """Changes `path` (every worker's poller watches it) by replacing it atomically."""
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        f.write(f"{time.time_ns()} {os.getpid()}\n")
    os.replace(tmp, path)


def app_from_env() -> Starlette:
    """The factory `bytebpe serve` gives the server (settings from the environment)."""
    from bytebpe.observe import configure_logging

    configure_logging()
    return create_app(ServeConfig.from_env())
