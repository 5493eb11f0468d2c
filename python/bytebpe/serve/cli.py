"""`bytebpe serve PATH`: the command line of the service (parser and handler).

`bytebpe.cli` only calls `add_parser(subcommands)`; everything else is here.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile

SERVERS = ("granian", "uvicorn")
DEFAULT_SERVER = "granian"
TOKEN_ENV = "BYTEBPE_ADMIN_TOKEN"


def add_parser(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    p = commands.add_parser(
        "serve",
        help="serve a tokenizer over HTTP (JSON), reloading it when it changes",
        description="Serve PATH (a run store, also while training writes it; a bytebpe "
                    "tokenizer file; a .tiktoken file; a tokenizer.json) over HTTP. Needs "
                    "`pip install 'bytebpe[serve]'`.",
    )
    p.add_argument("path", help="the tokenizer or run store to serve")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to bind (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--workers", type=int, default=1, help="worker processes")
    p.add_argument("--server", choices=SERVERS, default=DEFAULT_SERVER,
                   help=f"the HTTP server (default {DEFAULT_SERVER}; see benches/RESULTS.md)")
    p.add_argument("--kind", choices=("store", "bytebpe", "tiktoken", "huggingface"),
                   default=None, help="how to read PATH (default: detected)")
    p.add_argument("--admin-token-file", default=None,
                   help=f"file holding the bearer token of /v1/admin/* (or set ${TOKEN_ENV}); "
                        "without a token the admin endpoints are off")
    p.add_argument("--poll-interval", type=float, default=0.1,
                   help="seconds between checks of PATH for changes (0: admin reloads only)")
    p.add_argument("--timeout", type=float, default=30.0, help="seconds per request (then 408)")
    p.add_argument("--max-body-bytes", type=int, default=16 * 1024 * 1024)
    p.add_argument("--max-batch", type=int, default=1024,
                   help="texts or id lists per request")
    p.add_argument("--max-text-bytes", type=int, default=4 * 1024 * 1024)
    p.add_argument("--max-ids", type=int, default=4 * 1024 * 1024)
    p.add_argument("--inline-bytes", type=int, default=8192,
                   help="requests with more text than this are encoded in the thread pool")
    p.add_argument("--threads", type=int, default=0,
                   help="thread-pool size per worker (default: 2 x CPUs)")
    p.add_argument("--keep-versions", type=int, default=8,
                   help="earlier vocabularies kept in memory for version pinning")
    p.add_argument("--access-log-sample", type=float, default=0.0,
                   help="fraction of requests to log (default 0)")
    p.add_argument("--log-level", default="info")
    p.set_defaults(run=run)
    return p


def _admin_token(args: argparse.Namespace) -> str | None:
    if args.admin_token_file:
        with open(args.admin_token_file, encoding="utf-8") as f:
            return f.read().strip() or None
    return os.environ.get(TOKEN_ENV) or None


def run(args: argparse.Namespace) -> int:
    try:
        import importlib

        for module in ("starlette", "orjson", args.server):  # fail before loading anything
            importlib.import_module(module)

        from bytebpe.observe import configure_logging, get_logger
        from bytebpe.serve.config import ServeConfig
        from bytebpe.serve.holder import load_verified
    except ImportError as e:
        print(f"bytebpe serve: {e}; install with: pip install 'bytebpe[serve]'", file=sys.stderr)
        return 1
    if args.workers < 1:
        raise ValueError(f"--workers must be at least 1, not {args.workers}")
    configure_logging(level=args.log_level)
    log = get_logger("bytebpe.serve")
    state_dir = tempfile.mkdtemp(prefix="bytebpe-serve-")
    config = ServeConfig(
        path=os.path.abspath(args.path), kind=args.kind, admin_token=_admin_token(args),
        poll_interval=args.poll_interval, keep_versions=args.keep_versions,
        max_body_bytes=args.max_body_bytes, max_batch=args.max_batch,
        max_text_bytes=args.max_text_bytes, max_ids=args.max_ids, timeout=args.timeout,
        inline_bytes=args.inline_bytes, threads=args.threads,
        access_log_sample=args.access_log_sample,
        trigger_file=os.path.join(state_dir, "reload"),
    )
    try:
        config.check()
        served = load_verified(config.path, config.kind)  # fail here, clearly, not in a worker
        os.environ["BYTEBPE_SERVE_CONFIG"] = config.to_env()
        if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
            metrics_dir = os.path.join(state_dir, "metrics")
            os.mkdir(metrics_dir)
            os.environ["PROMETHEUS_MULTIPROC_DIR"] = metrics_dir
        log.info("serve.listen", host=args.host, port=args.port, workers=args.workers,
                 server=args.server, path=config.path, version=served.name)
        serve(args.server, args.host, args.port, args.workers, args.log_level)
    finally:
        shutil.rmtree(state_dir, ignore_errors=True)
    return 0


def serve(server: str, host: str, port: int, workers: int, log_level: str = "info") -> None:
    """Runs the app from the environment's settings under `server` until stopped."""
    target = "bytebpe.serve.app:app_from_env"
    if server == "granian":
        from granian import Granian
        from granian.constants import Interfaces

        # Granian's own records go to the root logger, which configure_logging set up.
        routed = {"_granian": {"handlers": [], "propagate": True},
                  "granian.access": {"handlers": [], "propagate": True}}
        Granian(target, address=host, port=port, workers=workers, interface=Interfaces.ASGI,
                factory=True, log_access=False, log_level=log_level,  # type: ignore[arg-type]
                log_dictconfig={"loggers": routed}, respawn_failed_workers=True).serve()
    elif server == "uvicorn":
        try:
            import uvicorn
        except ImportError:
            raise ImportError("--server uvicorn needs: pip install 'uvicorn[standard]'") from None

        uvicorn.run(target, factory=True, host=host, port=port, workers=workers,
                    loop="uvloop", http="httptools", access_log=False, log_config=None,
                    log_level=log_level, lifespan="on")
    else:
        raise ValueError(f"server={server!r}; choose one of {', '.join(SERVERS)}")
