"""encode_compare.py's check that every tool gave the same ids.

The first repeat dumps each corpus run's ids (encode_one.py --dump: the ids as u32s, and
each document's count beside them); they are compared document by document with one
reference run. Worst cases are compared by the hash of their ids.
"""

from __future__ import annotations

import os
from array import array

from encode_worst import WORST_CASES


def read_dump(path: str) -> tuple[array, array] | None:
    if not os.path.exists(path) or not os.path.exists(path + ".len"):
        return None
    ids, lens = array("I"), array("I")
    with open(path, "rb") as f:
        ids.frombytes(f.read())
    with open(path + ".len", "rb") as f:
        lens.frombytes(f.read())
    return ids, lens


def compare_dumps(ref_name: str, ref: tuple[array, array], name: str, other) -> str | None:
    """None when identical, else a description of the first differences."""
    if other is None:
        return f"{name}: no ids (the run failed)"
    (rids, rlens), (oids, olens) = ref, other
    if rlens == olens and rids == oids:
        return None
    if len(rlens) != len(olens):
        return f"{name}: {len(olens)} documents, {ref_name}: {len(rlens)}"
    bad, first, ro, oo = 0, None, 0, 0
    for i, (a, b) in enumerate(zip(rlens, olens)):
        x, y = rids[ro : ro + a], oids[oo : oo + b]
        if x != y:
            bad += 1
            if first is None:
                k = next((j for j in range(min(a, b)) if x[j] != y[j]), min(a, b))
                first = (
                    f"document {i} at token {k}: {ref_name} {list(x[k : k + 5])}, "
                    f"{name} {list(y[k : k + 5])}"
                )
        ro, oo = ro + a, oo + b
    return f"{name}: {bad} of {len(rlens)} documents differ; first: {first}"


def id_lines(dumps: dict[str, str], corpus_bytes: int, tools: list[str], worst: dict) -> list[str]:
    """The report's lines on the ids: the corpus runs' dumps (name -> path) against
    bytebpe's batch list (or the first), and the worst cases' hashes."""
    lines: list[str] = []
    ref_name = "bytebpe batch list" if "bytebpe batch list" in dumps else next(iter(dumps), None)
    if ref_name:
        ref = read_dump(dumps[ref_name])
        if ref is None:
            lines.append(f"- Ids: no reference ({ref_name} failed).")
        else:
            problems = [
                p
                for name, path in dumps.items()
                if name != ref_name and (p := compare_dumps(ref_name, ref, name, read_dump(path)))
            ]
            n_tok = len(ref[0])
            if problems:
                lines.append("- **Ids differ** (first repeat, against " + ref_name + "):")
                lines += [f"  - {p}" for p in problems]
            else:
                lines.append(
                    f"- Ids: identical across all {len(dumps)} corpus runs of the first repeat "
                    f"({', '.join(dumps)}): {len(ref[1]):,} documents, {n_tok:,} tokens "
                    f"({corpus_bytes / n_tok:.3f} bytes/token)."
                )
    if worst:
        bad = []
        for case in WORST_CASES:
            hashes = {t: worst[t, case].get("ids_sha256") for t in tools if (t, case) in worst}
            if len({h for h in hashes.values() if h}) > 1:
                bad.append(f"{case}: " + ", ".join(f"{t} {h}" for t, h in hashes.items()))
        lines.append(
            "- Worst cases: ids identical between the tools that finished."
            if not bad
            else "- **Worst-case ids differ**: " + "; ".join(bad)
        )
    return lines
