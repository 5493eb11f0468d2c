"""Tokenizer.train_from_files against train_from_iterator over Python's read of the same
file: wall time and peak RSS, each run in a fresh process.

    python benches/files_compare.py --corpus ../shared/corpora/code.jsonl.gz \
        --vocab-sizes 512,32768 --repeats 3

With `--whole-file TEXT_FILE`, also trains on that file as one document
(`documents="files"`) under cl100k (cut at safe points: memory stays bounded) and under
an equivalent custom regex (no safe cut known: the document is held whole), to show the
memory bound.

`files`: the Rust side gunzips, splits and JSON-decodes the file in chunks, counting as
it reads. `iterator`: `bytebpe.read_files` (Python gzip + json, a generator, nothing
materialized) feeds train_from_iterator. Both runs must give the same merges (checked).
Peak RSS is the child's ru_maxrss (the whole process, Python and imports included).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import time


def child(mode: str, corpus: str, vocab_size: int) -> None:
    from bytebpe import Tokenizer, read_files

    started = time.perf_counter()
    if mode == "files":
        tok = Tokenizer.train_from_files(corpus, vocab_size, progress=False)
    elif mode.startswith("whole"):
        # cl100k's regex without possessives: a custom pattern to bytebpe (fancy-regex).
        custom = (r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+"""
                  r"""[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""")
        pattern = "cl100k" if mode == "whole-cl100k" else custom
        tok = Tokenizer.train_from_files(corpus, vocab_size, documents="files",
                                         pattern=pattern, progress=False)
    else:
        tok = Tokenizer.train_from_iterator(read_files(corpus), vocab_size, progress=False)
    wall = time.perf_counter() - started
    digest = hashlib.sha256(repr([tuple(m) for m in tok.merges()]).encode()).hexdigest()[:12]
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({
        "wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_rss_mb": usage.ru_maxrss / 1024, "merges": digest,
        "mb": tok.loss_report()["training"]["bytes"] / 1e6,
    }))


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--corpus", default=os.path.join(os.path.dirname(__file__), "..", "..",
                                                    "shared", "corpora", "code.jsonl.gz"))
    p.add_argument("--vocab-sizes", default="512,32768")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--whole-file", default=None, help="a plain text file, read as one document")
    p.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        child(args.child[0], args.child[1], int(args.child[2]))
        return
    print(f"corpus {args.corpus}, {os.cpu_count()} cores, load {os.getloadavg()}")
    print("| mode | vocab | MB | wall s (median) | min–max | CPU s | peak RSS MB | MB/s | merges |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|---|")
    vocabs = [int(v) for v in args.vocab_sizes.split(",") if v]
    plan = [(vocab, mode, args.corpus) for vocab in vocabs for mode in ("files", "iterator")]
    if args.whole_file:
        plan += [(512, mode, args.whole_file) for mode in ("whole-cl100k", "whole-custom")]
    for vocab, mode, corpus in plan:
        runs = []
        for _ in range(args.repeats):
            out = subprocess.run(
                [sys.executable, __file__, "--child", mode, corpus, str(vocab)],
                capture_output=True, text=True, check=True,
            ).stdout
            runs.append(json.loads(out.splitlines()[-1]))
        wall = statistics.median(r["wall_s"] for r in runs)
        walls = [r["wall_s"] for r in runs]
        mb = runs[0]["mb"]
        print(f"| {mode} | {vocab:,} | {mb:.0f} | **{wall:.2f}** | {min(walls):.2f}–"
              f"{max(walls):.2f} | {statistics.median(r['cpu_s'] for r in runs):.1f} | "
              f"**{max(r['peak_rss_mb'] for r in runs):.0f}** | {mb / wall:.1f} | "
              f"{','.join(sorted({r['merges'] for r in runs}))} |", flush=True)
    print(f"load at end {os.getloadavg()}")


if __name__ == "__main__":
    main()
