"""The whole benchmark from one command: training, phases and encoding, side by side.

For each vocabulary size it runs train_compare.py (bytebpe, rustbpe, bpeasy and Hugging
Face tokenizers on every corpus, each run a fresh process), then per corpus
phases_one.py (one plain pass over the bytes, bytebpe's counting MB/s, and its merge loop
alone in merges/s at each size), then encode_compare.py (bytebpe, tiktoken and Hugging
Face tokenizers with the same ranks: single-thread MB/s, all cores, p50/p95/p99, worst
cases). It prints one markdown section with every table and ratio, and with --write
appends it to benches/RESULTS.md.

Usage (from the repo root; the full run takes about an hour on 2 cores):

    python benches/compare.py --write
    python benches/compare.py --corpus code --vocab-sizes 8192 --mb 10 --repeats 1   # quick

Options: --corpora DIR, --corpus (code,english,multilingual), --vocab-sizes
(8192,32768,65536), --mb N (first N MB of each corpus for training; default all),
--encode-mb (20), --repeats (3), --tools (bytebpe,rustbpe,bpeasy,tokenizers), --write.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import time
from pathlib import Path

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


def phases_table(args: argparse.Namespace, corpora: list[str]) -> list[str]:
    sizes = args.vocab_sizes.split(",")
    rows = [
        "| corpus | MB | plain pass MB/s | counting MB/s (all cores) | counting ÷ plain pass "
        "| distinct words | " + " | ".join(f"merges/s at {int(s):,}" for s in sizes) + " |",
        "|---|--:|--:|--:|--:|--:|" + "--:|" * len(sizes),
    ]
    for corpus in corpora:
        cmd = [sys.executable, str(HERE / "phases_one.py"), "--corpus",
               str(Path(args.corpora) / f"{corpus}.jsonl.gz"), "--vocab-sizes", args.vocab_sizes]
        if args.mb is not None:
            cmd += ["--mb", str(args.mb)]
        out = run(cmd).strip().splitlines()
        try:
            r = json.loads(out[-1])
        except (IndexError, json.JSONDecodeError):
            rows.append(f"| {corpus} | failed | | | | |" + " |" * len(sizes))
            continue
        merges = " | ".join(
            f"{r['merge'][s]['merges_per_s']:,.0f} ({r['merge'][s]['s']:.2f} s)" for s in sizes
        )
        rows.append(
            f"| {corpus} | {r['bytes'] / 1e6:.4g} | {r['plain_mb_s']:,.0f} | {r['count_mb_s']:,.1f} "
            f"| {r['plain_mb_s'] / r['count_mb_s']:.1f}× slower | {r['distinct_words']:,} | {merges} |"
        )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpora", default=str(REPO.parent / "shared" / "corpora"))
    ap.add_argument("--corpus", default="code,english,multilingual")
    ap.add_argument("--vocab-sizes", default="8192,32768,65536")
    ap.add_argument("--mb", type=float, default=None)
    ap.add_argument("--encode-mb", type=float, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--tools", default="bytebpe,rustbpe,bpeasy,tokenizers")
    ap.add_argument("--write", action="store_true", help="append the section to RESULTS.md")
    args = ap.parse_args()
    corpora = args.corpus.split(",")
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    parts = [f"## {started}: the full comparison (`benches/compare.py`)", "",
             f"- Command: `{shlex.join(['python', *sys.argv])}`", ""]
    for size in args.vocab_sizes.split(","):
        cmd = [sys.executable, str(HERE / "train_compare.py"), "--corpora", args.corpora,
               "--corpus", args.corpus, "--vocab-size", size, "--repeats", str(args.repeats),
               "--tools", args.tools]
        if args.mb is not None:
            cmd += ["--mb", str(args.mb)]
        parts.append(demote(run(cmd)))
    parts += ["### bytebpe's phases: counting against one plain pass, merges per second", "",
              *phases_table(args, corpora), ""]
    for corpus in corpora:
        cmd = [sys.executable, str(HERE / "encode_compare.py"), "--corpora", args.corpora,
               "--corpus", corpus, "--mb", str(args.encode_mb), "--repeats", str(args.repeats)]
        parts.append(demote(run(cmd)))
    report = "\n".join(parts)
    print(report)
    if args.write:
        RESULTS.write_text(RESULTS.read_text().rstrip("\n") + "\n\n" + report)
        print(f"appended to {RESULTS}", file=sys.stderr)


if __name__ == "__main__":
    main()
