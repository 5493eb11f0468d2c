"""Counting one huge document: the documents of `--mb` MB of a corpus joined into one
`str`, counted by one `WordCounter.add_batch` call (all cores), `--repeats` times, each
with a fresh counter. Prints the seconds of each call and the distinct words.

    python benches/huge_document.py --corpus ../shared/corpora/multilingual.jsonl.gz --mb 100
"""

from __future__ import annotations

import argparse
import time

from train_one import load_texts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--mb", type=float, default=100.0)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()

    from bytebpe import _bytebpe

    doc = "".join(load_texts(args.corpus, args.mb))
    for _ in range(args.repeats):
        counter = _bytebpe.WordCounter("cl100k", [], None)
        start = time.perf_counter()
        counter.add_batch([doc], 0)
        print(f"one document of {len(doc):,} characters: {time.perf_counter() - start:.3f} s, "
              f"{counter.distinct_words:,} distinct words")


if __name__ == "__main__":
    main()
