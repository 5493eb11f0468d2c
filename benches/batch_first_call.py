"""The first batch call of a fresh process against the calls after it.

Trains bytebpe on the first half of `--mb` MB of a corpus, then calls one batch API on
the second half `--calls` times in this one process, and prints one line per call: MB/s,
CPU seconds per wall second (all threads), system seconds and minor page faults.

    python benches/batch_first_call.py --corpus ../shared/corpora/english.jsonl.gz \
        --threads 2 --api numpy

The first call pays for what later calls find ready: the allocator's arenas grown, and,
for `--api numpy`, numpy imported, whose OpenBLAS threads spin for a while after import
on the cores the batch wants. encode_one.py therefore times a batch after one untimed call.
"""

from __future__ import annotations

import argparse
import resource
import time

from train_one import load_texts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--mb", type=float, default=40.0, help="loaded; half trains, half is encoded")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--api", choices=["list", "numpy"], default="list")
    ap.add_argument("--calls", type=int, default=3)
    args = ap.parse_args()

    import bytebpe

    texts = load_texts(args.corpus, args.mb)
    half = len(texts) // 2
    tok = bytebpe.Tokenizer.train_from_iterator(texts[:half], vocab_size=32768, progress=False)
    docs = texts[half:]
    mb = sum(len(t.encode("utf-8")) for t in docs) / 1e6
    if args.api == "numpy":
        def call():
            return tok.encode_batch_numpy(docs, num_threads=args.threads)
    else:
        def call():
            return tok.encode_ordinary_batch(docs, num_threads=args.threads)
    tok.encode_ordinary_batch(["warm up"] * 8, num_threads=args.threads)  # as encode_one.py
    for i in range(args.calls):
        before = resource.getrusage(resource.RUSAGE_SELF)
        start = time.perf_counter()
        out = call()
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_SELF)
        user, system = after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime
        print(
            f"call {i + 1}: {args.api} on {args.threads} threads, {mb / wall:.1f} MB/s, "
            f"CPU/wall {(user + system) / wall:.2f}, system {system:.3f} s, "
            f"minor faults {after.ru_minflt - before.ru_minflt}"
        )
        del out


if __name__ == "__main__":
    main()
