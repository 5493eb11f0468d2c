"""The report page: every figure of a tokenizer's report computed once and drawn as one
self-contained HTML file. Works on Tokenizer objects (`Tokenizer.report` calls it; the
`bytebpe.report` package opens paths first). Modules, each with one job: vocab and bpe
(how each token is built), evaluate (eval sets: one encoding each, every figure from
it), utf8 and unicode_blocks (what was cut or lost, by byte and block), vocabulary
(composition and health), compare (against a baseline), payload (packing), render (the
page), build (all of it in order).

The modules load on first use (PEP 562): `import bytebpe` does not pay for the report.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

# At most this many bytes of each eval set are read (16 MB).
DEFAULT_MAX_BYTES = 16 * 10**6

if TYPE_CHECKING:
    from bytebpe.report_page.build import EvalSpec, Report, build_report
    from bytebpe.report_page.evaluate import EvalSet

__all__ = ["DEFAULT_MAX_BYTES", "EvalSet", "EvalSpec", "Report", "build_report"]

_LAZY = {"EvalSpec": "build", "Report": "build", "build_report": "build", "EvalSet": "evaluate"}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        return getattr(importlib.import_module(f"bytebpe.report_page.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'bytebpe.report_page' has no attribute {name!r}")
