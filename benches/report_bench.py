"""Time `bytebpe report` on a 65,536-token vocabulary with three eval sets of 10 MB.

    python benches/report_bench.py [--corpora ../shared/corpora] [--work /tmp/report-bench]
                                   [--repeats 3]

Prepares once (cached in --work): a run store trained on the first 10 MB of each corpus
(english, code, multilingual; 30 MB, pattern cl100k, vocab 65,536; --vocab-size and
--train-mb change them), and three eval sets of 10 MB each, taken after the first 10 MB
of each corpus, as JSON Lines (disjoint from training when --train-mb is 10).
Then, each repeat in a fresh process, times the report end to end as a user runs it:

    bytebpe report STORE -o report.html --eval english=... --eval code=... --eval multilingual=...

and prints one JSON line per repeat (wall seconds of the whole command, the phases the
report measures itself, the HTML size, peak RSS), then the median.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import statistics
import subprocess
import sys
import time

CORPORA = ("english", "code", "multilingual")
MB = 10**6


def take(path: str, skip_bytes: int, want_bytes: int) -> list[str]:
    """Documents of a corpus: skip the first `skip_bytes` of text, then take `want_bytes`."""
    docs, seen, taken = [], 0, 0
    with gzip.open(path, "rt", encoding="utf-8", newline="\n") as f:
        for line in f:
            text = json.loads(line)["text"]
            size = len(text.encode("utf-8"))
            if seen < skip_bytes:
                seen += size
                continue
            docs.append(text)
            taken += size
            if taken >= want_bytes:
                break
    return docs


def prepare(corpora: str, work: str, vocab_size: int, mb: int,
            train_mb: int | None = None) -> tuple[str, dict[str, str]]:
    train_mb = mb if train_mb is None else train_mb
    os.makedirs(work, exist_ok=True)
    evals = {}
    training: list[str] = []
    for name in CORPORA:
        out = os.path.join(work, f"eval-{name}.jsonl")
        evals[name] = out
        src = os.path.join(corpora, f"{name}.jsonl.gz")
        if not os.path.exists(out):
            docs = take(src, mb * MB, mb * MB)
            with open(out + ".tmp", "w", encoding="utf-8") as f:
                for d in docs:
                    f.write(json.dumps({"text": d}) + "\n")
            os.replace(out + ".tmp", out)
    tag = f"{vocab_size}" if train_mb == mb else f"{vocab_size}-{train_mb}mb"
    store = os.path.join(work, f"train-{tag}.sqlite")
    done = os.path.join(work, f"train-{tag}.done")
    if not os.path.exists(done):
        from bytebpe import Tokenizer

        for name in CORPORA:
            training += take(os.path.join(corpora, f"{name}.jsonl.gz"), 0, train_mb * MB)
        started = time.perf_counter()
        Tokenizer.train_from_iterator(training, vocab_size=vocab_size, pattern="cl100k",
                                      store=store, progress=False)
        print(f"trained {vocab_size} tokens on {len(training)} documents in "
              f"{time.perf_counter() - started:.1f} s", file=sys.stderr)
        open(done, "w").close()
    return store, evals


def run_once(store: str, evals: dict[str, str], out: str) -> dict[str, object]:
    cmd = [sys.executable, "-m", "bytebpe.cli", "report", store, "-o", out, "--timings"]
    for name, path in evals.items():
        cmd += ["--eval", f"{name}={path}"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(cmd, check=True, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    phases = json.loads(proc.stderr.strip().splitlines()[-1])
    return {
        "wall_s": round(wall, 2),
        "cpu_s": round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 2),
        "peak_rss_mb": round(after.ru_maxrss / 1024),
        "html_mb": round(os.path.getsize(out) / MB, 2),
        "phases": phases,
    }


def main() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--corpora", default=os.path.join(here, "..", "..", "shared", "corpora"))
    p.add_argument("--work", default="/tmp/report-bench")
    p.add_argument("--vocab-size", type=int, default=65536)
    p.add_argument("--mb", type=int, default=10, help="MB per eval set (and per corpus trained)")
    p.add_argument("--train-mb", type=int, default=None,
                   help="MB per corpus to train on (default: --mb)")
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args()
    store, evals = prepare(args.corpora, args.work, args.vocab_size, args.mb, args.train_mb)
    print(f"# load average {os.getloadavg()[0]:.2f}; {os.cpu_count()} cores", flush=True)
    runs = []
    for _ in range(args.repeats):
        r = run_once(store, evals, os.path.join(args.work, "report.html"))
        runs.append(r)
        print(json.dumps(r), flush=True)
    print(json.dumps({"median_wall_s": statistics.median(r["wall_s"] for r in runs),
                      "min_wall_s": min(r["wall_s"] for r in runs),
                      "max_wall_s": max(r["wall_s"] for r in runs)}))


if __name__ == "__main__":
    main()
