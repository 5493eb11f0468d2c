"""The report of a tokenizer and its training run: one self-contained HTML page.

    from bytebpe.report import build_report
    build_report("tok.json", eval={"english": "en/*.txt"}, baseline="other.json").save("r.html")

or `bytebpe report PATH -o report.html [--eval NAME=FILES ...] [--baseline OTHER]`.
Modules, each with one job: source (open what is reported on), vocab and bpe (how each
token is built), evaluate (eval sets: one encoding each, every figure from it), utf8 and
unicode_blocks (what was cut or lost, by byte and block), vocabulary (composition and
health), compare (against a baseline), payload (packing), render (the page), build (all
of it in order), cli.
"""

from bytebpe.report.build import Report, build_report
from bytebpe.report.evaluate import EvalSet

__all__ = ["EvalSet", "Report", "build_report"]
