"""Hot reload under load: zero failed requests, and every response's ids equal the
library's for the version that response names.

A training run adds merges to the run store being served (in a subprocess, one call per
growing vocab_size), and a tokenizer file is replaced atomically (once with a corrupt
file), while client threads send requests. Loops are bounded in count and time; every
process started is stopped.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("starlette")
pytest.importorskip("granian")

from bytebpe import Tokenizer
from bytebpe.serve.version import vocabulary_version
from serve_helpers import Server, corpus, sample_value, scrape, texts

TESTS = os.path.dirname(os.path.abspath(__file__))

TRAIN = """
import json, sys, time, warnings
sys.path.insert(0, {tests!r})
from serve_helpers import corpus
from bytebpe import Tokenizer
store, sizes, pause = sys.argv[1], json.loads(sys.argv[2]), float(sys.argv[3])
docs = corpus(3000)
warnings.simplefilter("ignore")
for size in sizes:
    Tokenizer.train_from_iterator(docs, vocab_size=size, store=store, progress=False,
                                  special_tokens=["<|endoftext|>"])
    print(size, time.time(), flush=True)
    time.sleep(pause)
"""


def train(store: str, sizes: list[int], pause: float) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", TRAIN.format(tests=TESTS), store,
                             json.dumps(sizes), str(pause)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


@dataclass
class Load:
    """Client threads hammering a server until `stop` (bounded by count and time)."""

    url: str
    threads: int = 4
    max_requests: int = 3000
    max_seconds: float = 40.0
    pin: bool = False
    stop: threading.Event = field(default_factory=threading.Event)
    results: list[tuple[str, list[str], Any, str, int]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    versions_seen: list[str] = field(default_factory=list)

    def run(self, body: Callable[[], None]) -> None:
        workers = [threading.Thread(target=self._client, args=(i,)) for i in range(self.threads)]
        for w in workers:
            w.start()
        try:
            body()
        finally:
            self.stop.set()
            for w in workers:
                w.join(timeout=self.max_seconds + 30)

    def _client(self, seed: int) -> None:
        import random

        rng = random.Random(seed)
        pool = texts(200, seed=seed)
        deadline = time.monotonic() + self.max_seconds
        with httpx.Client(base_url=self.url, timeout=10.0) as c:
            for _ in range(self.max_requests):
                if self.stop.is_set() or time.monotonic() > deadline:
                    return
                kind = rng.random()
                request: dict[str, Any]
                if kind < 0.5:
                    batch = [rng.choice(pool)]
                    request = {"text": batch[0]}
                else:
                    batch = rng.sample(pool, 8)
                    request = {"texts": batch}
                if self.pin and kind > 0.8 and self.versions_seen:
                    request["version"] = rng.choice(self.versions_seen)
                try:
                    r = c.post("/v1/tokenize", json=request)
                except httpx.HTTPError as e:
                    self.failures.append(f"{type(e).__name__}: {e}")
                    continue
                if r.status_code != 200:
                    self.failures.append(f"{r.status_code}: {r.text[:300]}")
                    continue
                body = r.json()
                if r.headers.get("x-bytebpe-vocab-version") != body["version"]:
                    self.failures.append(f"header {r.headers} != body {body['version']}")
                if "version" in request and body["version"] != request["version"]:
                    self.failures.append(f"pinned {request['version']}, got {body['version']}")
                ids = [body["ids"]] if "text" in request else body["ids"]
                self.results.append((str(request.get("version")), batch, ids, body["version"],
                                     body["vocab_size"]))
                if body["version"] not in self.versions_seen:
                    self.versions_seen.append(body["version"])


def check_results(load: Load, tokenizer_for: Callable[[str, int], Tokenizer]) -> dict[str, int]:
    """Every response's ids equal the library's for its version; returns responses per version."""
    assert load.failures == [], load.failures[:5]
    by_version: dict[str, int] = {}
    tokenizers: dict[str, Tokenizer] = {}
    for _, batch, ids, version, vocab_size in load.results:
        if version not in tokenizers:
            tok = tokenizer_for(version, vocab_size)
            assert vocabulary_version(tok).name == version
            assert tok.vocab_size == vocab_size
            tokenizers[version] = tok
        tok = tokenizers[version]
        assert ids == [tok.encode(t) for t in batch], version
        by_version[version] = by_version.get(version, 0) + 1
    return by_version


@pytest.mark.parametrize("workers", [1, 2])
def test_a_growing_run_store_is_served_without_a_failed_request(tmp_path: Path,
                                                                 workers: int) -> None:
    growing_store(tmp_path, workers, list(range(400, 1601, 150)), 0.3, Load)


@pytest.mark.slow
def test_soak_a_growing_store_with_many_clients(tmp_path: Path) -> None:
    """About a minute: 8 clients, 2 workers, 40 commits (`make test-slow`)."""
    growing_store(tmp_path, 2, list(range(400, 4401, 100)), 1.0,
                  lambda url, pin: Load(url, threads=8, max_requests=20000, max_seconds=90,
                                        pin=pin))


def growing_store(tmp_path: Path, workers: int, sizes: list[int], pause: float,
                  make_load: Callable[..., Load]) -> None:
    store = str(tmp_path / "run.sqlite")
    first = train(store, [300], 0)
    _, err = first.communicate(timeout=120)
    assert first.returncode == 0, err.decode()
    with Server(store, "--workers", str(workers)) as server:
        load = make_load(server.url, pin=True)
        trainer = train(store, sizes, pause)
        outputs: list[bytes] = []

        def while_training() -> None:
            try:
                outputs.extend(trainer.communicate(timeout=300))
            finally:
                if trainer.poll() is None:
                    trainer.kill()
                    trainer.communicate()
            time.sleep(0.5)

        load.run(while_training)
        assert trainer.returncode == 0, outputs
        final = vocabulary_version(Tokenizer.load(store))
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            if httpx.get(server.url + "/v1/vocab", timeout=5).json()["version"] == final.name:
                break
            time.sleep(0.05)
        assert httpx.get(server.url + "/v1/vocab", timeout=5).json()["version"] == final.name
        samples = scrape(server.url)
    # Each version's tokenizer is the store's prefix: Tokenizer.load(store, vocab_size=N).
    by_version = check_results(load, lambda v, n: Tokenizer.load(store, vocab_size=n))
    assert len(by_version) >= 4, by_version  # reloads happened under load
    assert len(load.results) >= 100
    pinned_earlier = [r for r in load.results if r[0] != "None"]
    assert pinned_earlier, "some requests pinned a version seen earlier"
    assert sample_value(samples, "bytebpe_reloads_total", result="success") >= 4
    assert sample_value(samples, "bytebpe_reloads_total", result="failure") == 0
    assert sample_value(samples, "bytebpe_pinned_requests_total", outcome="earlier") >= 1
    assert sample_value(samples, "bytebpe_http_requests_total", route="tokenize",
                        status="200") == len(load.results)


def test_a_file_replaced_atomically_is_served_without_a_failed_request(tmp_path: Path) -> None:
    toks = [Tokenizer.train_from_iterator(corpus(1500, seed=s), vocab_size=v, progress=False)
            for s, v in [(1, 700), (2, 900), (3, 1100)]]
    by_name = {vocabulary_version(t).name: t for t in toks}
    assert len(by_name) == 3
    path = tmp_path / "tok.json"
    toks[0].save(path)
    for i, tok in enumerate(toks):
        tok.save(tmp_path / f"v{i}.json")
    sources = [(tmp_path / f"v{i}.json").read_bytes() for i in range(3)]
    replaced: list[str] = []

    def replace(data: bytes) -> None:
        tmp = tmp_path / "tok.json.tmp"
        tmp.write_bytes(data)
        os.replace(tmp, path)

    with Server(str(path)) as server:
        load = Load(server.url)

        def replacing() -> None:
            time.sleep(0.3)
            for i in range(12):  # bounded
                if i == 5:
                    replace(b'{"format": "bytebpe-tokenizer", "version": 1, "merges": [[')
                    replaced.append("corrupt")
                else:
                    replace(sources[(i + 1) % 3])
                    replaced.append(f"v{(i + 1) % 3}")
                time.sleep(0.3)

        load.run(replacing)
        samples = scrape(server.url)
    by_version = check_results(load, lambda v, n: by_name[v])
    assert len(by_version) == 3, by_version
    assert sample_value(samples, "bytebpe_reloads_total", result="failure") >= 1
    assert sample_value(samples, "bytebpe_reloads_total", result="success") >= 8
    assert b'"result": "failure"' in server.log


@pytest.mark.parametrize("kind", ["tiktoken", "huggingface"])
def test_imported_formats_serve_the_same_ids_and_version(tmp_path: Path, kind: str) -> None:
    pytest.importorskip("tiktoken" if kind == "tiktoken" else "tokenizers")
    tok = Tokenizer.train_from_iterator(corpus(500), vocab_size=700,
                                        special_tokens=["<|endoftext|>"], progress=False)
    if kind == "tiktoken":
        path = tmp_path / "tok.tiktoken"
        tok.save_tiktoken(path)
    else:
        path = tmp_path / "tokenizer.json"
        tok.save_huggingface(path)
    with Server(str(path)) as server, server.client() as c:
        vocab = c.get("/v1/vocab").json()
        assert vocab["kind"] == kind
        assert vocab["version"] == vocabulary_version(tok).name  # the same ids, the same name
        for text in texts(20):
            assert c.post("/v1/tokenize", json={"text": text}).json()["ids"] == tok.encode(text)
