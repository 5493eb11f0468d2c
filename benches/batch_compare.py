"""Batch encoding of two builds side by side: where the time goes, by thread.

Each build is a `python/` folder holding the package and its built native module (as for
versions_compare.py); both are copied first, so rebuilds during the run change nothing.
The texts and tokenizer come from `encode_one.py --mode prepare --dir DIR`. Every run is a
fresh process (so CPython's UTF-8 copies of the texts are made inside the timing, as for
a user), the builds alternate, and their order flips every repeat, so load on a shared
machine falls on both alike. APIs timed:

  single  tok.encode_ordinary(text) for each text, with one thread in the pool
  list    tok.encode_ordinary_batch(texts, num_threads=N)
  numpy   tok.encode_batch_numpy(texts, num_threads=N)

Reported per build and API, medians over --repeats: wall MB/s; CPU ms per MB (all
threads: does the batch cost more CPU than one thread would?); the calling thread's CPU
seconds and voluntary context switches (its waits); scaling = single CPU / batch wall
(the wall-clock speedup a quiet machine would give); and others_cores, the cores other
processes kept busy meanwhile (from /proc/stat): wall figures mean little when it is
high, CPU figures still hold.

On a shared machine, --realtime runs each child under the SCHED_FIFO policy (needs root):
its threads then run before every ordinary process, so the wall figures are those of a
quiet machine (the kernel still leaves others 5% of each second). Other processes stall
for the length of each run (about a second); runs have a timeout. SCHED_FIFO changes how
the threads of one process share the cores, though (a woken thread waits for a running
one to block instead of preempting it). --boost keeps the ordinary scheduler: each child
runs in a session, so a scheduler autogroup, of its own, weighted as nice -20 against
the others' autogroups, so it gets about 95% of the machine while it runs.

    python benches/encode_one.py --mode prepare --dir /tmp/en \\
        --corpus ../shared/corpora/english.jsonl.gz --mb 20
    python benches/batch_compare.py --old /tmp/main/python --new python --dir /tmp/en
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

CHILD = r"""
import json, os, resource, sys, time
build, d, api, threads = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
if sys.argv[6] == "rt":
    # Threads started from here on (the pools) inherit it.
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
sys.path.insert(0, build)
sys.path.insert(1, sys.argv[5])
if api == "single":
    os.environ["RAYON_NUM_THREADS"] = "1"
import bytebpe
from encode_one import Window
texts = json.load(open(os.path.join(d, "texts.json"), encoding="utf-8"))
tok = bytebpe.Tokenizer.load(os.path.join(d, "tok.bbpe"))
tok.encode_ordinary_batch(["warm up", "the pools"], num_threads=threads)

def switches():
    with open("/proc/thread-self/status") as f:
        return int(f.read().split("voluntary_ctxt_switches:")[1].split()[0])

s0, t0 = switches(), time.thread_time()
with Window() as w:
    if api == "single":
        out = [tok.encode_ordinary(t) for t in texts]
    elif api == "list":
        out = tok.encode_ordinary_batch(texts, num_threads=threads)
    else:
        out = tok.encode_batch_numpy(texts, num_threads=threads)
caller = time.thread_time() - t0
print(json.dumps({"wall": w.wall, "cpu": w.cpu, "caller_cpu": caller,
                  "caller_switches": switches() - s0, "others": w.others,
                  "bytes": sum(len(t.encode()) for t in texts)}))
"""

APIS = ("single", "list", "numpy")


def snapshot(python_dir: str, dest: Path) -> str:
    shutil.copytree(
        Path(python_dir) / "bytebpe", dest / "bytebpe", ignore=shutil.ignore_patterns("__pycache__")
    )
    return str(dest)


def boost() -> None:
    """In the child: a session (so a scheduler autogroup) of its own, weighted as nice
    -20 against the other autogroups (root; Linux with autogroups)."""
    with open("/proc/self/autogroup", "w") as f:
        f.write("-20")


def run(build: str, d: str, api: str, threads: int, rt: bool, boosted: bool) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, build, d, api, str(threads), str(HERE), "rt" if rt else "-"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
        start_new_session=boosted,
        preexec_fn=boost if boosted else None,
    )
    return json.loads(out.stdout.splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", required=True, help="python/ folder of the old build")
    ap.add_argument("--new", required=True, help="python/ folder of the new build")
    ap.add_argument("--dir", required=True, help="a folder made by encode_one.py --mode prepare")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--apis", default=",".join(APIS))
    ap.add_argument(
        "--realtime",
        action="store_true",
        help="run each child under SCHED_FIFO (root): a quiet machine for the length of a run",
    )
    ap.add_argument(
        "--boost",
        action="store_true",
        help="run each child in a scheduler autogroup of its own at nice -20 (root)",
    )
    args = ap.parse_args()
    apis = args.apis.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        builds = {
            "old": snapshot(args.old, Path(tmp) / "old"),
            "new": snapshot(args.new, Path(tmp) / "new"),
        }
        results: dict[tuple[str, str], list[dict]] = {}
        for rep in range(args.repeats):
            order = ["old", "new"] if rep % 2 == 0 else ["new", "old"]
            for api in apis:
                for name in order:
                    r = run(builds[name], args.dir, api, args.threads, args.realtime, args.boost)
                    results.setdefault((name, api), []).append(r)
                    print(f"repeat {rep + 1} {name:3} {api:6} wall {r['wall']:.3f} s "
                          f"cpu {r['cpu']:.3f} s caller {r['caller_cpu']:.3f} s "
                          f"others {r['others']}", file=sys.stderr, flush=True)

    def med(rows: list[dict], f) -> float:
        return statistics.median(f(r) for r in rows)

    print("| build | API | MB/s (wall) | CPU ms/MB | calling thread CPU s | its waits "
          "| scaling | others_cores |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for name in ("old", "new"):
        single = results.get((name, "single"))
        for api in apis:
            rows = results[(name, api)]
            mb = rows[0]["bytes"] / 1e6
            wall = med(rows, lambda r: r["wall"])
            scaling = f"{med(single, lambda r: r['cpu']) / wall:.2f}x" if single else "-"
            others = [r["others"] for r in rows if r["others"] is not None]
            print(f"| {name} | {api} | {mb / wall:.1f} | {med(rows, lambda r: r['cpu']) / mb * 1000:.1f} "
                  f"| {med(rows, lambda r: r['caller_cpu']):.3f} "
                  f"| {med(rows, lambda r: r['caller_switches']):.0f} | {scaling} "
                  f"| {statistics.median(others) if others else float('nan'):.2f} |")


if __name__ == "__main__":
    main()
