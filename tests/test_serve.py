"""The HTTP service: endpoints against the library, every bad input, admin auth, metrics.

Servers are real `bytebpe serve` subprocesses on 127.0.0.1 (tests/serve_helpers.py).
Reloads under load are in test_serve_reload.py.
"""

from __future__ import annotations

import json
import socket
import time

import httpx
import pytest

pytest.importorskip("starlette")
pytest.importorskip("granian")

from bytebpe import Tokenizer
from bytebpe.serve import metrics as serve_metrics
from bytebpe.serve.version import prefix_version, vocabulary_version
from serve_helpers import HOST, Server, corpus, sample_value, scrape, texts, worker_pids

SPECIAL = "<|endoftext|>"
TOKEN = "s3cret-admin-token-0123456789"


@pytest.fixture(scope="module")
def tok() -> Tokenizer:
    return Tokenizer.train_from_iterator(corpus(400), vocab_size=600, special_tokens=[SPECIAL],
                                         progress=False)


@pytest.fixture(scope="module")
def tok_path(tmp_path_factory: pytest.TempPathFactory, tok: Tokenizer) -> str:
    path = tmp_path_factory.mktemp("serve") / "tok.json"
    tok.save(path)
    return str(path)


@pytest.fixture(scope="module")
def server(tok_path: str, tmp_path_factory: pytest.TempPathFactory) -> Server:
    token_file = tmp_path_factory.mktemp("admin") / "token"
    token_file.write_text(TOKEN + "\n")
    with Server(tok_path, "--admin-token-file", str(token_file), "--timeout", "1",
                "--max-batch", "64", "--max-text-bytes", "100000", "--max-body-bytes", "1000000",
                "--max-ids", "50000") as s:
        yield s


# ==================================================================== answers equal the library's


def test_tokenize_one_and_many_equal_the_library(server: Server, tok: Tokenizer) -> None:
    version = vocabulary_version(tok).name
    with server.client() as c:
        for text in texts(30):
            r = c.post("/v1/tokenize", json={"text": text})
            assert r.status_code == 200, r.text
            body = r.json()
            assert body == {"ids": tok.encode(text), "version": version,
                            "vocab_size": tok.vocab_size}
            assert r.headers["x-bytebpe-vocab-version"] == version
        batch = texts(64, seed=7)[:64]
        r = c.post("/v1/tokenize", json={"texts": batch})
        assert r.status_code == 200, r.text
        assert r.json()["ids"] == [tok.encode(t) for t in batch]
        assert c.post("/v1/tokenize", json={"texts": []}).json()["ids"] == []
        r = c.post("/v1/count", json={"texts": batch})
        assert r.json()["counts"] == [len(tok.encode(t)) for t in batch]
        assert r.json()["total"] == sum(len(tok.encode(t)) for t in batch)
        assert c.post("/v1/count", json={"text": batch[0]}).json()["count"] == len(
            tok.encode(batch[0]))


def test_large_requests_go_through_the_thread_pool_with_the_same_ids(
        server: Server, tok: Tokenizer) -> None:
    big = " ".join(corpus(2000, seed=3))
    one, two = big[:40000], big[1000:21000]
    assert 8192 < len(two.encode()) < len(one.encode()) < 100000  # above the inline limit
    with server.client() as c:
        r = c.post("/v1/tokenize", json={"texts": [one, two]})
        assert r.status_code == 200, r.text
        assert r.json()["ids"] == [tok.encode(one), tok.encode(two)]
        r = c.post("/v1/tokenize", json={"text": one})
        assert r.json()["ids"] == tok.encode(one)


