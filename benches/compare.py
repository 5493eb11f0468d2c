"""The whole benchmark from one command: training, phases and encoding, side by side.

For each vocabulary size it runs train_compare.py (bytebpe, rustbpe, bpeasy and Hugging
Face tokenizers on every corpus, each run a fresh process), then per corpus
phases_one.py (one plain pass over the bytes, bytebpe's counting MB/s, and its merge loop
alone in merges/s at each size), then encode_compare.py (bytebpe, tiktoken and Hugging
Face tokenizers with the same ranks: single-thread MB/s, all cores, p50/p95/p99, worst
cases). It prints one markdown section with every table and ratio, and with --write
appends it to benches/RESULTS.md.

Usage (from the repo root; the full run takes over an hour on 2 cores, --mb 50 took 39
minutes):

    python benches/compare.py --write
    python benches/compare.py --corpus code --vocab-sizes 8192 --mb 10 --repeats 1   # quick

Options: --corpora DIR, --corpus (english,code,multilingual,mix: the mix is 50/30/20
English/code/multilingual by bytes, built by benches/corpora.py; the worst cases run with
the first one's tokenizer), --vocab-sizes
(8192,32768,65536), --mb N (first N MB of each corpus for training; default all),
--encode-mb (20), --repeats (3), --tools (bytebpe,rustbpe,bpeasy,tokenizers), --write,
--skip-train / --skip-phases / --skip-encode (run only some parts). The section starts with
a summary table against issue 15's targets, generated from the raw runs (the children's
--json files), never typed by hand.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from corpora import corpus_path
from encode_report import prose_ratios

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RESULTS = HERE / "RESULTS.md"


def run(cmd: list[str]) -> str:
    """Runs a bench script (its progress goes to our stderr) and returns its report."""
    print("+ " + shlex.join(cmd), file=sys.stderr, flush=True)
    p = subprocess.run(cmd, cwd=REPO, stdout=subprocess.PIPE, text=True, check=False)
    if p.returncode:
        return f"(`{shlex.join(cmd)}` failed with exit {p.returncode})\n"
    return p.stdout


def demote(report: str) -> str:
    """A child's report with its headings one level down, to sit in this section."""
    lines = report.splitlines()
    return "\n".join("#" + line if line.startswith("#") else line for line in lines) + "\n"


def phases_table(args: argparse.Namespace, corpora: list[str], raw: dict) -> list[str]:
    sizes = args.vocab_sizes.split(",")
    rows = [
        "| corpus | MB | plain pass MB/s (median) | counting MB/s (all cores, median) "
        "| counting ÷ plain pass (median, min–max of the repeats) "
        "| distinct words | bytes per distinct word | " + " | ".join(f"merges/s at {int(s):,}" for s in sizes) + " |",
        "|---|--:|--:|--:|--:|--:|--:|" + "--:|" * len(sizes),
    ]
    for corpus in corpora:
        cmd = [sys.executable, str(HERE / "phases_one.py"), "--corpus",
               str(corpus_path(args.corpora, corpus)), "--vocab-sizes", args.vocab_sizes,
               "--repeats", str(args.repeats)]
        if args.mb is not None:
            cmd += ["--mb", str(args.mb)]
        out = run(cmd).strip().splitlines()
        try:
            r = json.loads(out[-1])
        except (IndexError, json.JSONDecodeError):
            rows.append(f"| {corpus} | failed | | | | | |" + " |" * len(sizes))
            continue
        raw[corpus] = r
        merges = " | ".join(
            f"{r['merge'][s]['merges_per_s']:,.0f} ({r['merge'][s]['s']:.2f} s)" for s in sizes
        )
        rows.append(
            f"| {corpus} | {r['bytes'] / 1e6:.4g} | {r['plain_mb_s']:,.0f} | {r['count_mb_s']:,.1f} "
            f"| {cell(r['count_over_plain'], '.1f')}× slower | {r['distinct_words']:,} "
            f"| {r['bytes_per_distinct_word']:.0f} | {merges} |"
        )
    return rows


