"""The service under load: an open-loop generator against `bytebpe serve`, beside the
same encodes called in-process.

    python benches/serve_bench.py                      # granian and uvicorn, 1 and 2 workers
    python benches/serve_bench.py --servers granian --workers 1 --seconds 5

For each server, worker count and payload (one ~1 KB text; a batch of 64 such texts):

- saturation: a closed loop (each of `--connections` keep-alive connections sends its
  next request when the last one is answered) for `--seconds`; its rate is the
  saturating rate;
- open loop at half that rate and at `--target-rps`: requests are due at fixed times
  (rate r: one every 1/r s), sent on a free connection or queued until one is free, and
  latency is measured from the due time, so queueing is not hidden (no coordinated
  omission). Reported: achieved rate, p50/p95/p99/p99.9, errors.

Then the reload latency: a training run commits merges to a store the service is
serving; the time from the commit to the first answer naming the new version.

The generator is a raw asyncio (uvloop) HTTP/1.1 client in its own process; on a
2-core machine it shares the cores with the server, which the figures include.
Only 127.0.0.1 is ever contacted. Every loop is bounded in count and time.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections import deque
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
HOST = "127.0.0.1"
DEFAULT_CORPUS = ROOT.parent / "shared" / "corpora" / "english.jsonl.gz"


# ==================================================================== data


def load_texts(corpus: Path, n_bytes: int, size: int = 1024) -> tuple[list[str], list[str]]:
    """(training documents totalling ~n_bytes, ~`size`-byte texts for requests)."""
    docs, total = [], 0
    with gzip.open(corpus, "rt", encoding="utf-8") as f:
        for line in f:
            text = json.loads(line)["text"]
            docs.append(text)
            total += len(text)
            if total >= n_bytes:
                break
    texts = []
    for doc in docs[-2000:]:
        data = doc.encode()
        for start in range(0, len(data) - size, size):
            texts.append(data[start:start + size].decode("utf-8", "ignore"))
            if len(texts) >= 4096:
                break
        if len(texts) >= 4096:
            break
    return docs[:-2000] or docs, texts


def percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {k: float("nan") for k in ("p50", "p95", "p99", "p99.9")}
    values = sorted(values)
    pick = lambda q: values[min(len(values) - 1, int(q * len(values)))]  # noqa: E731
    return {"p50": pick(0.5), "p95": pick(0.95), "p99": pick(0.99), "p99.9": pick(0.999)}


# ==================================================================== in-process baseline


def in_process(tok: Any, texts: list[str], batch: int, seconds: float) -> dict[str, Any]:
    lat: list[float] = []
    n = 0
    start = time.perf_counter()
    end = start + seconds
    i = 0
    while time.perf_counter() < end and n < 10_000_000:
        t0 = time.perf_counter()
        if batch == 1:
            tok.encode(texts[i % len(texts)])
        else:
            chunk = [texts[(i + k) % len(texts)] for k in range(batch)]
            tok.encode_batch(chunk)
        lat.append(time.perf_counter() - t0)
        i += batch
        n += 1
    elapsed = time.perf_counter() - start
    return {"rps": n / elapsed, **percentiles(lat)}


# ==================================================================== the load generator


class _Conn(asyncio.Protocol):
    def __init__(self, gen: _Gen) -> None:
        self.gen = gen
        self.buf = bytearray()
        self.transport: asyncio.Transport | None = None
        self.due = 0.0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buf += data
        end = self.buf.find(b"\r\n\r\n")
        if end < 0:
            return
        head = bytes(self.buf[:end]).lower()
        at = head.find(b"content-length:")
        length = int(head[at + 15:head.find(b"\r\n", at) if head.find(b"\r\n", at) > 0
                          else len(head)])
        if len(self.buf) < end + 4 + length:
            return
        status = int(self.buf[9:12])
        del self.buf[:end + 4 + length]
        self.gen.answered(self, status)

    def connection_lost(self, exc: Exception | None) -> None:
        self.gen.lost(self)


class _Gen:
    def __init__(self, loop: asyncio.AbstractEventLoop, requests: list[bytes], closed: bool) -> None:
        self.loop = loop
        self.requests = requests
        self.closed = closed
        self.idle: deque[_Conn] = deque()
        self.queue: deque[float] = deque()
        self.latencies: list[float] = []
        self.errors = 0
        self.sent = 0
        self.stop_at = float("inf")
        self.done: asyncio.Future[None] | None = None
        self.expected = 0

    def send(self, conn: _Conn, due: float) -> None:
        conn.due = due
        assert conn.transport is not None
        conn.transport.write(self.requests[self.sent % len(self.requests)])
        self.sent += 1

    def answered(self, conn: _Conn, status: int) -> None:
        now = time.perf_counter()
        if now <= self.stop_at:
            self.latencies.append(now - conn.due)
            if status != 200:
                self.errors += 1
        if self.closed:
            if now < self.stop_at:
                self.send(conn, now)
            return
        if self.queue:
            self.send(conn, self.queue.popleft())
        else:
            self.idle.append(conn)
        if len(self.latencies) + self.errors_lost >= self.expected and self.done and not self.done.done():
            self.done.set_result(None)

    errors_lost = 0

    def lost(self, conn: _Conn) -> None:
        self.errors_lost += 1


async def _run(port: int, requests: list[bytes], connections: int, rate: float | None,
               seconds: float) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    gen = _Gen(loop, requests, closed=rate is None)
    conns = []
    for _ in range(connections):
        _, conn = await loop.create_connection(lambda: _Conn(gen), HOST, port)
        conns.append(conn)
    # uvloop's loop.time() ticks in milliseconds: every time here is perf_counter's.
    start = time.perf_counter() + 0.05
    if rate is None:  # closed loop: every connection keeps one request in flight
        gen.stop_at = start + seconds
        await asyncio.sleep(0.05)
        for conn in conns:
            gen.send(conn, time.perf_counter())
        await asyncio.sleep(seconds + 0.05)
        elapsed = seconds
    else:
        n = int(rate * seconds)
        gen.expected = n
        gen.done = loop.create_future()
        gen.idle.extend(conns)
        i = 0
        while i < n:
            now = time.perf_counter()
            while i < n and start + i / rate <= now:
                due = start + i / rate
                if gen.idle:
                    gen.send(gen.idle.popleft(), due)
                else:
                    gen.queue.append(due)
                i += 1
            if i < n:
                await asyncio.sleep(max(0.0, start + i / rate - time.perf_counter()))
        try:
            await asyncio.wait_for(gen.done, timeout=seconds + 30)
        except asyncio.TimeoutError:
            pass
        elapsed = max(time.perf_counter() - start, 1e-9)
    for conn in conns:
        if conn.transport is not None:
            conn.transport.close()
    done = len(gen.latencies)
    return {"rps": done / elapsed, "n": done, "errors": gen.errors, **percentiles(gen.latencies)}


def _generator_process(args: tuple[Any, ...], out: Any) -> None:
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    out.send(asyncio.run(_run(*args)))


def generate(port: int, requests: list[bytes], connections: int, rate: float | None,
             seconds: float) -> dict[str, Any]:
    """Runs the generator in its own process (so the bench process's GIL is not shared)."""
    ctx = multiprocessing.get_context("spawn")
    receive, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_generator_process,
                       args=((port, requests, connections, rate, seconds), send))
    proc.start()
    result = receive.recv() if receive.poll(seconds + 90) else {"error": "generator timed out"}
    proc.join(timeout=10)
    if proc.is_alive():
        proc.kill()
    return result


