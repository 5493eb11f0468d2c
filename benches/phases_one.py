"""One child of benches/compare.py: bytebpe's training phases on one corpus, timed apart.

Imports bytebpe and loads the corpus (as train_one.py does: neither is timed), then times:
  - plain pass: one pass over every byte of the documents (UTF-8 bytes of each str and an
    Adler-32 over them, single-threaded): the floor any counting must pay;
  - counting: the documents through bytebpe's WordCounter, in the batches training makes
    (`train_from_iterator`: 8,192 documents or 64 MiB, whichever comes first), all cores;
    the two alternate, --repeats times, so each repeat's ratio compares runs made
    moments apart (the medians and the per-repeat ratios are reported);
  - merging, per vocabulary size: the merge loop alone on those counts.
Prints one JSON line: bytes, seconds and MB/s of each, merges and merges/s per size, and
the RSS the counted words add per distinct word (measured on the first count).
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import statistics
import time
import zlib

# Imported here, not in the timed counting: the package's import (about 0.08 s on this
# machine) once made the first count of a run read as 40% slower on 20 MB.
from bytebpe import _bytebpe
from bytebpe.documents import BATCH_BYTES, batches
from train_one import load_texts

BATCH = 8192  # train_from_iterator's buffer_size


def count(texts: list[str], pattern: str, batch_bytes: int = BATCH_BYTES):
    counter = _bytebpe.WordCounter(pattern, [], None, False, None)
    start = 0
    for batch in batches(iter(texts), BATCH, batch_bytes):
        counter.add_batch(batch, start)
        start += len(batch)
    return counter


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def release_free_memory() -> None:
    """glibc's malloc_trim(0), where there is one."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--mb", type=float, default=None)
    ap.add_argument("--pattern", default="cl100k")
    ap.add_argument("--vocab-sizes", default="8192,32768,65536", help='"" counts only')
    ap.add_argument("--repeats", type=int, default=3, help="plain pass and count, alternated")
    ap.add_argument(
        "--brief",
        action="store_true",
        help="one line for benches/ab_builds.py instead of the JSON: distinct words, then "
        "the plain pass's and counting's median MB/s (the last figure is counting's)",
    )
    args = ap.parse_args()
    if args.repeats < 1:
        ap.error("--repeats must be at least 1")
    texts = load_texts(args.corpus, args.mb)
    n_bytes = sum(len(t.encode("utf-8")) for t in texts)

    plain_runs, count_runs = [], []
    first: dict[str, float] = {}
    distinct = 0
    for repeat in range(args.repeats):
        t0 = time.perf_counter()
        check = 1
        for text in texts:
            check = zlib.adler32(text.encode("utf-8"), check)
        plain_runs.append(time.perf_counter() - t0)

        # Free pages left from loading the corpus (or from the last count) go back first,
        # so the RSS before counting is what is in use (else a counter that trims after
        # its batches reads as negative).
        counter = None
        gc.collect()
        release_free_memory()
        rss_before = rss_mb()
        t0 = time.perf_counter()
        counter = count(texts, args.pattern)
        count_runs.append(time.perf_counter() - t0)
        if repeat == 0:
            # What the counted words hold: the RSS the counter adds, per distinct word (an
            # upper bound: allocator slack and freed batch buffers not returned to the OS
            # count too).
            first = {"rss_before_count_mb": rss_before, "rss_counted_mb": rss_mb()}
            distinct = counter.distinct_words
    plain, counting = statistics.median(plain_runs), statistics.median(count_runs)
    added_mb = first["rss_counted_mb"] - first["rss_before_count_mb"]
    out = {
        "bytes": n_bytes,
        "repeats": args.repeats,
        "plain_s": plain,
        "plain_mb_s": n_bytes / 1e6 / plain,
        "count_s": counting,
        "count_mb_s": n_bytes / 1e6 / counting,
        # Each repeat's count seconds over its plain pass's: how many plain passes a count takes.
        "count_over_plain": sorted(c / p for c, p in zip(count_runs, plain_runs)),
        "plain_runs_s": plain_runs,
        "count_runs_s": count_runs,
        "distinct_words": distinct,
        **first,
        "bytes_per_distinct_word": added_mb * 2**20 / max(distinct, 1),
        "merge": {},
    }
    for size in [int(s) for s in args.vocab_sizes.split(",") if s]:
        counter = count(texts, args.pattern)  # a counter trains once
        t0 = time.perf_counter()
        core = counter.train(size, 2)
        seconds = time.perf_counter() - t0
        merges = len(core.merges())
        out["merge"][str(size)] = {"s": seconds, "merges": merges, "merges_per_s": merges / seconds}
    if args.brief:
        print(f"{distinct} distinct words; plain {out['plain_mb_s']:.1f} MB/s; "
              f"count {out['count_mb_s']:.1f} MB/s")
        return
    print(json.dumps(out))


if __name__ == "__main__":
    main()
