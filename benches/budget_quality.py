"""Memory budget: peak RSS, time and held-out compression of bytebpe under memory limits.

For each corpus and each limit ("none" = exact counts), one fresh process trains on 90%
of the documents (every document whose index is not 9 mod 10), streamed from the gzip
file (never held whole, so the process's peak RSS is honest), then reports its peak RSS
(VmHWM, read before evaluating), the ledger's dropped mass and the bytes per token on the
held-out 10%.

    python benches/budget_quality.py --corpus english,code,multilingual \
        --limits none,256MiB,128MiB --vocab-size 32768

Prints one JSON line per run and a Markdown table (bytes/token relative to the exact run).
"""

from __future__ import annotations

import argparse
import glob
import gzip
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator

HERE = os.path.dirname(os.path.abspath(__file__))
CORPORA = os.path.join(HERE, "..", "..", "shared", "corpora")


def read_docs(path: str, heldout: bool) -> Iterator[str]:
    """The documents of a .jsonl.gz / .jsonl corpus (the "text" field), split 90/10."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        for i, line in enumerate(f):
            if not line.strip():
                continue
            if (i % 10 == 9) == heldout:
                yield json.loads(line)["text"]


def vm_hwm() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def child(args: argparse.Namespace) -> None:
    from bytebpe import Tokenizer

    paths = args.paths.split(os.pathsep)
    limit = None if args.limit == "none" else args.limit

    def train_docs() -> Iterator[str]:
        for p in paths:
            yield from read_docs(p, heldout=False)

    started = time.perf_counter()
    tok = Tokenizer.train_from_iterator(
        train_docs(), args.vocab_size, memory_limit=limit, progress=False
    )
    seconds = time.perf_counter() - started
    peak = vm_hwm()
    n_bytes = n_tokens = 0
    for p in paths:
        batch: list[str] = []
        for doc in read_docs(p, heldout=True):
            batch.append(doc)
            if len(batch) >= 256:
                n_tokens += sum(map(len, tok.encode_ordinary_batch(batch)))
                n_bytes += sum(len(d.encode()) for d in batch)
                batch = []
        if batch:
            n_tokens += sum(map(len, tok.encode_ordinary_batch(batch)))
            n_bytes += sum(len(d.encode()) for d in batch)
    t = tok.loss_report()["training"]
    print(json.dumps({
        "limit": args.limit, "seconds": round(seconds, 2), "peak_rss_mb": round(peak / 1e6, 1),
        "train_bytes": t["bytes"], "dropped_word_mass": t["dropped_word_mass"],
        "dropped_bytes": t["dropped_bytes"], "vocab_size": tok.vocab_size,
        "heldout_bytes": n_bytes, "heldout_tokens": n_tokens,
        "bytes_per_token": n_bytes / max(n_tokens, 1),
    }))


def corpus_paths(name: str) -> list[str]:
    if "*" in name:  # a glob, or several joined by "+"
        return sorted(p for g in name.split("+") for p in glob.glob(g))
    if os.path.exists(name):
        return [name]
    if name == "all":
        return [corpus_paths(n)[0] for n in ("english", "code", "multilingual")]
    return [os.path.join(CORPORA, f"{name}.jsonl.gz")]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--corpus", default="english,code,multilingual",
                   help="comma-separated names in ../shared/corpora, 'all', paths, or "
                        "globs (several joined by '+')")
    p.add_argument("--limits", default="none,256MiB,128MiB")
    p.add_argument("--vocab-size", type=int, default=32768)
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--paths", help=argparse.SUPPRESS)
    p.add_argument("--limit", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        child(args)
        return
    rows = []
    for corpus in args.corpus.split(","):
        paths = corpus_paths(corpus)
        exact = None
        for limit in args.limits.split(","):
            cmd = [sys.executable, __file__, "--child", "--paths", os.pathsep.join(paths),
                   "--limit", limit, "--vocab-size", str(args.vocab_size)]
            out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
            r = json.loads(out.strip().splitlines()[-1])
            r["corpus"] = corpus
            print(json.dumps(r), flush=True)
            if limit == "none":
                exact = r
            r["vs_exact"] = r["bytes_per_token"] / exact["bytes_per_token"] if exact else None
            rows.append(r)
    print()
    print("| corpus | memory_limit | train MB | wall s | peak RSS MB | dropped words (mass) "
          "| dropped MB | held-out bytes/token | vs exact |")
    print("|---|---|--:|--:|--:|--:|--:|--:|--:|")
    for r in rows:
        vs = f"{(r['vs_exact'] - 1) * 100:+.2f}%" if r["vs_exact"] is not None else "–"
        print(f"| {r['corpus']} | {r['limit']} | {r['train_bytes'] / 1e6:,.0f} | "
              f"{r['seconds']:.1f} | {r['peak_rss_mb']:,.0f} | {r['dropped_word_mass']:,} | "
              f"{r['dropped_bytes'] / 1e6:,.1f} | {r['bytes_per_token']:.4f} | {vs} |")


if __name__ == "__main__":
    main()
