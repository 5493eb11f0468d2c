"""Encoding benchmark: bytebpe against tiktoken and Hugging Face tokenizers, same ranks.

One bytebpe tokenizer is trained on the first --mb MB of the corpus and exported (checked
by bytebpe) to tiktoken and to Hugging Face `tokenizers`, so all three give identical ids.
The documents after the training slice (--mb MB more, none shared with training) are then
encoded by each tool in its own fresh process (benches/encode_one.py):

  single   documents encoded one by one on one thread (RAYON_NUM_THREADS=1): throughput,
           and the per-document latency p50/p95/p99 of those calls;
  batch    one batch call over all documents on --threads threads (TOKENIZERS_PARALLELISM
           on): bytebpe encode_batch and encode_batch_numpy, tiktoken
           encode_ordinary_batch, Hugging Face encode_batch (and encode_batch_fast) with
           the `.ids` lists built inside the timing; scaling = batch / single-thread;
           bytebpe's two batch calls also run on one thread (num_threads=1), so the
           scaling against the same call, whose outputs stay alive just as the
           batch's do, is given beside the one against documents one by one (whose
           outputs are dropped as they come, with the collector off);
  pair     bytebpe's single run as two processes at once, their timed loops started
           together: both texts' bytes over the time until the later one finished, against
           one process alone, gives what the machine itself allows two threads (2.00 when
           two cores do twice one core's work), the ceiling for the batch scaling;
  worst    1,000,000 x "a", " ", "^", "\\n", and " " * 1_000_000 + "x", one process per
           tool and input, median of --repeats calls (a process killed after --timeout s).

Corpus runs are interleaved (repeat 1 of every tool, then repeat 2, ...) and the tables
give medians over --repeats; peak RSS is the child's VmHWM at the end of the timed part.
The first repeat also dumps every run's ids, and all of them are compared with bytebpe's
encode_batch output document by document (worst cases: by a hash of the ids). The
installed bytebpe (an editable development build) is copied to a temporary directory
first, so rebuilds during the run do not change what is measured.

Usage (from the repo root):

    python benches/encode_compare.py                          # code, 20 MB, 3 repeats
    python benches/encode_compare.py --corpus english --mb 5 --repeats 1   # quick check
    python benches/encode_compare.py --write benches/RESULTS.md

Options: --corpora DIR (default ../shared/corpora next to the repo), --corpus (code,
english or multilingual; or a path to a .jsonl.gz), --mb (20: MB to train on and MB to
encode; 1 MB = 10**6 bytes of UTF-8), --vocab-size (32768), --pattern (cl100k; gpt2,
o200k or a regex), --repeats (3), --threads (batch threads; default all cores), --tools
(bytebpe,tiktoken,tokenizers), --no-worst, --timeout (120 s per worst-case process),
--wait-load X (wait up to 10 min for the 1-minute load average to fall below X before
starting), --write PATH (append the markdown section, with date, machine, versions and
command, to PATH; the file gets a header when new), --json PATH (every raw run, and what
the run knew of itself, for compare.py's summary).

The section is made from the raw runs alone (encode_report.py, which also makes it again
from a saved --json file); the ids are checked by encode_ids.py.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shlex
import signal
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
from corpora import corpus_path
from encode_children import PAIR_TIMEOUT_S, run_child, run_pair
from encode_ids import id_lines
from encode_report import BATCH_APIS, render
from encode_worst import WORST_CASES
from train_compare import machine, repo_state, snapshot_bytebpe, version

TOOLS = ("bytebpe", "tiktoken", "tokenizers")
HEADER = """\
# Encoding benchmark results

