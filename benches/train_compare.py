"""Training benchmark: bytebpe against rustbpe (and Hugging Face tokenizers), side by side.

Every run is a fresh process (benches/train_one.py) that loads the corpus into a list of
str, then times only the train_from_iterator call (iteration over the documents and
pre-tokenization included; gunzip and JSON parsing excluded), and reports wall and CPU
seconds, RSS after loading, peak RSS during training and for the whole process, and the
merges it produced. Runs are interleaved (repeat 1 of every tool, then repeat 2, ...) so
that load on the shared machine affects all tools alike. The table gives medians over
the repeats and ratios to bytebpe (tool / bytebpe: above 1 means bytebpe is faster or
smaller). The installed bytebpe package (an editable development build) is copied to a
temporary directory at the start and the children import that copy, so edits or
rebuilds made during the run do not change what is measured.

Usage (from the repo root):

    python benches/train_compare.py                     # 3 corpora x 100 MB, 3 repeats
    python benches/train_compare.py --corpus code --mb 10 --repeats 1   # quick check
    python benches/train_compare.py --tools bytebpe,rustbpe,tokenizers --write

Options: --corpora DIR (default ../shared/corpora relative to the repo root), --corpus
(comma list of code,english,multilingual), --mb N (first N MB of text, 1 MB = 10**6
bytes of UTF-8), --vocab-size (32768), --pattern (cl100k; gpt2, o200k or a regex),
--repeats (3), --tools (bytebpe,rustbpe), --threads N (default: all cores; bytebpe gets
it as num_threads, the other tools as RAYON_NUM_THREADS), --write (append the results to
benches/RESULTS.md), --json PATH (every raw run, for compare.py's summary).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

from corpora import corpus_path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RESULTS = HERE / "RESULTS.md"
RESULTS_HEADER = """\
# Training benchmark results

Produced by `benches/train_compare.py` (see `benches/README.md`). To reproduce, from the
repo root, with bytebpe installed (`maturin develop --release`) and the corpora in
`../shared/corpora` (or pass `--corpora DIR`):

    python benches/train_compare.py --write

Each tool trains in its own fresh process on the same documents with the same pattern
and vocabulary size. **Wall s** is the `train_from_iterator` call alone, over a list of
str already in memory (so it includes iterating over the documents and pre-tokenizing,
but not gunzip or JSON parsing); median of the repeats, with min–max. **CPU s** is
user+sys of the whole process during that call. **RSS loaded** is the RSS after loading
the corpus (before training); **peak RSS** is the process peak (the training peak in
practice). Ratios are tool / bytebpe on the medians: above 1 means bytebpe is faster or
smaller. **Merges vs ref** compares the merge list of each tool with the reference tool
(bytebpe when it ran): the length of the identical prefix, and how many tokens the two
vocabularies share; ties between equal counts are broken differently by different tools,
so lists drift apart after the first tie. Only measured figures are recorded here.
"""


def machine() -> str:
    cpu = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as f:
        mem_kb = int(next(line for line in f if line.startswith("MemTotal")).split()[1])
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return (
        f"{cpu}, {os.cpu_count()} cores, {mem_kb / 2**20:.1f} GiB RAM, "
        f"{platform.system()} {platform.release()}; load average at start {load}"
    )


def version(pkg: str) -> str:
    try:
        return metadata.version(pkg)
    except metadata.PackageNotFoundError:
        return "not installed"


def snapshot_bytebpe(tmp: str) -> str | None:
    """Copy the installed bytebpe package (Python files and native module) into tmp and
    return the directory to put on the children's PYTHONPATH; None if not installed."""
    spec = importlib.util.find_spec("bytebpe")
    if spec is None or not spec.submodule_search_locations:
        return None
    dest = Path(tmp) / "snapshot"
    shutil.copytree(
        spec.submodule_search_locations[0],
        dest / "bytebpe",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    return str(dest)


def repo_state() -> str:
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=REPO,
            text=True,
            capture_output=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=REPO,
            text=True,
            capture_output=True,
            check=False,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "repo: no commit"
    return f"repo at {head}" + (" with uncommitted changes" if dirty else "")


def run_one(args, tool: str, corpus: Path, dump: str | None, env: dict) -> dict:
    cmd = [
        sys.executable,
        str(HERE / "train_one.py"),
        "--tool",
        tool,
        "--corpus",
        str(corpus),
        "--vocab-size",
        str(args.vocab_size),
        "--pattern",
        args.pattern,
        "--threads",
        str(args.threads),
    ]
    if args.mb is not None:
        cmd += ["--mb", str(args.mb)]
    if dump:
        cmd += ["--dump-merges", dump]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=REPO, check=False)
    lines = p.stdout.strip().splitlines()
    try:
        out = json.loads(lines[-1])
    except (IndexError, json.JSONDecodeError):
        last = (p.stderr.strip().splitlines() or ["(no output)"])[-1].replace("|", "/")
        out = {"error": f"exit {p.returncode}: {last[:200]}"}
    if p.returncode and "error" not in out:
        out["error"] = f"exit {p.returncode}"
    return out


