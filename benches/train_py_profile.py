"""Training through Python, as users call it, for comparing two installed builds.

The Python counterpart of `examples/train_profile.rs`: loads the first --mb MB of a corpus
(as train_one.py does; not timed), then times `Tokenizer.train_from_iterator` --rounds
times and prints one line: a hash of the merges and the median MB/s. Two builds side by
side: a `python` wrapper per build that sets PYTHONPATH to a copy of the package, run
alternately by `ab_builds.py` (see benches/README.md).

    python benches/train_py_profile.py ../shared/corpora/code.jsonl.gz --mb 20 --vocab-size 65536
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import time

import bytebpe
from train_one import load_texts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("corpus", help="a .jsonl.gz corpus")
    ap.add_argument("--mb", type=float, default=20)
    ap.add_argument("--vocab-size", type=int, default=32768)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    texts = load_texts(args.corpus, args.mb)
    size = sum(len(t.encode()) for t in texts)
    rates = []
    for _ in range(args.rounds):
        start = time.perf_counter()
        tok = bytebpe.Tokenizer.train_from_iterator(
            iter(texts), args.vocab_size, pattern="cl100k", progress=False
        )
        rates.append(size / 1e6 / (time.perf_counter() - start))
    # Every round trains the same merges: the last one's stand for all.
    digest = hashlib.sha256(repr(tok.merges()).encode()).hexdigest()[:16]
    print(
        f"merges {digest}, vocab {args.vocab_size:,} on {size:,} bytes: "
        f"{statistics.median(rates):.2f} MB/s"
    )


if __name__ == "__main__":
    main()
