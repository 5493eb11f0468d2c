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
command, to PATH; the file gets a header when new).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shlex
import signal
import statistics
import sys
import tempfile
import time
from array import array
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
from corpora import corpus_path
from encode_children import PAIR_TIMEOUT_S, run_child, run_pair
from encode_one import WORST_CASES
from train_compare import machine, repo_state, snapshot_bytebpe, version

TOOLS = ("bytebpe", "tiktoken", "tokenizers")
# (tool, api) -> label and the call it times
BATCH_APIS = {
    ("bytebpe", "list"): "bytebpe `encode_ordinary_batch`",
    ("bytebpe", "numpy"): "bytebpe `encode_batch_numpy`",
    ("tiktoken", "list"): "tiktoken `encode_ordinary_batch`",
    ("tokenizers", "list"): "tokenizers `encode_batch` + `.ids`",
    ("tokenizers", "fast"): "tokenizers `encode_batch_fast` + `.ids`",
}
SINGLE_CALL = {
    "bytebpe": "`encode_ordinary`",
    "tiktoken": "`encode_ordinary`",
    "tokenizers": "`encode(text).ids`",
}
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


def read_dump(path: str) -> tuple[array, array] | None:
    if not os.path.exists(path) or not os.path.exists(path + ".len"):
        return None
    ids, lens = array("I"), array("I")
    with open(path, "rb") as f:
        ids.frombytes(f.read())
    with open(path + ".len", "rb") as f:
        lens.frombytes(f.read())
    return ids, lens


def compare_dumps(ref_name: str, ref: tuple[array, array], name: str, other) -> str | None:
    """None when identical, else a description of the first differences."""
    if other is None:
        return f"{name}: no ids (the run failed)"
    (rids, rlens), (oids, olens) = ref, other
    if rlens == olens and rids == oids:
        return None
    if len(rlens) != len(olens):
        return f"{name}: {len(olens)} documents, {ref_name}: {len(rlens)}"
    bad, first, ro, oo = 0, None, 0, 0
    for i, (a, b) in enumerate(zip(rlens, olens)):
        x, y = rids[ro : ro + a], oids[oo : oo + b]
        if x != y:
            bad += 1
            if first is None:
                k = next((j for j in range(min(a, b)) if x[j] != y[j]), min(a, b))
                first = (
                    f"document {i} at token {k}: {ref_name} {list(x[k : k + 5])}, "
                    f"{name} {list(y[k : k + 5])}"
                )
        ro, oo = ro + a, oo + b
    return f"{name}: {bad} of {len(rlens)} documents differ; first: {first}"


def med(runs: list[dict], key: str):
    xs = [r[key] for r in runs if r.get(key) is not None]
    return statistics.median(xs) if xs else None


def fmt(x, spec: str = ".1f", none: str = "–") -> str:
    return none if x is None else format(x, spec)


def ratio(num, den, spec: str = ".2f") -> str:
    return "–" if not num or not den else format(num / den, spec)


def paired(num_runs: list[dict], den_runs: list[dict], key: str) -> str:
    """num / den per repeat (runs paired by repeat, so both saw the same load): the median
    ratio with the min–max over the repeats, "–" without a pair."""
    xs = sorted(
        a[key] / b[key]
        for a, b in zip(num_runs, den_runs)
        if "error" not in a and "error" not in b and a.get(key) and b.get(key)
    )
    if not xs:
        return "–"
    med_x = statistics.median(xs)
    return f"{med_x:.2f}" if len(xs) == 1 else f"{med_x:.2f} ({xs[0]:.2f}–{xs[-1]:.2f})"


def others_cell(runs: list[dict]) -> str:
    """Median and max of the cores other processes kept busy during the timed parts."""
    xs = [r["others_cores"] for r in runs if r.get("others_cores") is not None]
    return "–" if not xs else f"{statistics.median(xs):.2f} (max {max(xs):.2f})"


def ok_runs(runs: list[dict]) -> list[dict]:
    return [r for r in runs if "error" not in r]


