"""Helpers for the service tests: a real `bytebpe serve` subprocess on 127.0.0.1.

Every server is started on a free loopback port, waited for on /readyz, and stopped
(SIGINT, then SIGKILL after a grace period) when its `with` block ends.
"""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import sys
import time
from typing import Any

import httpx

HOST = "127.0.0.1"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


class Server:
    """`bytebpe serve PATH` in a subprocess; use as a context manager."""

    def __init__(self, path: str, *args: str, env: dict[str, str] | None = None,
                 startup: float = 30.0) -> None:
        self.path = path
        self.port = free_port()
        self.url = f"http://{HOST}:{self.port}"
        self.args = [sys.executable, "-m", "bytebpe.cli", "serve", path, "--host", HOST,
                     "--port", str(self.port), "--poll-interval", "0.05", *args]
        self.env = {**os.environ, **(env or {})}
        self.env.pop("PROMETHEUS_MULTIPROC_DIR", None)
        self.startup = startup
        # The worker processes asked for (1 unless `--workers N`).
        self.workers = int(args[args.index("--workers") + 1]) if "--workers" in args else 1
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = b""

    def __enter__(self) -> Server:
        self.proc = subprocess.Popen(self.args, env=self.env, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + self.startup
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                out = self.proc.stdout.read() if self.proc.stdout else b""
                raise RuntimeError(f"server exited with {self.proc.returncode}: {out.decode()}")
            try:
                # /readyz answers as soon as one worker is up: wait for every worker, or a
                # test that changes the file next races the workers still loading it.
                if (httpx.get(self.url + "/readyz", timeout=1.0).status_code == 200
                        and (self.workers == 1
                             or len(worker_pids(scrape(self.url))) >= self.workers)):
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"server not ready within {self.startup} s: {self.log.decode()}")

    def __exit__(self, exc_type: object, *exc: object) -> None:
        self.stop()
        if exc_type is not None:  # shown by pytest with the failure
            print(self.log.decode(errors="replace")[-20000:])

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGINT)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        if self.proc.stdout is not None:
            self.log = self.proc.stdout.read()
            self.proc.stdout.close()
        self.proc = None

    def client(self, timeout: float = 10.0) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=timeout)


def scrape(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """/metrics parsed with prometheus_client's parser: {(sample name, labels): value}."""
    from prometheus_client.parser import text_string_to_metric_families

    text = httpx.get(url + "/metrics", timeout=10.0).text
    out: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


def worker_pids(samples: dict[tuple[str, tuple[tuple[str, str], ...]], float]) -> set[str]:
    """The workers that have loaded a vocabulary (each publishes its gauge by pid)."""
    return {dict(ls).get("pid", "") for name, ls in samples if name == "bytebpe_vocab_merges"}


def sample_value(samples: dict[Any, float], name: str, **labels: str) -> float:
    """Sum of the samples named `name` whose labels include `labels`."""
    return sum(v for (n, ls), v in samples.items()
               if n == name and all(dict(ls).get(k) == w for k, w in labels.items()))


SYLLABLES = ["ka", "ro", "mi", "ne", "tu", "sa", "la", "po", "re", "vi", "de", "an", "in", "on", "er", "es", "th", "qu", "st", "pr", "ch", "sh", "ou", "ea", "ül", "ßa", "é", "東", "京", "数", "据", "При", "вет", "🙂"]
EXTRA = ["def", "return", "import", "class", "self", "None", "True", "if", "else", "while", "for", "range", "print", "12345", "3.14", "foo_bar", "x_y"]


def _lexicon(rng: random.Random, n: int = 3000) -> list[str]:
    words = set(EXTRA)
    while len(words) < n:
        words.add("".join(rng.choices(SYLLABLES, k=rng.randint(1, 4))))
    return sorted(words)


def corpus(n_docs: int, seed: int = 0) -> list[str]:
    """Deterministic documents with a Zipf-like mix of made-up words, so that training
    keeps finding merges for thousands of steps."""
    rng = random.Random(seed)
    words = _lexicon(random.Random(42))
    rng.shuffle(words)
    weights = [1.0 / (i + 1) for i in range(len(words))]
    docs = []
    for _ in range(n_docs):
        chosen = rng.choices(words, weights, k=rng.randint(5, 40))
        sep = rng.choice([" ", " ", " ", "\n", ", "])
        docs.append(sep.join(chosen) + rng.choice([".", "\n", "", "!"]))
    return docs


def texts(n: int, seed: int = 1) -> list[str]:
    """Request texts: documents plus edge cases (empty, long runs, emoji, control chars)."""
    return [*corpus(n, seed), "", " ", "\u00e9", "a" * 3000, "\U0001f600" * 5, "x\r\ny\tz"]
