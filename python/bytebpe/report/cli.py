"""`bytebpe report PATH -o report.html [--eval NAME=FILES ...] [--baseline OTHER]`.

cli.py registers it with one line: `report_cli.add_parser(commands)`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from bytebpe.report import build_report
from bytebpe.report_page import DEFAULT_MAX_BYTES


def add_parser(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    p = commands.add_parser(
        "report",
        help="write an interactive HTML report of a tokenizer and its training run",
        description="Write one self-contained HTML page about a tokenizer: summary, merge "
        "tree explorer, growth, fairness across eval sets, composition, health, loss, and "
        "a coloured sample (against a baseline with --baseline).",
    )
    p.add_argument("path", help="tokenizer file, run store (also while training writes it), "
                   ".tiktoken file, tokenizer.json, or tiktoken:NAME")
    p.add_argument("-o", "--output", default="report.html", help="HTML file to write "
                   "(default: report.html)")
    p.add_argument("--eval", action="append", default=[], metavar="NAME=FILES",
                   help="an eval set: a name, '=', and files or globs separated by commas "
                   "(text: one document per line; .jsonl: the text field; .gz/.zst read). "
                   "Repeat for more sets. Default: the held-out part of the bundled sample")
    p.add_argument("--no-eval", action="store_true", help="measure no eval set")
    p.add_argument("--eval-max-mb", type=float, default=DEFAULT_MAX_BYTES / 1e6,
                   help="read at most this many MB of each eval set (default: %(default)g)")
    p.add_argument("--baseline", help="another tokenizer to compare with (same forms as PATH)")
    p.add_argument("--title", help="page title")
    p.add_argument("--timings", action="store_true",
                   help="print the time of each phase as JSON on standard error")
    p.set_defaults(run=run)
    return p


def parse_eval(specs: list[str]) -> dict[str, list[Path]]:
    out: dict[str, list[Path]] = {}
    for spec in specs:
        name, sep, files = spec.partition("=")
        if not sep or not name or not files:
            raise ValueError(f"--eval {spec!r}: write it as NAME=FILE[,FILE...]")
        if name in out:
            raise ValueError(f"--eval {name!r} is given twice")
        out[name] = [Path(f) for f in files.split(",") if f]
    return out


def run(args: argparse.Namespace) -> int:
    if args.no_eval and args.eval:
        raise ValueError("--no-eval and --eval exclude each other")
    evals: dict[str, list[Path]] | None = {} if args.no_eval else parse_eval(args.eval) or None
    report = build_report(args.path, eval=evals, baseline=args.baseline,
                          max_eval_bytes=int(args.eval_max_mb * 1e6), title=args.title)
    report.save(args.output)
    print(f"wrote {args.output} ({len(report.html.encode()) / 1e6:.2f} MB) in "
          f"{report.timings['total']:.2f} s", file=sys.stderr)
    if args.timings:
        print(json.dumps(report.timings), file=sys.stderr)
    return 0
