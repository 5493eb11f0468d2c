"""A bare ASGI app for serve_bench.py's reference row: the same encode as
`POST /v1/tokenize {"text": ...}`, with no validation, metrics, versions or reloads. The
gap between it and `bytebpe serve` under the same server is what the service's features
cost per request; the gap between it and in-process encoding is the server's own cost."""

from __future__ import annotations

import os

import orjson
from bytebpe import Tokenizer

_tok = Tokenizer.load(os.environ["BYTEBPE_BENCH_TOKENIZER"])
_HEADERS = [(b"content-type", b"application/json")]


async def app(scope, receive, send):  # type: ignore[no-untyped-def]
    if scope["type"] != "http":
        return
    body = b""
    more = True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    request = orjson.loads(body)
    if "text" in request:
        ids = _tok.encode_ordinary(request["text"])
    else:
        ids = _tok.encode_batch(request["texts"])
    await send({"type": "http.response.start", "status": 200, "headers": _HEADERS})
    await send({"type": "http.response.body", "body": orjson.dumps({"ids": ids})})
