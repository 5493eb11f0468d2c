"""The encoding benchmark's report and id check: the tables are made from the raw runs
alone (medians, per-repeat ratios, failures named), and differing ids are found and
described document by document."""

from __future__ import annotations

import json
import sys
from array import array
from pathlib import Path

BENCHES = Path(__file__).resolve().parent.parent / "benches"
sys.path.insert(0, str(BENCHES))

import encode_ids  # noqa: E402
import encode_report  # noqa: E402
from encode_worst import WORST_CASES  # noqa: E402


def dump(path: Path, docs: list[list[int]]) -> str:
    path.write_bytes(array("I", [i for d in docs for i in d]).tobytes())
    Path(f"{path}.len").write_bytes(array("I", [len(d) for d in docs]).tobytes())
    return str(path)


def test_identical_ids_are_counted_and_differences_located(tmp_path):
    docs = [[1, 2, 3], [4, 5]]
    same = {
        "bytebpe batch list": dump(tmp_path / "ref", docs),
        "tiktoken single": dump(tmp_path / "same", docs),
    }
    lines = encode_ids.id_lines(same, 20, ["bytebpe", "tiktoken"], {})
    assert lines == [
        "- Ids: identical across all 2 corpus runs of the first repeat (bytebpe batch list, "
        "tiktoken single): 2 documents, 5 tokens (4.000 bytes/token)."
    ]
    differ = {
        **same,
        "tokenizers single": dump(tmp_path / "other", [[1, 2, 3], [4, 9, 7]]),
        "tiktoken batch list": str(tmp_path / "missing"),
        "bytebpe single": dump(tmp_path / "short", [[1, 2, 3]]),
    }
    lines = encode_ids.id_lines(differ, 20, ["bytebpe", "tiktoken"], {})
    assert lines == [
        "- **Ids differ** (first repeat, against bytebpe batch list):",
        "  - tokenizers single: 1 of 2 documents differ; first: document 1 at token 1: "
        "bytebpe batch list [5], tokenizers single [9, 7]",
        "  - tiktoken batch list: no ids (the run failed)",
        "  - bytebpe single: 1 documents, bytebpe batch list: 2",
    ]


def test_worst_case_ids_are_compared_by_hash():
    tools = ["bytebpe", "tiktoken"]
    worst = {(t, case): {"ids_sha256": "aa"} for t in tools for case in WORST_CASES}
    assert encode_ids.id_lines({}, 1, tools, worst) == [
        "- Worst cases: ids identical between the tools that finished."
    ]
    worst["tiktoken", "digit"] = {"ids_sha256": "bb"}
    worst["tiktoken", "a"] = {"error": "killed"}  # no ids: not a difference
    assert encode_ids.id_lines({}, 1, tools, worst) == [
        "- **Worst-case ids differ**: digit: bytebpe aa, tiktoken bb"
    ]


def single_run(tool: str, mb_s: float) -> dict:
    return {
        "tool": tool,
        "version": "9.9",
        "mb_s": mb_s,
        "p50_us": 100 / mb_s,
        "p95_us": 1000 / mb_s,
        "p99_us": 2000 / mb_s,
        "short_us": 0.5,
        "rss_loaded_mb": 70,
        "peak_rss_mb": 200 if tool == "bytebpe" else 400,
        "others_cores": 0.0,
        "load1": 0.5,
    }