def agreement(ref: list[str], other: list[str]) -> str:
    k = 0
    while k < min(len(ref), len(other)) and ref[k] == other[k]:
        k += 1
    return f"{k:,} / {len(set(ref) & set(other)):,} of {len(ref):,}"


def check_hf_patterns() -> None:
    """The Hugging Face patterns of train_one.py must be bytebpe's exact Oniguruma
    translation of the tiktoken strings (the one the interop tests check)."""
    sys.path.insert(0, str(HERE))
    from train_one import HF_PATTERNS, PATTERNS

    try:
        from bytebpe.interop.oniguruma import to_oniguruma
    except ImportError:
        print("warning: bytebpe not importable; HF patterns not checked", file=sys.stderr)
        return
    for name, pat in PATTERNS.items():
        if to_oniguruma(pat) != HF_PATTERNS[name]:
            sys.exit(f"train_one.HF_PATTERNS[{name!r}] is not to_oniguruma(PATTERNS[{name!r}])")


def paired_ratio(runs: list[dict], ref_runs: list[dict], key: str) -> str:
    """runs / ref_runs per repeat (interleaved, so a pair saw the same load): the median
    ratio and, over several repeats, its min–max."""
    xs = sorted(a[key] / b[key] for a, b in zip(runs, ref_runs) if a.get(key) and b.get(key))
    if not xs:
        return "–"
    m = statistics.median(xs)
    return f"{m:.2f}" if len(xs) == 1 else f"{m:.2f} ({xs[0]:.2f}–{xs[-1]:.2f})"


