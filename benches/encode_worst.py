"""The encoding benchmark's worst cases: a million repeated characters, each timed at
two sizes (is the encoder linear on it?) and, for bytebpe, against the MB of held-out
text timed just before each full-size call in the same process (the target is a
multiple of its prose, and a slow minute on a shared host slows both sides).

encode_one.py runs it (`--mode worst`); encode_compare.py, encode_ids.py and
encode_report.py read WORST_CASES.
"""

from __future__ import annotations

import gc
import hashlib
import statistics
import time
from array import array

from train_one import peak_mb, status_mb

# The worst cases: name -> (description, text builder).
# Each case is built at n = 1,000,000 and at n // 2: the ratio of the two times shows
# whether the encoder is linear (2.0) on it, instead of claiming so from one size.
WORST_CASES = {
    "a": ('"a" * 1_000_000', lambda n: "a" * n),
    "space": ('" " * 1_000_000', lambda n: " " * n),
    "caret": ('"^" * 1_000_000', lambda n: "^" * n),
    "newline": ('"\\n" * 1_000_000', lambda n: "\n" * n),
    "digit": ('"7" * 1_000_000', lambda n: "7" * n),
    "spaces_x": ('" " * 1_000_000 + "x"', lambda n: " " * n + "x"),
}
WORST_N = 1_000_000
# The prose a worst case is compared with, timed in the same process run by run.
PROSE_BYTES = 1_000_000


def prose_slices(texts: list[str], count: int) -> list[list[str]]:
    """`count` runs of consecutive documents of the held-out text, each of at least
    PROSE_BYTES (fewer if the text runs out)."""
    slices, current, size = [], [], 0
    for text in texts:
        current.append(text)
        size += len(text.encode("utf-8"))
        if size >= PROSE_BYTES:
            slices.append(current)
            if len(slices) == count:
                break
            current, size = [], 0
    return slices


def run_worst(args, single, slices: list[list[str]] | None = None) -> dict:
    """The worst case's calls, half size then full size. Given `slices` (MBs of the
    held-out documents, `prose_slices`), each full-size call comes right after one pass
    over the next MB, document by document as in single mode, so the ratio to prose is
    taken per run from timings seconds apart, not against a single-mode run minutes
    away."""
    desc, build = WORST_CASES[args.case]
    slices = list(slices or [])
    if slices:
        for text in slices.pop(0):  # a first MB untimed: the piece cache past its start
            single(text)
    prose_s: list[float] = []

    def prose_pass(k: int) -> None:
        if k < len(slices):
            gc.disable()
            t0 = time.perf_counter()
            for text in slices[k]:
                single(text)
            prose_s.append(time.perf_counter() - t0)
            gc.enable()

    def timed(text: str, before=None) -> tuple[list[float], list[int] | None, str | None]:
        times, ids, error = [], None, None
        for k in range(args.runs):
            if before:
                before(k)
            t0 = time.perf_counter()
            try:
                ids = single(text)
            except BaseException as e:
                if isinstance(e, (KeyboardInterrupt, SystemExit)):
                    raise
                error = f"{type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"
                times.append(time.perf_counter() - t0)
                break
            times.append(time.perf_counter() - t0)
        return times, ids, error

    # The half size, then the full size, each with its own runs.
    half_times, _, half_error = timed(build(WORST_N // 2))
    times, ids, error = timed(build(WORST_N), prose_pass)
    out = {
        "case": args.case,
        "input": desc,
        "runs": len(times),
        "times_s": [round(t, 4) for t in times],
        "median_s": round(statistics.median(times), 4),
        "half_times_s": [round(t, 4) for t in half_times],
        "half_median_s": round(statistics.median(half_times), 4),
        # VmHWM alone: `getrusage`'s peak is not reset with it (`reset_peak`).
        "peak_rss_mb": round(status_mb("VmHWM") or 0, 1) or peak_mb(),
    }
    if prose_s:
        # Each run: the worst case's seconds over those of 1 MB of prose just before it.
        mbs = [sum(len(t.encode("utf-8")) for t in s) / 1e6 for s in slices]
        out["prose_mb"] = [round(mb, 3) for mb in mbs[: len(prose_s)]]
        out["prose_times_s"] = [round(t, 4) for t in prose_s]
        out["vs_prose"] = [
            round(w / (p / mb), 3) for w, p, mb in zip(times, prose_s, mbs) if p > 0
        ]
    if error or half_error:
        out["error"] = error or half_error
    else:
        out["tokens"] = len(ids)
        out["ids_sha256"] = hashlib.sha256(array("I", ids).tobytes()).hexdigest()[:16]
    return out