def per_repeat(num: list[dict], den: list[dict], key: str) -> list[float]:
    """num[key] / den[key] for each repeat both finished (interleaved, so paired)."""
    return sorted(
        a[key] / b[key]
        for a, b in zip(num, den)
        if "error" not in a and "error" not in b and a.get(key) and b.get(key)
    )


def cell(xs: list[float], spec: str = ".2f") -> str:
    if not xs:
        return "–"
    m = statistics.median(xs)
    return format(m, spec) + ("" if len(xs) == 1 else f" ({xs[0]:{spec}}–{xs[-1]:{spec}})")


def verdict(xs: list[float], target: float, at_least: bool) -> str:
    """met / not met on the median, with how far from the target."""
    if not xs:
        return "not measured"
    m = statistics.median(xs)
    ok = m >= target if at_least else m <= target
    by = m / target if at_least else target / m
    return f"{'met' if ok else '**not met**'} ({by:.2f}× the target)"


def summary(train: dict, phases: dict, encode: dict) -> list[str]:
    """The summary against issue 15's targets, built only from the raw runs above."""
    rows = ["| target | where | measured: median (min–max over repeats) | verdict |",
            "|---|---|--:|---|"]
    for size, t in sorted(train.items(), key=lambda kv: int(kv[0])):
        for corpus, runs in t["runs"].items():
            b = runs.get("bytebpe", [])
            for anchor, target in (("rustbpe", 5), ("tokenizers", 20)):
                if anchor in runs:
                    xs = per_repeat(runs[anchor], b, "wall_s")
                    rows.append(f"| training ≥{target}× {anchor} | {corpus}, {int(size):,} "
                                f"| {cell(xs)}× | {verdict(xs, target, True)} |")
            if "rustbpe" in runs:
                def own(r: dict) -> dict:
                    if r.get("train_peak_mb") is None:
                        return {"error": "no peak"}
                    return {"mem": r["train_peak_mb"] - r["rss_loaded_mb"]}
                xs = per_repeat([own(r) for r in b], [own(r) for r in runs["rustbpe"]], "mem")
                rows.append(f"| training memory ≤0.5× rustbpe's | {corpus}, {int(size):,} "
                            f"| {cell(xs)}× | {verdict(xs, 0.5, False)} |")
    for corpus, r in phases.items():
        x = r["count_over_plain"]
        rows.append(f"| counting ≤3× a plain pass | {corpus} | {cell(x, '.1f')}× "
                    f"| {verdict(x, 3, False)} |")
        x = [r["bytes_per_distinct_word"]]
        rows.append(f"| ≤160 bytes per distinct word | {corpus} | {cell(x, '.0f')} "
                    f"| {verdict(x, 160, False)} (one run, RSS added by counting) |")
    for corpus, e in encode.items():
        single = e["single"]
        xs = per_repeat(single.get("bytebpe", []), single.get("tiktoken", []), "mb_s")
        rows.append(f"| single-thread encoding ≥10× tiktoken | {corpus} | {cell(xs)}× "
                    f"| {verdict(xs, 10, True)} |")
        for api in ("list", "numpy"):
            runs = e["batch"].get(f"bytebpe {api}")
            if runs:
                xs = per_repeat(runs, single.get("bytebpe", []), "mb_s")
                call = "encode_batch" if api == "list" else "encode_batch_numpy"
                rows.append(f"| batch ≥1.8× own single thread ({e['threads']} threads) "
                            f"| {corpus}, `{call}` against documents one by one "
                            f"| {cell(xs)}× | {verdict(xs, 1.8, True)} |")
                one = e.get("batch_one_thread", {}).get(f"bytebpe {api}")
                if one:
                    xs = per_repeat(runs, one, "mb_s")
                    rows.append(f"| batch ≥1.8× own single thread ({e['threads']} threads) "
                                f"| {corpus}, `{call}` against itself on 1 thread "
                                f"| {cell(xs)}× | {verdict(xs, 1.8, True)} |")
        pairs = e.get("pair_single")
        if pairs:
            xs = per_repeat(pairs, single.get("bytebpe", []), "mb_s")
            rows.append(f"| (the ceiling of the batch rows) | {corpus}, two single-thread "
                        f"processes at once ÷ one alone | {cell(xs)}× | the machine's own "
                        "figure, not a target |")
        prose = [r["mb_s"] for r in single.get("bytebpe", []) if "error" not in r]
        for key, w in e["worst"].items():
            if key.split(" ", 1)[0] != "bytebpe" or "error" in w or not prose:
                continue
            x = prose_ratios(w, statistics.median(prose))
            lin = w["median_s"] / w["half_median_s"] if w.get("half_median_s") else None
            rows.append(f"| worst case ≤5× 1 MB of prose | {corpus}, `{w['input']}` "
                        f"| {cell(x)}× (1M ÷ 500k: {lin:.2f}) | {verdict(x, 5, False)} |")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpora", default=str(REPO.parent / "shared" / "corpora"))
    ap.add_argument("--corpus", default="english,code,multilingual,mix")
    ap.add_argument("--vocab-sizes", default="8192,32768,65536")
    ap.add_argument("--mb", type=float, default=None)
    ap.add_argument("--encode-mb", type=float, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--tools", default="bytebpe,rustbpe,bpeasy,tokenizers")
    ap.add_argument("--write", action="store_true", help="append the section to RESULTS.md")
    ap.add_argument("--skip-train", action="store_true")
    ap.add_argument("--skip-phases", action="store_true")
    ap.add_argument("--skip-encode", action="store_true")
    args = ap.parse_args()
    if args.skip_train and args.skip_phases and args.skip_encode:
        ap.error("--skip-train, --skip-phases and --skip-encode together leave nothing to run")
    corpora = args.corpus.split(",")
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    ran = [name for name, skip in (("training", args.skip_train), ("phases", args.skip_phases),
                                   ("encoding", args.skip_encode)) if not skip]
    title = "the full comparison" if len(ran) == 3 else "the comparison, " + " and ".join(ran)
    parts = [f"## {started}: {title} (`benches/compare.py`)", "",
             f"- Command: `{shlex.join(['python', *sys.argv])}`",
             f"- Load average at the start: {load} ({os.cpu_count()} cores)", ""]
    tmp = Path(tempfile.mkdtemp(prefix="bytebpe-compare-"))
    train: dict = {}
    phases: dict = {}
    encode: dict = {}
    sections = []
    if not args.skip_train:
        for size in args.vocab_sizes.split(","):
            raw = tmp / f"train-{size}.json"
            cmd = [sys.executable, str(HERE / "train_compare.py"), "--corpora", args.corpora,
                   "--corpus", args.corpus, "--vocab-size", size, "--repeats", str(args.repeats),
                   "--tools", args.tools, "--json", str(raw)]
            if args.mb is not None:
                cmd += ["--mb", str(args.mb)]
            sections.append(demote(run(cmd)))
            if raw.exists():
                train[size] = json.loads(raw.read_text())
    if not args.skip_phases:
        sections += ["### bytebpe's phases: counting against one plain pass, merges per second",
                     "", *phases_table(args, corpora, phases), ""]
    if not args.skip_encode:
        for corpus in corpora:
            raw = tmp / f"encode-{corpus}.json"
            cmd = [sys.executable, str(HERE / "encode_compare.py"), "--corpora", args.corpora,
                   "--corpus", corpus, "--mb", str(args.encode_mb), "--repeats",
                   str(args.repeats), "--json", str(raw)]
            # The worst cases do not depend on the corpus but for the vocabulary: run them
            # once, with the tokenizer of the first corpus (english by default: the
            # target compares them with a megabyte of prose).
            if corpus != corpora[0]:
                cmd.append("--no-worst")
            sections.append(demote(run(cmd)))
            if raw.exists():
                encode[corpus] = json.loads(raw.read_text())
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    parts += ["### Summary against the targets of issue 15", "",
              "Generated from the raw runs of the sections below (ratios per interleaved "
              f"repeat; {args.repeats} repeats). Load average at the end: {load} "
              f"({os.cpu_count()} cores).", "",
              *summary(train, phases, encode), "", *sections]
    report = "\n".join(parts)
    print(report)
    if args.write:
        RESULTS.write_text(RESULTS.read_text().rstrip("\n") + "\n\n" + report)
        print(f"appended to {RESULTS}", file=sys.stderr)


if __name__ == "__main__":
    main()