def http_request(path: str, body: dict[str, Any]) -> bytes:
    data = json.dumps(body).encode()
    return (f"POST {path} HTTP/1.1\r\nHost: {HOST}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\n\r\n").encode() + data


# ==================================================================== the server


class Serve:
    def __init__(self, path: str, server: str, workers: int, *extra: str) -> None:
        import socket

        with socket.socket() as s:
            s.bind((HOST, 0))
            self.port = s.getsockname()[1]
        if server == "bare":  # the reference: a bare ASGI app under granian
            self.cmd = [sys.executable, "-m", "granian", "--interface", "asgi", "--host", HOST,
                        "--port", str(self.port), "--workers", str(workers),
                        "--working-dir", str(HERE), "serve_bare_app:app"]
        else:
            self.cmd = [sys.executable, "-m", "bytebpe.cli", "serve", path, "--host", HOST,
                        "--port", str(self.port), "--server", server, "--workers",
                        str(workers), *extra]
        self.env_extra = {"BYTEBPE_BENCH_TOKENIZER": path}
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Serve:
        import urllib.request

        env = {k: v for k, v in os.environ.items() if k != "PROMETHEUS_MULTIPROC_DIR"}
        env.update(self.env_extra)
        self.proc = subprocess.Popen(self.cmd, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, env=env, start_new_session=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                probe = urllib.request.Request(f"http://{HOST}:{self.port}/v1/tokenize",
                                               data=b'{"text": "x"}', method="POST")
                with urllib.request.urlopen(probe, timeout=1):
                    time.sleep(0.5)  # let every worker come up
                    return self
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("server did not start")

    def __exit__(self, *exc: object) -> None:
        import signal

        assert self.proc is not None
        os.killpg(self.proc.pid, signal.SIGINT)
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


def payloads(texts: list[str]) -> dict[str, list[bytes]]:
    return {
        "1 KB text": [http_request("/v1/tokenize", {"text": t}) for t in texts[:512]],
        "batch of 64": [http_request("/v1/tokenize", {"texts": texts[i:i + 64]})
                        for i in range(0, min(len(texts), 64 * 32), 64)],
    }


def saturation(path: str, server: str, workers: int, texts: list[str], args: Any) -> dict:
    """Closed-loop requests/s per payload, one server start."""
    out = {}
    with Serve(path, server, workers) as s:
        for name, requests in payloads(texts).items():
            generate(s.port, requests, 8, None, 1.0)  # warm up
            out[name] = generate(s.port, requests, args.connections, None, args.seconds)
    return out


def open_loop(path: str, server: str, workers: int, texts: list[str], args: Any,
              saturating: dict[str, float]) -> list[dict]:
    """Open-loop latency at half the (median) saturating rate, and at the target rate."""
    rows = []
    with Serve(path, server, workers) as s:
        for name, requests in payloads(texts).items():
            generate(s.port, requests, 8, None, 1.0)  # warm up
            row: dict[str, Any] = {"server": server, "workers": workers, "payload": name,
                                   "saturation": {"rps": saturating[name]}}
            half = max(saturating[name] / 2, 1.0)
            row["half"] = {"rate": half, **generate(s.port, requests, args.connections, half,
                                                     args.seconds)}
            if name == "1 KB text":
                row["target"] = {"rate": args.target_rps, **generate(
                    s.port, requests, args.connections, args.target_rps, args.seconds)}
                for rate in args.extra_rates:
                    row[f"rate {rate:g}"] = {"rate": rate, **generate(
                        s.port, requests, args.connections, rate, args.seconds)}
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


def bench_reload(workdir: str, docs: list[str], rounds: int) -> list[float]:
    """Seconds from a training call's last commit to the first answer with its version."""
    import urllib.request

    from bytebpe import Tokenizer
    from bytebpe.serve.version import vocabulary_version

    store = os.path.join(workdir, "reload.sqlite")
    sample = docs[: max(len(docs) // 4, 1)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        Tokenizer.train_from_iterator(sample, vocab_size=1000, store=store, progress=False)
    delays = []
    with Serve(store, "granian", 1) as s:
        for r in range(rounds):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tok = Tokenizer.train_from_iterator(sample, vocab_size=1000 + 100 * (r + 1),
                                                    store=store, progress=False)
            committed = time.perf_counter()  # the call returns after its last commit
            want = vocabulary_version(tok).name
            deadline = committed + 10
            while time.perf_counter() < deadline:
                body = urllib.request.urlopen(
                    urllib.request.Request(f"http://{HOST}:{s.port}/v1/tokenize",
                                           data=b'{"text": "x"}', method="POST"), timeout=5).read()
                if json.loads(body)["version"] == want:
                    break
                time.sleep(0.005)
            delays.append(time.perf_counter() - committed)
    return delays


# ==================================================================== main


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    p.add_argument("--train-bytes", type=int, default=20_000_000)
    p.add_argument("--vocab-size", type=int, default=16384)
    p.add_argument("--servers", nargs="+", default=["granian", "uvicorn", "bare"],
                   help="bare: a bare ASGI app under granian (the reference row)")
    p.add_argument("--workers", nargs="+", type=int, default=[1, 2])
    p.add_argument("--seconds", type=float, default=8.0)
    p.add_argument("--connections", type=int, default=32)
    p.add_argument("--target-rps", type=float, default=5000.0)
    p.add_argument("--extra-rates", nargs="*", type=float, default=[],
                   help="more open-loop rates (requests/s) for single texts")
    p.add_argument("--rounds", type=int, default=3,
                   help="interleaved saturation rounds (the median is used)")
    p.add_argument("--reload-rounds", type=int, default=10)
    p.add_argument("--out", type=Path, default=None, help="write all results as JSON here")
    args = p.parse_args()

    from bytebpe import Tokenizer

    print(f"load average before: {os.getloadavg()}", flush=True)
    docs, texts = load_texts(args.corpus, args.train_bytes)
    workdir = tempfile.mkdtemp(prefix="serve-bench-")
    path = os.path.join(workdir, "tok.json")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tok = Tokenizer.train_from_iterator(docs, vocab_size=args.vocab_size, progress=False)
    tok.save(path)
    mean_bytes = statistics.mean(len(t.encode()) for t in texts)
    results: dict[str, Any] = {"vocab_size": tok.vocab_size, "text_bytes": mean_bytes,
                               "cpus": os.cpu_count()}
    results["in_process"] = {
        "1 KB text": in_process(tok, texts, 1, args.seconds),
        "batch of 64": in_process(tok, texts, 64, args.seconds),
    }
    print(json.dumps(results), flush=True)
    # The machine is shared: saturation is measured in interleaved rounds (every
    # configuration once per round) and the median taken, then latency at half of it.
    configs = [(server, workers) for server in args.servers for workers in args.workers]
    rounds: dict[tuple[str, int], list[dict]] = {c: [] for c in configs}
    for r in range(args.rounds):
        for server, workers in configs:
            sat = saturation(path, server, workers, texts, args)
            rounds[(server, workers)].append(sat)
            print(json.dumps({"round": r, "server": server, "workers": workers,
                              **{k: round(v["rps"]) for k, v in sat.items()},
                              "load": os.getloadavg()[0]}), flush=True)
    results["rounds"] = {f"{s} {w}": v for (s, w), v in rounds.items()}
    results["servers"] = []
    for server, workers in configs:
        median = {name: statistics.median(sat[name]["rps"] for sat in rounds[(server, workers)])
                  for name in ("1 KB text", "batch of 64")}
        results["servers"] += open_loop(path, server, workers, texts, args, median)
    results["reload_seconds"] = bench_reload(workdir, docs, args.reload_rounds)
    results["load_after"] = os.getloadavg()
    print(json.dumps({"reload_seconds": results["reload_seconds"]}), flush=True)
    if args.out:
        args.out.write_text(json.dumps(results, indent=1))
    print(markdown(results))


def markdown(r: dict[str, Any]) -> str:
    ms = lambda s: f"{s * 1000:.2f}"  # noqa: E731
    lines = [f"vocabulary {r['vocab_size']}, texts of {r['text_bytes']:.0f} bytes on average, "
             f"{r['cpus']} CPUs", "",
             "| where | payload | saturating rps (median) | rate (rps) | achieved | p50 ms | p95 ms | p99 ms "
             "| p99.9 ms | errors |", "|---|---|---|---|---|---|---|---|---|---|"]
    for name, row in r["in_process"].items():
        lines.append(f"| in-process | {name} | {row['rps']:,.0f} | | | {ms(row['p50'])} | "
                     f"{ms(row['p95'])} | {ms(row['p99'])} | {ms(row['p99.9'])} | |")
    for row in r["servers"]:
        server = "bare ASGI app (granian)" if row["server"] == "bare" else row["server"]
        where = f"{server}, {row['workers']} worker{'s' if row['workers'] > 1 else ''}"
        for key in ("half", "target", *sorted(k for k in row if k.startswith("rate "))):
            if key not in row:
                continue
            m = row[key]
            lines.append(
                f"| {where} | {row['payload']} | {row['saturation']['rps']:,.0f} | "
                f"{m['rate']:,.0f} | {m['rps']:,.0f} | {ms(m['p50'])} | {ms(m['p95'])} | "
                f"{ms(m['p99'])} | {ms(m['p99.9'])} | {m['errors']} |")
    d = sorted(r["reload_seconds"])
    lines += ["", f"commit to served: median {statistics.median(d) * 1000:.0f} ms, "
                  f"max {d[-1] * 1000:.0f} ms over {len(d)} commits"]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