def test_special_tokens_follow_the_library(server: Server, tok: Tokenizer) -> None:
    text = f"hello{SPECIAL} world"
    with server.client() as c:
        r = c.post("/v1/tokenize", json={"text": text, "allowed_special": "all"})
        assert r.json()["ids"] == tok.encode(text, allowed_special="all")
        assert tok.special_tokens[SPECIAL] in r.json()["ids"]
        r = c.post("/v1/tokenize", json={"text": text, "allowed_special": [SPECIAL]})
        assert r.json()["ids"] == tok.encode(text, allowed_special={SPECIAL})
        r = c.post("/v1/tokenize", json={"text": text, "disallowed_special": []})
        assert r.json()["ids"] == tok.encode(text, disallowed_special=())
        batch = [text, "ok", text * 3, ""]
        r = c.post("/v1/tokenize", json={"texts": batch, "allowed_special": [SPECIAL]})
        assert r.json()["ids"] == [tok.encode(t, allowed_special={SPECIAL}) for t in batch]
        r = c.post("/v1/tokenize", json={"texts": ["ok", text]})
        assert r.status_code == 400 and r.json()["error"]["field"] == "texts[1]"
        assert SPECIAL in r.json()["error"]["message"]
        r = c.post("/v1/tokenize", json={"text": "x", "allowed_special": ["<|nope|>"]})
        assert r.status_code == 400 and r.json()["error"]["field"] == "allowed_special"


@pytest.mark.parametrize("field", ["allowed_special", "disallowed_special"])
@pytest.mark.parametrize("value", ["ALL", "none", SPECIAL, [SPECIAL, 5], ["x", None], 5, True])
def test_special_fields_follow_the_library_rules(server: Server, tok: Tokenizer, field: str,
                                                 value: object) -> None:
    # The service parses these with the library's own rule: same refusal, same words.
    python_value = tuple(value) if isinstance(value, list) else value
    with pytest.raises((TypeError, ValueError)) as refused:
        tok.encode("x", **{field: python_value})  # type: ignore[arg-type]
    with server.client() as c:
        r = c.post("/v1/tokenize", json={"text": "x", field: value})
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert error["code"] == "invalid_field"
    assert error["message"] == str(refused.value)
    assert error["field"] == (f"{field}[1]" if isinstance(value, list) else field)


def test_pieces_and_offsets(server: Server, tok: Tokenizer) -> None:
    text = "café 東京 🙂 naïve"
    with server.client() as c:
        r = c.post("/v1/tokenize", json={"text": text, "return_pieces": True,
                                         "return_offsets": True})
        body = r.json()
    ids = tok.encode(text)
    assert body["ids"] == ids
    data = text.encode()
    pieces = b""
    for token, piece, (start, end) in zip(ids, body["pieces"], body["offsets"]):
        raw = bytes.fromhex(piece["hex"]) if isinstance(piece, dict) else piece.encode()
        assert raw == tok.token_bytes(token) == data[start:end]
        if isinstance(piece, dict):  # hex only where the bytes are not valid UTF-8
            with pytest.raises(UnicodeDecodeError):
                raw.decode()
        pieces += raw
    assert pieces == data
    assert body["offsets"][-1][1] == len(data)


def test_detokenize(server: Server, tok: Tokenizer) -> None:
    with server.client() as c:
        for text in texts(10):
            ids = tok.encode(text)
            r = c.post("/v1/detokenize", json={"ids": ids})
            assert r.status_code == 200 and r.json()["text"] == text
        lists = [tok.encode(t) for t in texts(5)]
        assert c.post("/v1/detokenize", json={"ids": lists}).json()["texts"] == texts(5)
        assert c.post("/v1/detokenize", json={"ids": []}).json()["text"] == ""
        broken = tok.encode("é")[:1]  # the first byte of a two-byte character
        if len(tok.encode("é")) == 2:
            r = c.post("/v1/detokenize", json={"ids": broken})
            assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_utf8"
            r = c.post("/v1/detokenize", json={"ids": broken, "errors": "replace"})
            assert r.json()["text"] == "\ufffd"
            r = c.post("/v1/detokenize", json={"ids": [broken, [104]], "errors": "ignore"})
            assert r.json()["texts"] == ["", "h"]


