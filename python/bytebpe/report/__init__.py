"""The report of a tokenizer and its training run: one self-contained HTML page.

    from bytebpe.report import build_report
    build_report("tok.json", eval={"english": "en/*.txt"}, baseline="other.json").save("r.html")

or `tok.report(eval=...)`, or `bytebpe report PATH -o report.html [--eval NAME=FILES ...]
[--baseline OTHER]`. This package opens what is reported on (`source`: a tokenizer file,
a run store and its facts, tiktoken or Hugging Face files) and holds the command; the
page itself is built by `bytebpe.report_page`, which works on Tokenizer objects and sits
below the Tokenizer class.
"""

from __future__ import annotations

import os
import time
from typing import Union

from bytebpe.report.source import open_tokenizer
from bytebpe.report_page import DEFAULT_MAX_BYTES
from bytebpe.report_page.build import EvalSpec, Report
from bytebpe.report_page.build import build_report as build_page
from bytebpe.report_page.evaluate import EvalSet
from bytebpe.tokenizer import Tokenizer

__all__ = ["EvalSet", "Report", "build_report"]

# A Tokenizer, a path to anything bytebpe reads, or "tiktoken:NAME".
Reportable = Union[Tokenizer, str, "os.PathLike[str]"]


def build_report(
    tokenizer: Reportable,
    eval: EvalSpec = None,  # the name for it (shadows the builtin here only)
    baseline: Reportable | None = None,
    *,
    max_eval_bytes: int = DEFAULT_MAX_BYTES,
    title: str | None = None,
) -> Report:
    """The report of `tokenizer` (a Tokenizer, or a path to a tokenizer file, run store,
    `.tiktoken` file or `tokenizer.json`), compared with `baseline` (the same kinds) when
    given. `eval`: {name: a file or glob (str), a list of `pathlib.Path`s, or a list of
    documents (str or bytes)}; None (default) uses the held-out part of the bundled
    sample corpus; {} measures nothing. Files are read as `bytebpe.read_files` reads
    them, up to `max_eval_bytes` per set."""
    started = time.perf_counter()
    tok, origin = open_tokenizer(tokenizer)
    base, base_origin = open_tokenizer(baseline) if baseline is not None else (None, None)
    opened = round(time.perf_counter() - started, 3)
    report = build_page(
        tok, eval, base, origin=origin, baseline_origin=base_origin,
        max_eval_bytes=max_eval_bytes, title=title,
    )
    report.timings = {"load": opened, **report.timings}
    report.timings["total"] = round(report.timings["total"] + opened, 3)
    return report