def errors(runs: list[dict]) -> str:
    return "; ".join(sorted({r["error"] for r in runs if "error" in r}))


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
    ap.add_argument("--json", metavar="PATH", help="also write every raw run here (for compare.py)")
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

        # ---- id check
        ref_name = (
            "bytebpe batch list" if "bytebpe batch list" in dumps else next(iter(dumps), None)
        )
        id_lines = []
        if ref_name:
            ref = read_dump(dumps[ref_name])
            if ref is None:
                id_lines.append(f"- Ids: no reference ({ref_name} failed).")
            else:
                problems = [
                    p
                    for name, path in dumps.items()
                    if name != ref_name
                    and (p := compare_dumps(ref_name, ref, name, read_dump(path)))
                ]
                n_tok = len(ref[0])
                if problems:
                    id_lines.append("- **Ids differ** (first repeat, against " + ref_name + "):")
                    id_lines += [f"  - {p}" for p in problems]
                else:
                    id_lines.append(
                        f"- Ids: identical across all {len(dumps)} corpus runs of the first repeat "
                        f"({', '.join(dumps)}): {len(ref[1]):,} documents, {n_tok:,} tokens "
                        f"({prep['bytes'] / n_tok:.3f} bytes/token)."
                    )
        if worst:
            bad = []
            for case in WORST_CASES:
                hashes = {t: worst[t, case].get("ids_sha256") for t in tools if (t, case) in worst}
                got = {h for h in hashes.values() if h}
                if len(got) > 1:
                    bad.append(f"{case}: " + ", ".join(f"{t} {h}" for t, h in hashes.items()))
            id_lines.append(
                "- Worst cases: ids identical between the tools that finished."
                if not bad
                else "- **Worst-case ids differ**: " + "; ".join(bad)
            )

    # ---- tables
    run_wall = time.perf_counter() - wall0
    others = (cpu_stat()[0] - busy0 - (children_cpu() - ours0)) / run_wall
    out: list[str] = []
    mb = prep["bytes"] / 1e6
    out += [
        (
            f"## {started}: encode, {corpus.name}, pattern {args.pattern}, vocab {args.vocab_size:,}, "
            f"{args.repeats} repeats"
        ),
        "",
        f"- Command: `{command}`",
        f"- Machine: {info}; at end {' '.join(f'{x:.2f}' for x in os.getloadavg())}",
        f"- Python {platform.python_version()}; "
        + ", ".join(
            f"{t} {version(t)}"
            + (f" ({prep['build']})" if t == "bytebpe" and prep.get("build") else "")
            for t in tools
        )
        + f"; numpy {version('numpy')}; {repo}",
        (
            f"- Tokenizer: bytebpe trained on the first {prep['train_bytes'] / 1e6:.4g} MB "
            f"({prep['train_docs']:,} documents) in {prep['train_s']:.1f} s, vocab {prep['vocab_out']:,}; "
            f"exported to tiktoken and Hugging Face (checked by bytebpe; not timed)."
        ),
        (
            f"- Encoded: the next {prep['docs']:,} documents, {mb:.4g} MB (median document "
            f"{prep['doc_bytes_p50']:,} bytes, largest {prep['doc_bytes_max']:,}). Batch threads: {threads}."
        ),
        "",
        "### Single thread: documents one by one",
        "",
        (
            "| tool | call | MB/s (median) | min–max | p50 µs | p95 µs | p99 µs | µs per call on 11 bytes "
            "| RSS loaded MB | peak RSS MB | others' cores |"
        ),
        "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for tool in tools:
        rs = ok_runs(single[tool])
        if not rs:
            out.append(f"| {tool} | {SINGLE_CALL[tool]} | {errors(single[tool])} | | | | | | | | |")
            continue
        xs = [r["mb_s"] for r in rs]
        out.append(
            f"| {tool} {rs[0]['version']} | {SINGLE_CALL[tool]} | **{med(rs, 'mb_s'):.2f}** "
            f"| {min(xs):.2f}–{max(xs):.2f} | {med(rs, 'p50_us'):,.0f} | {med(rs, 'p95_us'):,.0f} "
            f"| {med(rs, 'p99_us'):,.0f} | {med(rs, 'short_us'):.2f} | {med(rs, 'rss_loaded_mb'):.0f} "
            f"| {med(rs, 'peak_rss_mb'):.0f} | {others_cell(rs)} |"
        )
    out += [
        "",
        f"### Batch: one call over all documents, {threads} threads",
        "",
        (
            "| tool | MB/s (median) | min–max | CPU s / wall s "
            "| scaling (batch / own single, per repeat: median (min–max)) "
            "| scaling (batch / the same call on 1 thread) "
            "| peak RSS MB | others' cores |"
        ),
        "|---|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for key, runs in batch.items():
        rs = ok_runs(runs)
        if not rs:
            out.append(f"| {BATCH_APIS[key]} | {errors(runs)} | | | | | | |")
            continue
        xs = [r["mb_s"] for r in rs]
        util = statistics.median(r["cpu_s"] / r["wall_s"] for r in rs)
        extra = ""
        if med(rs, "call_s"):
            extra = f" (call alone {mb / med(rs, 'call_s'):.2f})"
        out.append(
            f"| {BATCH_APIS[key]} | **{med(rs, 'mb_s'):.2f}**{extra} | {min(xs):.2f}–{max(xs):.2f} "
            f"| {util:.2f} | {paired(runs, single[key[0]], 'mb_s')} "
            f"| {paired(runs, batch_one[key], 'mb_s') if key in batch_one else '–'} "
            f"| {med(rs, 'peak_rss_mb'):.0f} "
            f"| {others_cell(rs)} |"
        )

    if pairs:
        out += [
            "",
            (
                "The machine's own ceiling: bytebpe's single-thread run as two processes at "
                "once (their timed loops started together, timed until both finished) over "
                "one alone, per repeat: "
                f"{paired(pairs, single['bytebpe'], 'mb_s')} (2.00: two cores give twice "
                "one core's work; less: the cores share caches, memory or a host)."
            ),
        ]

    if worst:
        out += [
            "",
            (
                f"### Worst cases: one call on one input (median of {args.repeats} calls in one process; "
                f"killed after {args.timeout:g} s)"
            ),
            "",
            "| input | "
            + " | ".join(f"{t} s" for t in tools)
            + " | "
            + " | ".join(f"{t} ÷ bytebpe" for t in tools if t != "bytebpe")
            + " | bytebpe 1M ÷ 500k (linear: 2.0) | bytebpe ÷ 1 MB of this corpus"
            + " | tokens | peak RSS MB ("
            + ", ".join(tools)
            + ") |",
            "|---|"
            + "--:|" * len(tools)
            + "--:|" * (len(tools) - ("bytebpe" in tools))
            + "--:|--:|--:|--:|",
        ]
        notes: list[str] = []
        for case, (desc, _) in WORST_CASES.items():
            cells, secs = [], {}
            for t in tools:
                r = worst[t, case]
                if r.get("timeout"):
                    cells.append(f"> {args.timeout:g} (killed)")
                elif "error" in r:
                    where = f" after {r['median_s']:.3f} s" if "median_s" in r else ""
                    notes.append(f"{t} on `{desc}`: {r['error']}".replace("|", "/"))
                    cells.append(f"fails{where} [{len(notes)}]")
                else:
                    secs[t] = r["median_s"]
                    cells.append(f"{r['median_s']:.3f}")
            ratios = [ratio(secs.get(t), secs.get("bytebpe")) for t in tools if t != "bytebpe"]
            tokens = next(
                (worst[t, case]["tokens"] for t in tools if "tokens" in worst[t, case]), None
            )
            rss = ", ".join(fmt(worst[t, case].get("peak_rss_mb"), ".0f") for t in tools)
            b = worst.get(("bytebpe", case), {})
            linear = ratio(b.get("median_s"), b.get("half_median_s")) if "error" not in b else "–"
            prose = med(ok_runs(single.get("bytebpe", [])), "mb_s")
            # 1 MB of prose takes 1 / (MB/s) seconds on one thread.
            vs_prose = ratio(b.get("median_s"), prose and 1 / prose) if "error" not in b else "–"
            out.append(
                f"| `{desc}` | "
                + " | ".join(cells)
                + " | "
                + " | ".join(ratios)
                + f" | {linear} | {vs_prose} | {fmt(tokens, ',')} | {rss} |"
            )
        if notes:
            out += [""] + [f"[{i}] {n}  " for i, n in enumerate(notes, 1)]

    if "bytebpe" in tools and len(tools) > 1:
        anchors = [t for t in tools if t != "bytebpe"]
        bs = ok_runs(single["bytebpe"])

        def row(name: str, b, vals: list, inverse: bool = False) -> str:
            cells = [ratio(v, b) if inverse else ratio(b, v) for v in vals]
            return f"| {name} | " + " | ".join(cells) + " |"

        out += [
            "",
            "### bytebpe against the anchors",
            "",
            (
                "Speed-up = anchor time / bytebpe time (above 1: bytebpe faster); memory = bytebpe / "
                "anchor (below 1: bytebpe smaller). "
                + (
                    f"Throughput ratios are per repeat ({args.repeats} interleaved repeats)."
                    if args.repeats >= 3
                    else f"**Only {args.repeats} repeat(s): not a headline figure (needs 3).**"
                )
            ),
            "",
            "| measure | " + " | ".join(f"vs {t}" for t in anchors) + " |",
            "|---|" + "--:|" * len(anchors),
        ]
        a_single = {t: ok_runs(single[t]) for t in anchors}
        # Per-repeat ratios of interleaved runs: median (min–max), never one repeat alone.
        out.append(
            "| single-thread throughput (median of per-repeat ratios, min–max) | "
            + " | ".join(paired(single["bytebpe"], single[t], "mb_s") for t in anchors)
            + " |"
        )
        for q in ("p50", "p95", "p99"):
            out.append(
                row(
                    f"latency {q}",
                    med(bs, f"{q}_us"),
                    [med(a_single[t], f"{q}_us") for t in anchors],
                    inverse=True,
                )
            )
        a_batch = {t: ok_runs(batch.get((t, "list"), [])) for t in anchors}
        for api in ("list", "numpy"):
            if ("bytebpe", api) in batch:
                out.append(
                    row(
                        f"batch: {BATCH_APIS['bytebpe', api]} vs the anchor's batch call",
                        med(ok_runs(batch["bytebpe", api]), "mb_s"),
                        [med(a_batch[t], "mb_s") for t in anchors],
                    )
                )
        out.append(
            row(
                "peak RSS, single",
                med(bs, "peak_rss_mb"),
                [med(a_single[t], "peak_rss_mb") for t in anchors],
            )
        )
        if ("bytebpe", "list") in batch:
            out.append(
                row(
                    "peak RSS, batch (`encode_batch`)",
                    med(ok_runs(batch["bytebpe", "list"]), "peak_rss_mb"),
                    [med(a_batch[t], "peak_rss_mb") for t in anchors],
                )
            )
        for case, (desc, _) in WORST_CASES.items():
            if ("bytebpe", case) in worst:
                b = (
                    worst["bytebpe", case].get("median_s")
                    if "error" not in worst["bytebpe", case]
                    else None
                )
                vals = [
                    None if "error" in worst[t, case] else worst[t, case]["median_s"]
                    for t in anchors
                ]
                cells = []
                for t, v in zip(anchors, vals):
                    if v is None:
                        r = worst[t, case]
                        cells.append("killed" if r.get("timeout") else "anchor fails")
                    else:
                        cells.append(ratio(v, b))
                out.append(f"| worst case `{desc}` | " + " | ".join(cells) + " |")

    loads = [r["load1"] for rs in [*single.values(), *batch.values()] for r in rs if "load1" in r]
    out += ["", *id_lines]
    if loads:
        out.append(
            f"- 1-minute load average when the corpus runs started: median {statistics.median(loads):.2f}, "
            f"max {max(loads):.2f} ({ncpu} cores)."
        )
    out.append(
        "- Others' cores: CPU that other processes (and the hypervisor, as steal) used during "
        "each timed part, from /proc/stat (– when the part is under 0.2 s); above ~0.2 "
        "the run shared the machine."
    )
    out.append(
        f"- CPU used by other processes (outside this benchmark): {background:.2f} cores in a "
        f"3 s sample before the run, {max(others, 0):.2f} cores on average during its "
        f"{run_wall:.0f} s (from /proc/stat minus this benchmark's children)."
    )
    out.append("")
    report = "\n".join(out)
    print(report)
    if args.json:
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
        }
        Path(args.json).write_text(json.dumps(raw))
    if args.write:
        path = Path(args.write)
        text = path.read_text() if path.exists() else HEADER
        path.write_text(text.rstrip("\n") + "\n\n" + report)
        log(f"appended to {path}")


if __name__ == "__main__":
    main()
