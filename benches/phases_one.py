"""One child of benches/compare.py: bytebpe's training phases on one corpus, timed apart.

Loads the corpus (as train_one.py does), then times:
  - plain pass: one pass over every byte of the documents (UTF-8 bytes of each str and an
    Adler-32 over them, single-threaded): the floor any counting must pay;
  - counting: the documents through bytebpe's WordCounter (batches of 8,192, all cores);
  - merging, per vocabulary size: the merge loop alone on those counts.
Prints one JSON line: bytes, seconds and MB/s of each, merges and merges/s per size, and
the RSS the counted words add per distinct word.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import time
import zlib

from train_one import load_texts

BATCH = 8192


def count(texts: list[str], pattern: str):
    from bytebpe import _bytebpe

    counter = _bytebpe.WordCounter(pattern, [], None, False, None)
    for start in range(0, len(texts), BATCH):
        counter.add_batch(texts[start : start + BATCH], start)
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
    args = ap.parse_args()
    texts = load_texts(args.corpus, args.mb)
    n_bytes = sum(len(t.encode("utf-8")) for t in texts)

    t0 = time.perf_counter()
    check = 1
    for text in texts:
        check = zlib.adler32(text.encode("utf-8"), check)
    plain = time.perf_counter() - t0

    # Free pages left from loading the corpus go back first, so the RSS before counting is
    # what is in use (else a counter that trims after its batches reads as negative).
    release_free_memory()
    rss_before = rss_mb()
    t0 = time.perf_counter()
    counter = count(texts, args.pattern)
    counting = time.perf_counter() - t0
    # What the counted words hold: the RSS the counter adds, per distinct word (an upper
    # bound: allocator slack and freed batch buffers not returned to the OS count too).
    rss_counted = rss_mb()
    out = {
        "bytes": n_bytes,
        "plain_s": plain,
        "plain_mb_s": n_bytes / 1e6 / plain,
        "count_s": counting,
        "count_mb_s": n_bytes / 1e6 / counting,
        "distinct_words": counter.distinct_words,
        "rss_before_count_mb": rss_before,
        "rss_counted_mb": rss_counted,
        "bytes_per_distinct_word": (rss_counted - rss_before) * 2**20 / max(counter.distinct_words, 1),
        "merge": {},
    }
    for size in [int(s) for s in args.vocab_sizes.split(",") if s]:
        counter = count(texts, args.pattern)  # a counter trains once
        t0 = time.perf_counter()
        core = counter.train(size, 2)
        seconds = time.perf_counter() - t0
        merges = len(core.merges())
        out["merge"][str(size)] = {"s": seconds, "merges": merges, "merges_per_s": merges / seconds}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