def raw_run() -> dict:
    """A run of encode_compare.py as its --json file holds it: 3 repeats, two tools."""
    tools = ["bytebpe", "tiktoken"]
    single = {
        "bytebpe": [single_run("bytebpe", x) for x in (100.0, 110.0, 90.0)],
        "tiktoken": [single_run("tiktoken", x) for x in (10.0, 10.0, 12.0)],
    }
    batch_run = {"mb_s": 190.0, "cpu_s": 2.0, "wall_s": 1.0, "peak_rss_mb": 210}
    worst = {}
    for case in WORST_CASES:
        worst[f"bytebpe {case}"] = {"median_s": 0.01, "half_median_s": 0.005, "tokens": 7}
        worst[f"tiktoken {case}"] = {"median_s": 0.1, "peak_rss_mb": 50}
    worst["tiktoken spaces_x"] = {"median_s": 0.2, "error": "PanicException: stack | overflow"}
    worst["tiktoken a"] = {"timeout": True, "error": "killed after 20 s"}
    return {
        "corpus": "english.jsonl.gz",
        "repeats": 3,
        "threads": 2,
        "prep": {
            "bytes": 20_000_000,
            "train_bytes": 20_000_000,
            "train_docs": 10,
            "train_s": 0.4,
            "vocab_out": 32768,
            "docs": 12,
            "doc_bytes_p50": 5000,
            "doc_bytes_max": 90000,
            "build": "abc",
        },
        "single": single,
        "batch": {
            "bytebpe list": [batch_run] * 3,
            "tiktoken list": [{**batch_run, "mb_s": 19.0}, {"error": "MemoryError"}],
        },
        "batch_one_thread": {"bytebpe list": [{**batch_run, "mb_s": 95.0}] * 3},
        "pair_single": [{"mb_s": 200.0}, {"mb_s": 210.0}, {"mb_s": 180.0}],
        "worst": worst,
        "load_end": [0.5, 0.5, 0.5],
        "meta": {
            "started": "2026-12-04 20:00 UTC",
            "command": "python benches/encode_compare.py",
            "machine": "a machine",
            "python": "3.11.7",
            "versions": {"bytebpe": "0.1.0", "tiktoken": "0.14.0", "numpy": "2.4"},
            "repo": "repo at 1234567",
            "tools": tools,
            "pattern": "cl100k",
            "vocab_size": 32768,
            "timeout": 20.0,
            "ncpu": 2,
            "background": 0.01,
            "others": -0.02,
            "run_wall": 30.0,
            "id_lines": ["- Ids: identical (as id_lines says)."],
        },
    }


def row(report: str, start: str) -> list[str]:
    """The cells of the first table row that starts with `start`."""
    line = next(x for x in report.splitlines() if x.startswith(start))
    return [c.strip() for c in line.strip("|").split("|")]


def test_report_tables_come_from_the_raw_runs():
    # Through JSON, as compare.py and a saved run give it (tuples become lists).
    report = encode_report.render(json.loads(json.dumps(raw_run())))
    assert report.startswith(
        "## 2026-12-04 20:00 UTC: encode, english.jsonl.gz, pattern cl100k, vocab 32,768, "
        "3 repeats"
    )
    assert "bytebpe 0.1.0 (abc), tiktoken 0.14.0; numpy 2.4; repo at 1234567" in report
    assert row(report, "| bytebpe 9.9")[2:4] == ["**100.00**", "90.00–110.00"]
    # Per-repeat ratios: 100/10, 110/10, 90/12.
    assert row(report, "| single-thread throughput")[1] == "10.00 (7.50–11.00)"
    # Latency: the anchor's median p50 (10 µs) over bytebpe's (1 µs).
    assert row(report, "| latency p50")[1] == "10.00"
    # The batch against documents one by one, and against the same call on one thread.
    bytebpe_batch = row(report, "| bytebpe `encode_ordinary_batch`")
    assert bytebpe_batch[1:6] == [
        "**190.00**",
        "190.00–190.00",
        "2.00",
        "1.90 (1.73–2.11)",
        "2.00 (2.00–2.00)",
    ]
    # A failed repeat is left out of the medians and of the pairs.
    assert row(report, "| tiktoken `encode_ordinary_batch`")[1:5] == [
        "**19.00**",
        "19.00–19.00",
        "2.00",
        "1.90",
    ]
    # The pair over bytebpe alone, per repeat: 200/100, 210/110, 180/90.
    assert "per repeat: 2.00 (1.91–2.00)" in report
    killed = row(report, '| `"a" * 1_000_000`')
    assert killed[1:4] == ["0.010", "> 20 (killed)", "–"]
    assert killed[4:6] == ["2.00", "1.00"]  # 1M / 500k; one call over 1 MB at 100 MB/s
    failed = row(report, '| `" " * 1_000_000 + "x"`')
    assert failed[2] == "fails after 0.200 s [1]"
    assert '[1] tiktoken on `" " * 1_000_000 + "x"`: PanicException: stack / overflow' in report
    assert row(report, '| worst case `"a" * 1_000_000`')[1] == "killed"
    assert row(report, '| worst case `" " * 1_000_000 + "x"`')[1] == "anchor fails"
    assert row(report, '| worst case `"7" * 1_000_000`')[1] == "10.00"
    assert row(report, "| peak RSS, single")[1] == "0.50"
    assert "- Ids: identical (as id_lines says)." in report
    assert "median 0.50, max 0.50 (2 cores)" in report
    assert "0.01 cores in a 3 s sample before the run, 0.00 cores on average" in report


def test_fewer_than_three_repeats_are_marked_as_no_headline():
    raw = raw_run()
    raw["repeats"] = 2
    assert "**Only 2 repeat(s): not a headline figure (needs 3).**" in encode_report.render(raw)