def summarize(corpus: str, runs: dict[str, list[dict]], dumps: dict[str, str]):
    """Table rows for one corpus, and the reference tool of the ratios."""
    ok = {t: rs for t, rs in runs.items() if rs and all("error" not in r for r in rs)}
    ref = "bytebpe" if "bytebpe" in ok else next(iter(ok), None)
    med = {
        t: {
            k: statistics.median(r[k] for r in rs)
            for k in ("wall_s", "cpu_s", "rss_loaded_mb", "peak_rss_mb")
        }
        for t, rs in ok.items()
    }
    ref_merges = Path(dumps[ref]).read_text().split() if ref else []
    rows = []
    for tool, rs in runs.items():
        if tool not in ok:
            err = next((r["error"] for r in rs if "error" in r), "no run")
            todo = "TODO: " if tool == "bytebpe" else ""
            rows.append(f"| {tool} | {corpus} | | | | {todo}{err} | | | | | | | |")
            continue
        m, r0 = med[tool], rs[0]
        walls = [r["wall_s"] for r in rs]
        same = len({r["merges_sha256"] for r in rs}) == 1
        rebuilt = " (changed during the run!)" if len({r.get("build") for r in rs}) > 1 else ""
        merges = Path(dumps[tool]).read_text().split()
        agree = "ref" if tool == ref else agreement(ref_merges, merges)
        rows.append(
            f"| {tool} {r0['version']}{rebuilt} | {corpus} | {r0['bytes'] / 1e6:.4g} "
            f"| {r0['vocab_out']:,}{'' if same else ' (varies!)'} "
            f"| **{m['wall_s']:.2f}** | {min(walls):.2f}–{max(walls):.2f} | {m['cpu_s']:.1f} "
            f"| {m['rss_loaded_mb']:.0f} | **{m['peak_rss_mb']:.0f}** "
            f"| {paired_ratio(rs, runs[ref], 'wall_s')} | {m['cpu_s'] / med[ref]['cpu_s']:.2f} "
            f"| {m['peak_rss_mb'] / med[ref]['peak_rss_mb']:.2f} | {agree} |"
        )
    return rows, ref


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpora", default=str(REPO.parent / "shared" / "corpora"))
    ap.add_argument("--corpus", default="code,english,multilingual")
    ap.add_argument("--mb", type=float, default=None)
    ap.add_argument("--vocab-size", type=int, default=32768)
    ap.add_argument("--pattern", default="cl100k")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--tools", default="bytebpe,rustbpe")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--write", action="store_true", help="append results to benches/RESULTS.md")
    ap.add_argument("--json", metavar="PATH", help="also write every raw run here (for compare.py)")
    args = ap.parse_args()
    # Every tool gets the thread count explicitly: bytebpe as num_threads (its own pools
    # ignore RAYON_NUM_THREADS), the others through Rayon's environment variables.
    args.threads = args.threads or os.cpu_count() or 1
    check_hf_patterns()
    # On SIGTERM, exit through subprocess.run, which then kills the running child.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if os.getloadavg()[0] > 0.5 * (os.cpu_count() or 1):
        print(
            f"warning: machine busy (load {os.getloadavg()[0]:.2f}); timings will be noisy",
            file=sys.stderr,
        )
    tools = args.tools.split(",")
    command = shlex.join(["python", *sys.argv])
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    info = machine()
    repo = repo_state()

    rows, refs, builds = [], set(), set()
    raw: dict[str, dict[str, list[dict]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ)
        env["RAYON_NUM_THREADS"] = env["RAYON_RS_NUM_CPUS"] = str(args.threads)
        if "bytebpe" in tools and (snap := snapshot_bytebpe(tmp)):
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [snap, env.get("PYTHONPATH")]))
        for corpus in args.corpus.split(","):
            path = corpus_path(args.corpora, corpus)
            if not path.exists():
                sys.exit(f"corpus not found: {path} (use --corpora DIR)")
            runs: dict[str, list[dict]] = {t: [] for t in tools}
            dumps = {t: f"{tmp}/{corpus}-{t}.txt" for t in tools}
            for rep in range(args.repeats):
                for tool in tools:
                    if any("error" in r for r in runs[tool]):
                        continue  # it failed once (e.g. not importable): don't retry
                    r = run_one(args, tool, path, dumps[tool] if rep == 0 else None, env)
                    runs[tool].append(r)
                    if r.get("build"):
                        builds.add(r["build"])
                    print(
                        f"[{corpus} {rep + 1}/{args.repeats}] {tool}: "
                        + (r.get("error") or f"{r['wall_s']:.2f} s, {r['peak_rss_mb']:.0f} MB"),
                        file=sys.stderr,
                        flush=True,
                    )
            corpus_rows, ref = summarize(corpus, runs, dumps)
            rows += corpus_rows
            refs.add(ref)
            raw[corpus] = runs

    threads = f"{args.threads} (bytebpe num_threads, others RAYON_NUM_THREADS)"
    ref = refs.pop() if len(refs) == 1 else "ref"
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    report = "\n".join(
        [
            (
                f"## {started}: train, pattern {args.pattern}, vocab {args.vocab_size:,}, "
                f"{'all' if args.mb is None else args.mb} MB, {args.repeats} repeats"
            ),
            "",
            f"- Command: `{command}`",
            f"- Machine: {info}, at end {load}",
            f"- Python {platform.python_version()}; "
            + ", ".join(
                f"{t} {version(t)}"
                + (f" ({'; '.join(sorted(builds))})" if t == "bytebpe" and builds else "")
                for t in tools
            )
            + f"; {repo}; threads: {threads}",
            "",
            (
                "| tool | corpus | MB | vocab | wall s (median) | min–max | CPU s | RSS loaded MB "
                f"| peak RSS MB | time × {ref} per repeat: median (min–max) | CPU × {ref} | RSS × {ref} "
                f"| merges vs {ref}: same prefix / shared |"
            ),
            "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
            *rows,
            "",
        ]
    )
    print(report)
    if args.json:
        Path(args.json).write_text(
            json.dumps({"vocab_size": args.vocab_size, "threads": args.threads,
                        "load_end": os.getloadavg(), "runs": raw})
        )
    if args.write:
        text = RESULTS.read_text() if RESULTS.exists() else RESULTS_HEADER
        RESULTS.write_text(text.rstrip("\n") + "\n\n" + report)
        print(f"appended to {RESULTS}", file=sys.stderr)


if __name__ == "__main__":
    main()