def test_vocab_openapi_health(server: Server, tok: Tokenizer, tok_path: str) -> None:
    with server.client() as c:
        v = c.get("/v1/vocab").json()
        version = vocabulary_version(tok)
        assert v["version"] == version.name and v["sha256"] == version.sha256
        assert v["merges"] == version.merges == tok.vocab_size - 256 - 1
        assert v["vocab_size"] == tok.vocab_size and v["pattern"] == tok.pattern
        assert v["special_tokens"] == tok.special_tokens and v["kind"] == "bytebpe"
        assert c.get("/healthz").json() == {"status": "ok"}
        assert c.get("/readyz").json()["version"] == version.name
        spec = c.get("/openapi.json").json()
        assert spec["openapi"].startswith("3.")
        assert {"/v1/tokenize", "/v1/detokenize", "/v1/count", "/v1/vocab"} <= set(spec["paths"])


# ==================================================================== bad input: 4xx naming the field

BAD = [
    # (route, raw body, status, code, field)
    ("/v1/tokenize", b"{", 400, "malformed_json", None),
    ("/v1/tokenize", b"", 400, "invalid_body", None),
    ("/v1/tokenize", b'"text"', 400, "invalid_body", None),
    ("/v1/tokenize", b"[1, 2]", 400, "invalid_body", None),
    ("/v1/tokenize", b'{"text": "\\ud800"}', 400, "malformed_json", None),  # lone surrogate
    ("/v1/tokenize", b"\xff\xfe", 400, "malformed_json", None),
    ("/v1/tokenize", b'{"text": "a", "txt": 1}', 400, "unknown_field", "txt"),
    ("/v1/tokenize", b"{}", 400, "missing_field", "text"),
    ("/v1/tokenize", b'{"text": "a", "texts": ["b"]}', 400, "missing_field", "text"),
    ("/v1/tokenize", b'{"text": 5}', 400, "invalid_field", "text"),
    ("/v1/tokenize", b'{"text": null}', 400, "invalid_field", "text"),
    ("/v1/tokenize", b'{"texts": "abc"}', 400, "invalid_field", "texts"),
    ("/v1/tokenize", b'{"texts": ["a", 3]}', 400, "invalid_field", "texts[1]"),
    ("/v1/tokenize", b'{"text": "a", "allowed_special": "some"}', 400, "invalid_field",
     "allowed_special"),
    ("/v1/tokenize", b'{"text": "a", "allowed_special": [1]}', 400, "invalid_field",
     "allowed_special[0]"),
    ("/v1/tokenize", b'{"text": "a", "disallowed_special": {}}', 400, "invalid_field",
     "disallowed_special"),
    ("/v1/tokenize", b'{"text": "a", "return_pieces": "yes"}', 400, "invalid_field",
     "return_pieces"),
    ("/v1/tokenize", b'{"text": "a", "return_offsets": 1}', 400, "invalid_field",
     "return_offsets"),
    ("/v1/tokenize", b'{"text": "a", "version": 3}', 400, "invalid_field", "version"),
    ("/v1/tokenize", b'{"text": "a", "version": "latest"}', 400, "invalid_field", "version"),
    ("/v1/count", b'{"text": "a", "return_pieces": true}', 400, "unknown_field",
     "return_pieces"),
    ("/v1/detokenize", b"{}", 400, "missing_field", "ids"),
    ("/v1/detokenize", b'{"ids": "1 2"}', 400, "invalid_field", "ids"),
    ("/v1/detokenize", b'{"ids": [1, -1]}', 400, "unknown_id", "ids[1]"),
    ("/v1/detokenize", b'{"ids": [1, 600000]}', 400, "unknown_id", "ids[1]"),
    ("/v1/detokenize", b'{"ids": [1, 18446744073709551615]}', 400, "unknown_id", "ids[1]"),
    ("/v1/detokenize", b'{"ids": [1, 1180591620717411303424]}', 400, "invalid_field", "ids[1]"),
    ("/v1/detokenize", b'{"ids": [1, 2.0]}', 400, "invalid_field", "ids[1]"),
    ("/v1/detokenize", b'{"ids": [true]}', 400, "invalid_field", "ids[0]"),
    ("/v1/detokenize", b'{"ids": [1, "2"]}', 400, "invalid_field", "ids[1]"),
    ("/v1/detokenize", b'{"ids": [1, [2]]}', 400, "invalid_field", "ids[1]"),
    ("/v1/detokenize", b'{"ids": [[1], 2]}', 400, "invalid_field", "ids[1]"),
    ("/v1/detokenize", b'{"ids": [[1], [2, 99999]]}', 400, "unknown_id", "ids[1][1]"),
    ("/v1/detokenize", b'{"ids": [1], "errors": "loud"}', 400, "invalid_field", "errors"),
    ("/v1/detokenize", b'{"ids": [1], "extra": 1}', 400, "unknown_field", "extra"),
    # limits (this server: batch 64, text 100000 bytes, body 1000000, ids 50000)
    ("/v1/tokenize", json.dumps({"texts": ["a"] * 65}).encode(), 413, "too_large", "texts"),
    ("/v1/tokenize", json.dumps({"text": "é" * 50001}).encode(), 413, "too_large", "text"),
    ("/v1/tokenize", json.dumps({"texts": ["a", "b" * 100001]}).encode(), 413, "too_large",
     "texts[1]"),
    ("/v1/tokenize", json.dumps({"text": "a" * 1000001}).encode(), 413, "too_large", None),
    ("/v1/detokenize", json.dumps({"ids": [1] * 50001}).encode(), 413, "too_large", "ids"),
    ("/v1/detokenize", json.dumps({"ids": [[1]] * 65}).encode(), 413, "too_large", "ids"),
]


