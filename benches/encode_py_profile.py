"""Single-thread encoding through Python, as users call it: the binding's share too.

The Python counterpart of `examples/encode_profile.rs`, for changes to the binding (how
lists of ids are built, how a `str` is read) that the core's examples never run. Encodes
the documents of an `encode_one.py --mode prepare` directory one by one with
`encode_ordinary`, once untimed (so the shared int objects and CPython's cached UTF-8 of
each `str` exist, as in a long-running loader) and then `--rounds` times, and prints one
line: a hash of every id, and the median throughput.

    python benches/encode_one.py --mode prepare --dir /tmp/en --corpus CORPORA/english.jsonl.gz
    python benches/encode_py_profile.py /tmp/en --rounds 3

Two installed builds side by side: a `python` wrapper per build that sets PYTHONPATH to
a copy of the package, run alternately by `ab_builds.py` (see benches/README.md).
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import time
from array import array
from pathlib import Path

import bytebpe
from encode_one import load_texts_json


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir", type=Path, help="a directory made by encode_one.py --mode prepare")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    texts = load_texts_json(args.dir)
    tok = bytebpe.Tokenizer.load(args.dir / "tok.bbpe")
    size = sum(len(t.encode()) for t in texts)
    digest, tokens = hashlib.sha256(), 0
    for text in texts:
        ids = tok.encode_ordinary(text)
        digest.update(array("I", ids).tobytes())
        tokens += len(ids)
    rates = []
    for _ in range(args.rounds):
        start = time.perf_counter()
        for text in texts:
            tok.encode_ordinary(text)
        rates.append(size / 1e6 / (time.perf_counter() - start))
    print(
        f"ids {digest.hexdigest()[:16]}, {tokens:,} tokens of {size:,} bytes: "
        f"{statistics.median(rates):.2f} MB/s"
    )


if __name__ == "__main__":
    main()
