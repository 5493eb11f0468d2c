"""The report page: every figure of a tokenizer's report computed once and drawn as one
self-contained HTML file. Works on Tokenizer objects (`Tokenizer.report` calls it; the
`bytebpe.report` package opens paths first). Modules, each with one job: vocab and bpe
(how each token is built), evaluate (eval sets: one encoding each, every figure from
it), utf8 and unicode_blocks (what was cut or lost, by byte and block), vocabulary
(composition and health), compare (against a baseline), payload (packing), render (the
page), build (all of it in order)."""

from bytebpe.report_page.build import EvalSpec, Report, build_report
from bytebpe.report_page.evaluate import DEFAULT_MAX_BYTES, EvalSet

__all__ = ["DEFAULT_MAX_BYTES", "EvalSet", "EvalSpec", "Report", "build_report"]
