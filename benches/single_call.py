"""The cost of one `encode_ordinary` / `encode` call, two builds side by side.

Each text is a fresh `str` object (CPython has not yet made its UTF-8 copy, as for text
just read or decoded), so a call pays for reading it as UTF-8 the way a user's does.
Every run is a fresh process; the builds alternate and their order flips every repeat.
Reported: the median over --repeats of each run's ns per call (a run times --calls calls
of one kind of text).

    python benches/single_call.py --old /tmp/main/python --new python \\
        --tok /tmp/en/tok.bbpe --repeats 7
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import bytebpe
tok = bytebpe.Tokenizer.load(sys.argv[2])
call, kind, calls = sys.argv[3], sys.argv[4], int(sys.argv[5])
encode = tok.encode_ordinary if call == "encode_ordinary" else tok.encode
base = {"empty": "", "short": "héllo wörld", "long": "Grüße aus Köln, où l'été " * 400}[kind]
# Distinct str objects, none yet read as UTF-8 (a join makes a new object each time).
texts = ["".join([base, str(i)]) if kind != "empty" else "" for i in range(calls)]
encode("warm-up: the int cache and the pool ünicode")
t0 = time.perf_counter_ns()
for t in texts:
    encode(t)
print(json.dumps({"ns": (time.perf_counter_ns() - t0) / calls}))
"""

CASES = [
    ("encode_ordinary", "empty", 200_000),
    ("encode_ordinary", "short", 200_000),
    ("encode_ordinary", "long", 2_000),
    ("encode", "empty", 200_000),
    ("encode", "short", 200_000),
    ("encode", "long", 2_000),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", required=True, help="python/ folder of the old build")
    ap.add_argument("--new", required=True, help="python/ folder of the new build")
    ap.add_argument("--tok", required=True, help="a saved tokenizer (.bbpe)")
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        builds = {}
        for name in ("old", "new"):
            dest = Path(tmp) / name
            src = Path(getattr(args, name)) / "bytebpe"
            shutil.copytree(src, dest / "bytebpe", ignore=shutil.ignore_patterns("__pycache__"))
            builds[name] = str(dest)
        ns: dict[tuple[str, str, str], list[float]] = {}
        for rep in range(args.repeats):
            order = ["old", "new"] if rep % 2 == 0 else ["new", "old"]
            for call, kind, calls in CASES:
                for name in order:
                    out = subprocess.run(
                        [sys.executable, "-c", CHILD, builds[name], args.tok, call, kind, str(calls)],
                        capture_output=True, text=True, check=True, timeout=300,
                    )
                    ns.setdefault((name, call, kind), []).append(json.loads(out.stdout)["ns"])
    print("| call | text | old ns | new ns | new / old |")
    print("|---|---|--:|--:|--:|")
    for call, kind, _ in CASES:
        old = statistics.median(ns[("old", call, kind)])
        new = statistics.median(ns[("new", call, kind)])
        print(f"| `{call}` | {kind} | {old:,.0f} | {new:,.0f} | {new / old:.2f} |")


if __name__ == "__main__":
    main()
