"""The encoding benchmark's short timed parts made steadier: each worst-case call is
compared with the MB of held-out text timed just before it in the same process (a slow
minute on a shared host slows both sides of the ratio), and a batch run reports the
median of several timed calls."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

BENCHES = Path(__file__).resolve().parent.parent / "benches"
sys.path.insert(0, str(BENCHES))

import compare  # noqa: E402
import encode_one  # noqa: E402
import encode_report  # noqa: E402
import encode_worst  # noqa: E402


def test_prose_slices_are_consecutive_documents_of_at_least_a_megabyte():
    docs = ["x" * 400_000, "é" * 200_000, "y" * 300_000, "z" * 1_000_000, "w" * 10]
    slices = encode_worst.prose_slices(docs, 3)
    # 400 kB + 400 kB (two bytes a character) + 300 kB; then one whole MB; then the rest
    # is under a MB, so only two.
    assert slices == [docs[:3], docs[3:4]]
    assert encode_worst.prose_slices(docs, 1) == [docs[:3]]
    assert encode_worst.prose_slices([], 3) == []


def test_each_full_size_call_follows_its_own_megabyte_of_prose(monkeypatch):
    calls: list[str] = []
    # A clock that only the calls move: a character of prose costs 10 ns, one of the
    # worst case 30 ns (so it reads 3x a MB of prose), growing by run.
    clock = [0.0]
    monkeypatch.setattr(encode_worst.time, "perf_counter", lambda: clock[0])

    def single(text: str) -> list[int]:
        calls.append(text[:1] + str(len(text)))
        runs = calls.count(f"a{encode_worst.WORST_N}")
        clock[0] += len(text) * (30e-9 * runs if text[0] == "a" else 10e-9)
        return [1] * (len(text) // 2)

    slices = [[f"p{k}" * 500_000] for k in range(4)]  # 1 MB each
    args = argparse.Namespace(case="a", runs=3)
    out = encode_worst.run_worst(args, single, slices)
    full, half = f"a{encode_worst.WORST_N}", f"a{encode_worst.WORST_N // 2}"
    prose = [f"p{len(s[0])}" for s in slices]
    # The first MB untimed, the half size three times, then prose and the full size in
    # turn.
    assert calls[1:] == [half] * 3 + [prose[1], full, prose[2], full, prose[3], full]
    assert out["prose_mb"] == [1.0, 1.0, 1.0]
    assert out["prose_times_s"] == [0.01, 0.01, 0.01]
    # Each ratio is that run's call over that run's MB of prose.
    assert out["times_s"] == [0.03, 0.06, 0.09]
    assert out["vs_prose"] == [3.0, 6.0, 9.0]


def test_without_prose_a_worst_case_has_no_ratio_of_its_own():
    args = argparse.Namespace(case="digit", runs=2)
    out = encode_worst.run_worst(args, lambda text: [0], None)
    assert out["runs"] == 2 and "vs_prose" not in out


def test_the_reports_use_the_per_run_ratios_where_a_run_has_them():
    single = {"bytebpe": [{"mb_s": 100.0}, {"mb_s": 110.0}, {"mb_s": 90.0}]}
    with_ratios = {"input": '" " * 1_000_000', "median_s": 0.04, "half_median_s": 0.02,
                   "tokens": 3, "vs_prose": [4.5, 3.9, 4.2]}
    without = {"input": '"a" * 1_000_000', "median_s": 0.02, "half_median_s": 0.01, "tokens": 5}
    encode = {"english": {"threads": 2, "single": single, "batch": {},
                          "worst": {"bytebpe space": with_ratios, "bytebpe a": without}}}
    rows = [r for r in compare.summary({}, {}, encode) if "worst case" in r]
    assert rows[0].startswith('| worst case ≤5× 1 MB of prose | english, `" " * 1_000_000` '
                              "| 4.20 (3.90–4.50)× ")
    # Without them: the call over the single-thread runs' median MB/s (0.02 s × 100 MB/s).
    assert rows[1].startswith('| worst case ≤5× 1 MB of prose | english, `"a" * 1_000_000` '
                              "| 2.00× ")
    worst = {("bytebpe", case): without for case in encode_worst.WORST_CASES}
    worst["bytebpe", "space"] = with_ratios
    table = encode_report.worst_table(["bytebpe"], worst, single, 3, 120)
    # As many columns in the header, its rule and every row (no anchor's column here).
    lines = [line for line in table if line.startswith("|")]
    assert len({line.count("|") for line in lines}) == 1, lines[:3]
    cells = {line.split("|")[1].strip(): line.split("|")[4].strip()
             for line in table if line.startswith("| `")}
    assert cells['`" " * 1_000_000`'] == "4.20 (3.90–4.50)"
    assert cells['`"a" * 1_000_000`'] == "2.00"


def test_a_batch_run_reports_its_median_timed_call(monkeypatch):
    # Calls that take 0.3, 0.1 and 0.2 s on a clock only they move (after an untimed one
    # of 0.5 s): the run reports the 0.2 s call, and holds one call's output at a time.
    clock = [0.0]
    monkeypatch.setattr(encode_one.time, "perf_counter", lambda: clock[0])
    costs = iter([0.5, 0.3, 0.1, 0.2])
    alive: list[object] = []

    class Output(list):
        def __del__(self):
            alive.remove(id(self))

    def batch(texts, api, threads):
        clock[0] += next(costs)
        out = Output([[1, 2]] * len(texts))
        alive.append(id(out))
        assert len(alive) == 1, "the last call's output is dropped before the next call"
        return out, None

    args = argparse.Namespace(threads=2, calls=3, api="list", dump=None)
    texts = ["x" * 500_000, "y" * 500_000]
    out = encode_one.run_batch(args, batch, texts)
    assert out["calls"] == 3 and out["walls_s"] == [0.3, 0.1, 0.2]
    assert out["wall_s"] == 0.2 and out["mb_s"] == 5.0