@pytest.mark.parametrize(("route", "body", "status", "code", "field"), BAD,
                         ids=[f"{i}-{b[1][:30]!r}" for i, b in enumerate(BAD)])
def test_bad_input_is_a_4xx_naming_the_field(server: Server, route: str, body: bytes,
                                             status: int, code: str, field: str | None) -> None:
    with server.client() as c:
        r = c.post(route, content=body, headers={"content-type": "application/json"})
    assert r.status_code == status, r.text
    assert r.headers["x-bytebpe-vocab-version"]  # errors name the version serving too
    error = r.json()["error"]
    assert error["code"] == code and error["field"] == field
    assert error["message"] and (field is None or field in error["message"])


def test_unknown_routes_and_methods_are_json_4xx(server: Server) -> None:
    with server.client() as c:
        r = c.get("/v1/nope")
        assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
        r = c.get("/v1/tokenize")
        assert r.status_code == 405 and r.json()["error"]["code"] == "method_not_allowed"


def test_random_junk_never_gives_a_5xx(server: Server) -> None:
    import random

    rng = random.Random(5)
    pieces = [b"{", b"}", b"[", b"]", b'"text"', b'"texts"', b'"ids"', b":", b",", b"1", b"-1",
              b"null", b"true", b'"a"', b"1e999", b"\xff", b'"\\u0000"', b'"version"',
              b'"errors"', b'"allowed_special"', b'"all"', b"99999999999999999999"]
    with server.client() as c:
        for _ in range(300):  # bounded
            body = b"".join(rng.choices(pieces, k=rng.randint(0, 12)))
            route = rng.choice(["/v1/tokenize", "/v1/detokenize", "/v1/count"])
            r = c.post(route, content=body)
            assert 200 <= r.status_code < 500, (body, r.text)
            assert "error" in r.json() or r.status_code == 200
        assert c.get("/healthz").status_code == 200


def test_a_slow_body_times_out_with_408(server: Server) -> None:
    # Headers promise 100 bytes, 10 arrive: the server gives up after its timeout (1 s).
    with socket.create_connection((HOST, server.port), timeout=10) as s:
        s.sendall(b"POST /v1/tokenize HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 100\r\n\r\n{\"text\": \"")
        start = time.monotonic()
        data = b""
        while b"\r\n\r\n" not in data or not data.rstrip().endswith(b"}"):
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        elapsed = time.monotonic() - start
    assert data.startswith(b"HTTP/1.1 408"), data
    assert b'"timeout"' in data
    assert 0.5 < elapsed < 8


