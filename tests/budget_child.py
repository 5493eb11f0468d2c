"""Run by test_budget.py in a fresh process: trains on a generated corpus of many distinct
words under a memory limit and prints one JSON line with the process's peak RSS.

    python tests/budget_child.py --words 3000000 --limit 128MiB --vocab-size 400

The corpus is generated lazily (never held whole): documents of `--doc-words` words, each
a space and 8 random lowercase letters (one cl100k piece, so nearly every word is new),
with every other word drawn from a small fixed vocabulary so some words repeat.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import time
from collections.abc import Iterator

WORDS = (
    "the of and to in is that for it as was with be by on not he this are or his from at "
    "which but have an they you were her she there been one all we their has would when"
)
COMMON = [" " + w for w in WORDS.split()]
TABLE = bytes((97 + b % 26) for b in range(256))


def documents(n_words: int, doc_words: int, seed: int) -> Iterator[str]:
    rnd = random.Random(seed)
    made = 0
    while made < n_words:
        k = min(doc_words, n_words - made)
        letters = rnd.randbytes(8 * k).translate(TABLE).decode("ascii")
        parts = []
        for i in range(k):
            parts.append(" " + letters[8 * i : 8 * i + 8])
            parts.append(COMMON[rnd.randrange(len(COMMON))])
        made += k
        yield "".join(parts)


def vm_hwm_kb() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise RuntimeError("no VmHWM in /proc/self/status")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--words", type=int, required=True)
    p.add_argument("--doc-words", type=int, default=2000)
    p.add_argument("--limit", default=None)
    p.add_argument("--vocab-size", type=int, default=400)
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--store", default=None, help="a run store path (checkpoints every second)")
    args = p.parse_args()
    from bytebpe import RunStore, Tokenizer

    store = RunStore(args.store, checkpoint_every=1.0) if args.store else None

    started = time.perf_counter()
    tok = Tokenizer.train_from_iterator(
        documents(args.words, args.doc_words, args.seed), args.vocab_size,
        memory_limit=args.limit, num_threads=args.threads, progress=False, store=store,
    )
    merges = json.dumps([list(m) for m in tok.merges()]).encode()
    training = tok.loss_report()["training"]
    json.dump({
        "peak_rss_bytes": vm_hwm_kb() * 1024,
        "seconds": time.perf_counter() - started,
        "dropped_word_mass": training["dropped_word_mass"],
        "dropped_bytes": training["dropped_bytes"],
        "bytes": training["bytes"],
        "vocab_size": tok.vocab_size,
        "merges_sha256": hashlib.sha256(merges).hexdigest(),
    }, sys.stdout)
    print()


if __name__ == "__main__":
    main()