Produced by `benches/encode_compare.py` (the method is in its docstring). One bytebpe
tokenizer is trained per section and exported to tiktoken and Hugging Face `tokenizers`
with identical ids; each tool then encodes the same documents (not the training ones) in
its own process. MB = 10^6 bytes of UTF-8 input. Medians over the repeats; speed-ups are
anchor time / bytebpe time (above 1: bytebpe faster). Only measured figures are recorded
here.
"""


def cpu_stat() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine since boot, from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    tick = os.sysconf("SC_CLK_TCK")
    idle = v[3] + v[4]  # idle + iowait
    total = sum(v[:8])  # guest time is already in user
    return (total - idle) / tick, total / tick


def others_cores(seconds: float = 3.0) -> float:
    """Cores kept busy by other processes over a short idle sample."""
    b0, _ = cpu_stat()
    t0 = time.perf_counter()
    time.sleep(seconds)
    b1, _ = cpu_stat()
    return (b1 - b0) / (time.perf_counter() - t0)


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpora", default=str(REPO.parent / "shared" / "corpora"))
    ap.add_argument("--corpus", default="code")
    ap.add_argument("--mb", type=float, default=20)
    ap.add_argument("--vocab-size", type=int, default=32768)
    ap.add_argument("--pattern", default="cl100k")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--tools", default=",".join(TOOLS))
    ap.add_argument("--no-worst", action="store_true")
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--wait-load", type=float, default=None)
    ap.add_argument("--write", metavar="PATH")
    ap.add_argument("--json", metavar="PATH", help="also write the raw runs here (encode_report.py)")
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # subprocess.run kills the child

    tools = [t for t in args.tools.split(",") if t]
    if unknown := set(tools) - set(TOOLS):
        sys.exit(f"unknown tools: {', '.join(sorted(unknown))}")
    corpus = corpus_path(args.corpora, args.corpus)
    if not corpus.exists():
        sys.exit(f"corpus not found: {corpus} (use --corpora DIR)")
    threads = args.threads or os.cpu_count() or 1
    ncpu = os.cpu_count() or 1
    if args.wait_load is not None:
        deadline = time.time() + 600
        while os.getloadavg()[0] > args.wait_load and time.time() < deadline:
            print(f"waiting: load {os.getloadavg()[0]:.2f} > {args.wait_load}", file=sys.stderr)
            time.sleep(30)
    if os.getloadavg()[0] > 0.5 * ncpu:
        print(
            f"warning: machine busy (load {os.getloadavg()[0]:.2f}); timings will be noisy",
            file=sys.stderr,
        )
    background = others_cores()
    if background > 0.3:
        print(f"warning: other processes keep {background:.2f} cores busy", file=sys.stderr)
    busy0, wall0, ours0 = cpu_stat()[0], time.perf_counter(), children_cpu()
    command = shlex.join(["python", *sys.argv])
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    info = machine()
    repo = repo_state()

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ)
        if snap := snapshot_bytebpe(tmp):
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [snap, env.get("PYTHONPATH")]))
        work = Path(tmp) / "work"
        work.mkdir()
        env_single = {
            **env,
            "RAYON_NUM_THREADS": "1",
            "RAYON_RS_NUM_CPUS": "1",
            "TOKENIZERS_PARALLELISM": "false",
        }
        env_batch = {
            **env,
            "RAYON_NUM_THREADS": str(threads),
            "RAYON_RS_NUM_CPUS": str(threads),
            "TOKENIZERS_PARALLELISM": "true",
        }

        prep = run_child(
            [
                "--mode",
                "prepare",
                "--dir",
                str(work),
                "--corpus",
                str(corpus),
                "--mb",
                str(args.mb),
                "--vocab-size",
                str(args.vocab_size),
                "--pattern",
                args.pattern,
            ],
            env,
            None,
        )
        if "error" in prep:
            sys.exit(f"prepare failed: {prep['error']}")
        log(
            f"prepared: trained on {prep['train_bytes'] / 1e6:.3g} MB in {prep['train_s']:.1f} s; "
            f"encoding {prep['docs']} documents, {prep['bytes'] / 1e6:.3g} MB"
        )

        single: dict[str, list[dict]] = {t: [] for t in tools}
        batch: dict[tuple[str, str], list[dict]] = {k: [] for k in BATCH_APIS if k[0] in tools}
        # The same call on one thread: the baseline the outputs' cost is shared with.
        batch_one: dict[tuple[str, str], list[dict]] = {k: [] for k in batch if k[0] == "bytebpe"}
        # bytebpe's single run twice at once: what the machine gives two copies of the work.
        pairs: list[dict] = []
        dumps: dict[str, str] = {}
        for rep in range(args.repeats):
            order = tools[rep % len(tools) :] + tools[: rep % len(tools)]  # rotate the order
            for tool in order:
                cmd = ["--mode", "single", "--tool", tool, "--dir", str(work)]
                if rep == 0:
                    dumps[f"{tool} single"] = str(work / f"ids-single-{tool}")
                    cmd += ["--dump", dumps[f"{tool} single"]]
                r = run_child(cmd, env_single, None)
                single[tool].append(r)
                log(
                    f"[{rep + 1}/{args.repeats}] {tool} single: "
                    + (
                        r.get("error")
                        or f"{r['mb_s']:.2f} MB/s, p50 {r['p50_us']:.0f} us, "
                        f"{r['peak_rss_mb']:.0f} MB"
                    )
                )
            if "bytebpe" in tools:
                cmd = ["--mode", "single", "--tool", "bytebpe", "--dir", str(work)]
                r = run_pair(cmd, env_single, work / f"barrier-{rep}", PAIR_TIMEOUT_S)
                pairs.append(r)
                log(
                    f"[{rep + 1}/{args.repeats}] bytebpe single, two processes at once: "
                    + (r.get("error") or f"{r['mb_s']:.2f} MB/s together, "
                       f"started {r['start_gap_ms']:.1f} ms apart")
                )
            for key in sorted(batch, key=lambda k: order.index(k[0])):
                tool, api = key
                cmd = [
                    "--mode",
                    "batch",
                    "--tool",
                    tool,
                    "--api",
                    api,
                    "--threads",
                    str(threads),
                    "--dir",
                    str(work),
                ]
                if rep == 0:
                    dumps[f"{tool} batch {api}"] = str(work / f"ids-batch-{tool}-{api}")
                    cmd += ["--dump", dumps[f"{tool} batch {api}"]]
                r = run_child(cmd, env_batch, None)
                batch[key].append(r)
                log(
                    f"[{rep + 1}/{args.repeats}] {tool} batch {api}: "
                    + (
                        r.get("error")
                        or f"{r['mb_s']:.2f} MB/s, cpu/wall "
                        f"{r['cpu_s'] / r['wall_s']:.2f}, {r['peak_rss_mb']:.0f} MB"
                    )
                )
                if key in batch_one:
                    one = [*cmd[: cmd.index("--threads")], "--threads", "1", "--dir", str(work)]
                    r = run_child(one, env_single, None)
                    batch_one[key].append(r)
                    log(
                        f"[{rep + 1}/{args.repeats}] {tool} batch {api} on 1 thread: "
                        + (r.get("error") or f"{r['mb_s']:.2f} MB/s")
                    )

        worst: dict[tuple[str, str], dict] = {}
        if not args.no_worst:
            for case in WORST_CASES:
                for tool in tools:
                    r = run_child(
                        [
                            "--mode",
                            "worst",
                            "--tool",
                            tool,
                            "--case",
                            case,
                            "--runs",
                            str(args.repeats),
                            "--dir",
                            str(work),
                        ],
                        env_single,
                        args.timeout,
                    )
                    worst[tool, case] = r
                    log(
                        f"worst {case} {tool}: "
                        + (f"{r['median_s']:.3f} s" if "median_s" in r else "")
                        + (f" {r['error']}" if "error" in r else "")
                    )

        ids = id_lines(dumps, prep["bytes"], tools, worst)

    run_wall = time.perf_counter() - wall0
    raw = {
        "corpus": corpus.name,
        "repeats": args.repeats,
        "threads": threads,
        "prep": prep,
        "single": single,
        "batch": {f"{t} {api}": rs for (t, api), rs in batch.items()},
        "batch_one_thread": {f"{t} {api}": rs for (t, api), rs in batch_one.items()},
        "pair_single": pairs,
        "worst": {f"{t} {case}": r for (t, case), r in worst.items()},
        "load_end": os.getloadavg(),
        # What the report says of the run itself.
        "meta": {
            "started": started,
            "command": command,
            "machine": info,
            "python": platform.python_version(),
            "versions": {t: version(t) for t in [*tools, "numpy"]},
            "repo": repo,
            "tools": tools,
            "pattern": args.pattern,
            "vocab_size": args.vocab_size,
            "timeout": args.timeout,
            "ncpu": ncpu,
            "background": background,
            "others": (cpu_stat()[0] - busy0 - (children_cpu() - ours0)) / run_wall,
            "run_wall": run_wall,
            "id_lines": ids,
        },
    }
    report = render(raw)
    print(report)
    if args.json:
        Path(args.json).write_text(json.dumps(raw))
    if args.write:
        path = Path(args.write)
        text = path.read_text() if path.exists() else HEADER
        path.write_text(text.rstrip("\n") + "\n\n" + report)
        log(f"appended to {path}")


if __name__ == "__main__":
    main()