def test_work_past_the_timeout_is_408(tok_path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # In process (deterministic): encoding that takes longer than the timeout.
    import anyio
    from bytebpe.serve import app as app_module
    from bytebpe.serve import work

    def slow(served, req):  # type: ignore[no-untyped-def]
        time.sleep(1.0)
        return [[] for _ in req.texts]

    monkeypatch.setattr(work, "encode_texts", slow)
    app = app_module.create_app(tok_path, timeout=0.2, inline_bytes=0, poll_interval=0)

    async def main() -> httpx.Response:
        app.state.service.startup()
        try:
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://test") as c:
                return await c.post("/v1/tokenize", json={"text": "hello"})
        finally:
            app.state.service.shutdown()

    start = time.monotonic()
    r = anyio.run(main)
    assert r.status_code == 408 and r.json()["error"]["code"] == "timeout"
    assert time.monotonic() - start < 0.9


# ==================================================================== admin


def test_admin_reload_needs_the_token(server: Server) -> None:
    with server.client() as c:
        r = c.post("/v1/admin/reload")
        assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
        r = c.post("/v1/admin/reload", headers={"authorization": "Bearer wrong-token-000000000"})
        assert r.status_code == 403 and r.json()["error"]["field"] == "authorization"
        r = c.post("/v1/admin/reload", headers={"authorization": "Basic " + TOKEN})
        assert r.status_code == 401
        r = c.post("/v1/admin/reload", headers={"authorization": "Bearer " + TOKEN})
        assert r.status_code == 200 and r.json()["result"] == "unchanged"
        r = c.post("/v1/admin/reload", headers={"authorization": "Bearer " + TOKEN},
                   json={"force": True})
        assert r.status_code == 400 and r.json()["error"]["field"] == "force"


def test_admin_is_off_without_a_token_and_binds_loopback(tok_path: str) -> None:
    with Server(tok_path) as s, s.client() as c:
        r = c.post("/v1/admin/reload", headers={"authorization": "Bearer " + TOKEN})
        assert r.status_code == 404 and r.json()["error"]["code"] == "admin_disabled"
    # The default address is 127.0.0.1 (the test servers pass it explicitly).
    import argparse

    from bytebpe.serve.cli import add_parser

    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers())
    assert parser.parse_args(["serve", "x"]).host == "127.0.0.1"


def test_admin_reload_swaps_and_a_failed_reload_keeps_serving(
        tmp_path: pytest.TempPathFactory, tok: Tokenizer) -> None:
    path = tmp_path / "t.json"
    tok.save(path)
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    auth = {"authorization": "Bearer " + TOKEN}
    other = Tokenizer.train_from_iterator(corpus(300, seed=9), vocab_size=500, progress=False)
    with Server(str(path), "--admin-token-file", str(token_file), "--poll-interval", "0") as s, \
            s.client() as c:
        old = vocabulary_version(tok).name
        other.save(tmp_path / "new.json")
        (tmp_path / "new.json").replace(path)
        r = c.post("/v1/admin/reload", headers=auth)
        assert r.status_code == 200 and r.json()["result"] == "success", r.text
        assert r.json()["version"] == vocabulary_version(other).name
        assert r.json()["previous"] == old
        assert c.post("/v1/tokenize", json={"text": "the data"}).json()["ids"] == other.encode(
            "the data")
        path.write_bytes(b'{"format": "bytebpe-tokenizer", "version": 1, "tokens": [')
        r = c.post("/v1/admin/reload", headers=auth)
        assert r.status_code == 409 and r.json()["result"] == "failure" and r.json()["error"]
        r = c.post("/v1/tokenize", json={"text": "the data"})
        assert r.status_code == 200 and r.json()["version"] == vocabulary_version(other).name
        samples = scrape(s.url)
        assert sample_value(samples, "bytebpe_reloads_total", result="failure") == 1
        assert sample_value(samples, "bytebpe_reloads_total", result="success") == 1
    assert b"serve.reload" in s.log and b'"failure"' in s.log


