"""Two builds of bytebpe side by side: did a change slow anything down?

Each build is a `python/` folder holding the package and its built native module (a
worktree of another commit, with `cargo build --release --features python --lib` copied
in as `bytebpe/_bytebpe.<suffix>.so`). Each measurement runs in its own process; the
builds alternate, so load on a shared machine falls on both alike.

    python benches/versions_compare.py --old /tmp/old/python --new python \\
        --corpus /tmp/code50.txt --repeats 3
    python benches/versions_compare.py ... --instructions   # valgrind: instructions, not seconds
    python benches/versions_compare.py ... --jobs store,load_store   # the run store's cost

With `--instructions`, each job runs once under `valgrind --tool=cachegrind` (instruction
counts are repeatable whatever else the machine does), and `import bytebpe` alone is
counted too, so the import's share can be told apart from the work's.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

CHILD = r"""
import json, os, resource, sys, tempfile, time
sys.path.insert(0, sys.argv[1])
from bytebpe import Tokenizer
job, path, vocab = sys.argv[2], sys.argv[3], int(sys.argv[4])
docs = None
if job != "import":
    docs = open(path, encoding="utf-8").read().splitlines(keepends=True)
store = os.path.join(tempfile.mkdtemp(), "run.sqlite")
if job == "load_store":
    Tokenizer.train_from_iterator(docs, vocab, progress=False, store=store)
started = time.perf_counter()
merges = 0
if job == "files":
    merges = len(Tokenizer.train_from_files(path, vocab, progress=False).merges())
elif job == "iterator":
    merges = len(Tokenizer.train_from_iterator(docs, vocab, progress=False).merges())
elif job == "store":
    merges = len(Tokenizer.train_from_iterator(docs, vocab, progress=False, store=store).merges())
elif job == "load_store":
    merges = len(Tokenizer.load(store).merges())
elif job == "count":
    from bytebpe import _bytebpe
    counter = _bytebpe.WordCounter("cl100k", [], None, False, None)
    for i in range(0, len(docs), 8192):
        counter.add_batch(docs[i:i + 8192], i)
    merges = counter.distinct_words
elif job == "encode":
    tok = Tokenizer.train_from_files(path, 4096, progress=False)
    started = time.perf_counter()
    merges = sum(map(len, tok.encode_batch(docs, num_threads=1)))
print(json.dumps({"seconds": time.perf_counter() - started, "result": merges,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "store_mb": os.path.getsize(store) / 1e6 if os.path.exists(store) else 0}))
"""

JOBS = ("files", "iterator", "encode")
# Training into a run store; loading one; counting alone (the word table, no merges:
# "result" is the distinct words).
MORE_JOBS = ("store", "load_store", "count")


def run(build: str, job: str, corpus: str, vocab: int) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", CHILD, build, job, corpus, str(vocab)],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def instructions(build: str, job: str, corpus: str, vocab: int) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run(
            ["valgrind", "--tool=cachegrind", "--cache-sim=no",
             f"--cachegrind-out-file={os.path.join(tmp, 'out')}",
             sys.executable, "-c", CHILD, build, job, corpus, str(vocab)],
            capture_output=True, text=True, check=True)
    match = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
    if match is None:
        raise RuntimeError(f"no instruction count in valgrind's output:\n{done.stderr[-2000:]}")
    return int(match.group(1).replace(",", ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", required=True, help="python/ folder of the old build")
    parser.add_argument("--new", required=True, help="python/ folder of the new build")
    parser.add_argument("--corpus", required=True, help="a text file, one document per line")
    parser.add_argument("--vocab-size", type=int, default=32768)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--instructions", action="store_true",
                        help="count instructions under valgrind (one run each) instead of timing")
    parser.add_argument("--jobs", default=",".join(JOBS),
                        help=f"comma-separated, of {JOBS + MORE_JOBS}")
    args = parser.parse_args()
    jobs = tuple(args.jobs.split(","))
    if not set(jobs) <= set(JOBS + MORE_JOBS):
        parser.error(f"--jobs: choose from {JOBS + MORE_JOBS}")
    builds = {"old": args.old, "new": args.new}
    print(f"corpus {args.corpus} ({os.path.getsize(args.corpus) / 1e6:.1f} MB), "
          f"vocab {args.vocab_size}, load {os.getloadavg()}")
    if args.instructions:
        for job in ("import", *jobs):
            counts = {name: instructions(b, job, args.corpus, args.vocab_size)
                      for name, b in builds.items()}
            print(f"{job:9s} old {counts['old'] / 1e6:9.1f} M  new {counts['new'] / 1e6:9.1f} M"
                  f"  new/old {counts['new'] / counts['old']:.3f}")
        return
    results: dict[tuple[str, str], list[dict[str, float]]] = {}
    for _ in range(args.repeats):
        for job in jobs:
            for name, build in builds.items():
                results.setdefault((job, name), []).append(run(build, job, args.corpus,
                                                               args.vocab_size))
    for job in jobs:
        old, new = results[(job, "old")], results[(job, "new")]
        same = {r["result"] for r in old} == {r["result"] for r in new}
        line = []
        for name, rs in (("old", old), ("new", new)):
            s = [r["seconds"] for r in rs]
            line.append(f"{name} {statistics.median(s):6.2f} s ({min(s):.2f}-{max(s):.2f}), "
                        f"{max(r['rss_mb'] for r in rs):.0f} MB")
            if job == "store":
                line[-1] += f", store {max(r['store_mb'] for r in rs):.2f} MB"
        ratio = (statistics.median(r["seconds"] for r in new)
                 / statistics.median(r["seconds"] for r in old))
        print(f"{job:9s} {' | '.join(line)} | new/old {ratio:.3f} | same result {same}")
    print(f"load after {os.getloadavg()}")


if __name__ == "__main__":
    main()
