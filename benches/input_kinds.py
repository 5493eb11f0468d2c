"""Training time from the same documents handed over in different forms: a list of `str`
(what the comparisons time), a list of their UTF-8 `bytes`, a `datasets.Dataset` saved
to disk and loaded memory-mapped (`load_from_disk`), and a Parquet file
(`train_from_files`). Each run is a fresh process; the kinds are alternated, their order
rotated each round; medians and spreads are printed as a Markdown table.

    python benches/input_kinds.py --corpus ../shared/corpora/multilingual.jsonl.gz \
        --vocab-size 32768 --rounds 4

The dataset and the Parquet file are written once into --cache (default: a directory
next to the system's temporary files, named by corpus and size).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from train_one import load_texts

KINDS = ("str", "bytes", "dataset", "parquet")


def prepare(corpus: str, mb: float, cache: Path) -> None:
    """Writes the documents as JSON (for str and bytes), a saved Dataset and Parquet."""
    if (cache / "done").exists():
        return
    import datasets
    import pyarrow.parquet as pq

    cache.mkdir(parents=True, exist_ok=True)
    docs = load_texts(corpus, mb or None)  # the comparisons' own reading
    (cache / "docs.json").write_text(json.dumps(docs))
    ds = datasets.Dataset.from_dict({"text": docs})
    ds.save_to_disk(str(cache / "dataset"))
    pq.write_table(ds.data.table, cache / "docs.parquet")
    (cache / "done").write_text("")


def run_one(kind: str, cache: Path, vocab_size: int, threads: int) -> float:
    """Times one training in this process; the input is loaded before the clock starts."""
    import bytebpe

    data: Any = None
    if kind in ("str", "bytes"):
        data = json.loads((cache / "docs.json").read_text())
        if kind == "bytes":
            data = [d.encode("utf-8") for d in data]
    elif kind == "dataset":
        import datasets

        data = datasets.load_from_disk(str(cache / "dataset"))
    start = time.perf_counter()
    if kind == "parquet":
        bytebpe.Tokenizer.train_from_files(cache / "docs.parquet", vocab_size,
                                           num_threads=threads, progress=False)
    else:
        bytebpe.Tokenizer.train_from_iterator(data, vocab_size, num_threads=threads,
                                              progress=False)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", required=True, help="a .jsonl.gz file with a text field")
    ap.add_argument("--mb", type=float, default=0, help="first MB of it (0: all)")
    ap.add_argument("--vocab-size", type=int, default=32768)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--kinds", default=",".join(KINDS))
    ap.add_argument("--cache", type=Path)
    ap.add_argument("--one", help=argparse.SUPPRESS)  # internal: time one kind
    args = ap.parse_args()
    name = Path(args.corpus).name.split(".")[0]
    cache = args.cache or Path(tempfile.gettempdir()) / f"bytebpe-input-kinds-{name}-{args.mb:g}"
    if args.one:
        print(run_one(args.one, cache, args.vocab_size, args.threads))
        return
    kinds = args.kinds.split(",")
    unknown = set(kinds) - set(KINDS)
    if unknown:
        sys.exit(f"unknown kinds {sorted(unknown)}; choose from {KINDS}")
    prepare(args.corpus, args.mb, cache)
    times: dict[str, list[float]] = {k: [] for k in kinds}
    for r in range(args.rounds):
        for kind in kinds[r % len(kinds):] + kinds[: r % len(kinds)]:
            out = subprocess.run(
                [sys.executable, __file__, "--corpus", args.corpus, "--mb", str(args.mb),
                 "--vocab-size", str(args.vocab_size), "--threads", str(args.threads),
                 "--cache", str(cache), "--one", kind],
                check=True, capture_output=True, text=True, env=os.environ,
            )
            times[kind].append(float(out.stdout.strip().splitlines()[-1]))
    base = statistics.median(times[kinds[0]])
    print(f"{name}, {args.mb or 'all'} MB, vocab {args.vocab_size:,}, {args.threads} threads, "
          f"{args.rounds} rounds\n")
    print(f"| input | wall s: median (min–max) | × {kinds[0]} |")
    print("|---|--:|--:|")
    for kind in kinds:
        t = times[kind]
        print(f"| {kind} | {statistics.median(t):.3f} ({min(t):.3f}–{max(t):.3f}) | "
              f"{statistics.median(t) / base:.2f} |")


if __name__ == "__main__":
    main()