def test_an_admin_reload_reaches_every_worker(tmp_path, tok: Tokenizer) -> None:
    path = tmp_path / "t.json"
    tok.save(path)
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    other = Tokenizer.train_from_iterator(corpus(300, seed=9), vocab_size=500, progress=False)
    want = vocabulary_version(other)
    # No polling of the file: only the admin call reloads, in both workers.
    with Server(str(path), "--workers", "2", "--poll-interval", "0",
                "--admin-token-file", str(token_file)) as s:
        other.save(tmp_path / "new.json")
        (tmp_path / "new.json").replace(path)
        time.sleep(0.5)
        assert httpx.get(s.url + "/v1/vocab").json()["version"] == vocabulary_version(tok).name
        r = httpx.post(s.url + "/v1/admin/reload", headers={"authorization": "Bearer " + TOKEN})
        assert r.status_code == 200 and r.json()["version"] == want.name
        deadline = time.monotonic() + 10
        merges: set[float] = set()
        while time.monotonic() < deadline:
            samples = scrape(s.url)
            merges = {v for (name, _), v in samples.items() if name == "bytebpe_vocab_merges"}
            if merges == {want.merges}:
                break
            time.sleep(0.1)
        assert merges == {want.merges}, merges  # every worker serves the new vocabulary
        for _ in range(20):  # new connections, spread over the workers
            r = httpx.post(s.url + "/v1/tokenize", json={"text": "the data"})
            assert r.json()["version"] == want.name


# ==================================================================== version pinning


def test_pinning_a_version_of_a_file(server: Server, tok: Tokenizer) -> None:
    version = vocabulary_version(tok).name
    earlier = prefix_version(tok, 10).name
    with server.client() as c:
        r = c.post("/v1/tokenize", json={"text": "the data", "version": version})
        assert r.status_code == 200 and r.json()["version"] == version
        r = c.post("/v1/tokenize", json={"text": "the data", "version": earlier})
        assert r.status_code == 409 and r.json()["error"]["field"] == "version"
        assert "only a run store" in r.json()["error"]["message"]
        r = c.post("/v1/detokenize", json={"ids": [1], "version": "5-0123456789abcdef"})
        assert r.status_code == 409 and "not a prefix" in r.json()["error"]["message"]
        r = c.post("/v1/tokenize", json={"text": "a", "version": "99999-0123456789abcdef"})
        assert r.status_code == 409
        assert r.headers["x-bytebpe-vocab-version"] == version


# ==================================================================== metrics


def test_metrics_count_requests_bytes_and_tokens(tok_path: str, tok: Tokenizer) -> None:
    with Server(tok_path) as s, s.client() as c:
        sent = texts(20)
        for text in sent:
            assert c.post("/v1/tokenize", json={"text": text}).status_code == 200
        assert c.post("/v1/tokenize", content=b"{").status_code == 400
        assert c.post("/v1/detokenize", json={"ids": [104, 105]}).status_code == 200
        samples = scrape(s.url)
    assert sample_value(samples, "bytebpe_http_requests_total", route="tokenize",
                        status="200", method="POST") == len(sent)
    assert sample_value(samples, "bytebpe_http_requests_total", route="tokenize",
                        status="400") == 1
    assert sample_value(samples, "bytebpe_http_request_duration_seconds_count",
                        route="tokenize") == len(sent) + 1
    assert sample_value(samples, "bytebpe_input_bytes_total", route="tokenize") == sum(
        len(t.encode()) for t in sent)
    assert sample_value(samples, "bytebpe_output_tokens_total", route="tokenize") == sum(
        len(tok.encode(t)) for t in sent)
    assert sample_value(samples, "bytebpe_decoded_tokens_total") == 2
    assert sample_value(samples, "bytebpe_decoded_bytes_total") == 2
    version = vocabulary_version(tok)
    assert sample_value(samples, "bytebpe_vocab_version_info", version=version.name) == 1
    assert sample_value(samples, "bytebpe_vocab_merges") == version.merges
    assert sample_value(samples, "bytebpe_http_requests_in_flight") == 1  # the scrape itself
    names = {name for name, _ in samples}
    for family in serve_metrics.EXPORTED:
        assert any(n == family or n.startswith(family + "_") for n in names), family


@pytest.mark.parametrize("server_name", ["granian", "uvicorn"])
def test_two_workers_sum_their_metrics(tok_path: str, tok: Tokenizer, server_name: str) -> None:
    pytest.importorskip(server_name)
    n = 60
    with Server(tok_path, "--workers", "2", "--server", server_name) as s:
        for _ in range(n):  # a new connection each time, so both workers get some
            r = httpx.post(s.url + "/v1/tokenize", json={"text": "the data and"}, timeout=10)
            assert r.json()["ids"] == tok.encode("the data and")
        samples = scrape(s.url)  # Server waited for both workers to publish theirs
        pids = worker_pids(samples)
    assert len(pids) == 2, "both workers publish their vocabulary"
    assert sample_value(samples, "bytebpe_http_requests_total", route="tokenize") == n
    assert sample_value(samples, "bytebpe_input_bytes_total", route="tokenize") == n * 12


def test_the_dashboard_queries_only_exported_metrics(tok_path: str) -> None:
    import pathlib
    import re

    from bytebpe.observe import TRAINING_METRICS, TrainingMetrics

    path = pathlib.Path(__file__).parent.parent / "dashboards" / "bytebpe.json"
    dashboard = json.loads(path.read_text())
    exprs = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("expr"), str):
                exprs.append(node["expr"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(dashboard)
    assert len(exprs) >= 10
    used = {re.sub(r"_(bucket|sum|count)$", "", name)
            for e in exprs for name in re.findall(r"\bbytebpe_[a-z0-9_]+", e)}
    assert used, "the dashboard queries bytebpe metrics"
    # Names the running code actually exports: a live service and a TrainingMetrics.
    from prometheus_client import generate_latest
    from prometheus_client.parser import text_string_to_metric_families

    with Server(tok_path) as s:
        served = {name for name, _ in scrape(s.url)}
    with TrainingMetrics() as m:
        m.ledger({"invalid_utf8_bytes": {"truncated": 1}, "rejected_items": {"int": 2}})
        training = {smp.name for f in text_string_to_metric_families(
            generate_latest(m.registry).decode()) for smp in f.samples}
    live = {re.sub(r"_(bucket|sum|count)$", "", n) for n in served | training}
    assert used <= live, used - live
    assert used <= set(serve_metrics.EXPORTED) | set(TRAINING_METRICS) | {
        n.removesuffix("_total") + "_total" for n in TRAINING_METRICS}
    for panel_group in ("bytebpe_training_", "bytebpe_http_"):
        assert any(u.startswith(panel_group) for u in used)


def test_the_command_line_refuses_a_bad_path_clearly(tmp_path) -> None:
    import subprocess
    import sys

    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "something else"}')
    for path, words in [(str(tmp_path / "missing.json"), "missing.json"),
                        (str(bad), "bad.json")]:
        r = subprocess.run([sys.executable, "-m", "bytebpe.cli", "serve", path, "--port", "1"],
                           capture_output=True, timeout=60)
        assert r.returncode == 1
        assert b"bytebpe serve: error:" in r.stderr and words.encode() in r.stderr


def test_create_app_mounts_in_another_asgi_app(tok_path: str, tok: Tokenizer) -> None:
    import anyio
    from bytebpe.serve import create_app
    from starlette.applications import Starlette
    from starlette.routing import Mount

    outer = Starlette(routes=[Mount("/tok", app=create_app(tok_path, poll_interval=0))])

    async def main() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=outer)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as c:
            return [await c.post("/tok/v1/tokenize", json={"text": "the data"}),
                    await c.get("/tok/v1/vocab"),
                    await c.post("/tok/v1/tokenize", content=b"{")]

    tokenized, vocab, bad = anyio.run(main)
    assert tokenized.json()["ids"] == tok.encode("the data")
    assert vocab.json()["version"] == vocabulary_version(tok).name
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "malformed_json"
