"""Huge tokens and huge words: time at two sizes, to show linear scaling.

    python benches/huge_tokens.py                 # print a markdown table
    python benches/huge_tokens.py --runs 3        # median of 3 runs per case

Cases, each in a fresh process (median of `--runs` wall times of the call alone):
  load     `Tokenizer.load` of a `.tiktoken` file: the 256 bytes plus one token of N bytes
  chain    `CoreTokenizer.from_merges` of a log whose token k is "a" * (k + 2): the token
           bytes are about k**2 / 2 and every token splits at every point
  train    `Tokenizer.train_from_iterator(["ab" * (N / 2)], 1000)`: one word of N bytes
  random   the same on one word of N random lowercase letters (merges until no pair
           repeats: about 4% of N, so more merges at the larger size)
  spaces   the same on one piece of N spaces
The ratio of the two times beside the ratio of the two sizes (for chain, of the token
bytes) shows how each case scales (linear: the same ratio).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import textwrap

CHILD = {
    "load": """
        import base64, os
        from bytebpe import Tokenizer
        path = os.path.join({tmp!r}, "big.tiktoken")
        with open(path, "wb") as f:
            for b in range(256):
                f.write(base64.b64encode(bytes([b])) + b" %d\\n" % b)
            f.write(base64.b64encode(b"x" * {n}) + b" 256\\n")
        start = time.perf_counter()
        Tokenizer.load(path, pattern="cl100k")
    """,
    "chain": """
        from bytebpe import _bytebpe
        a = ord("a")
        merges = [(a, a, 256, 0)] + [(255 + k, a, 256 + k, 0) for k in range(1, {n})]
        start = time.perf_counter()
        _bytebpe.CoreTokenizer.from_merges("cl100k", merges, [])
    """,
    "train": """
        import warnings
        from bytebpe import Tokenizer
        warnings.simplefilter("ignore")
        word = "ab" * ({n} // 2)
        start = time.perf_counter()
        Tokenizer.train_from_iterator([word], 1000, progress=False)
    """,
    "random": """
        import random, warnings
        from bytebpe import Tokenizer
        warnings.simplefilter("ignore")
        rng = random.Random(0)
        word = "".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k={n}))
        start = time.perf_counter()
        Tokenizer.train_from_iterator([word], 1_000_000, progress=False)
    """,
    "spaces": """
        import warnings
        from bytebpe import Tokenizer
        warnings.simplefilter("ignore")
        word = " " * {n}
        start = time.perf_counter()
        Tokenizer.train_from_iterator([word], 1000, progress=False)
    """,
}

SIZES = {
    "load": (1 << 20, 4 << 20),
    "chain": (2000, 4000),
    "train": (800_000, 3_200_000),
    "random": (200_000, 800_000),
    "spaces": (10_000_000, 20_000_000),
}

UNITS = {"load": "token bytes", "chain": "merges", "train": "word bytes",
         "random": "word bytes", "spaces": "bytes"}


def total_bytes(case: str, n: int) -> int:
    """The bytes the case is linear in (for chain, the tokens' bytes: 2 + 3 + ... + n+1)."""
    return (n + 1) * (n + 2) // 2 - 1 if case == "chain" else n


def run_once(case: str, n: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        body = textwrap.dedent(CHILD[case]).format(n=n, tmp=tmp)
        script = "import json, time\n" + body + (
            "print(json.dumps(time.perf_counter() - start))\n"
        )
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                             check=True)
    return float(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--cases", nargs="*", default=list(CHILD))
    args = parser.parse_args()
    print("| case | size | s | size ratio | time ratio |")
    print("|---|--:|--:|--:|--:|")
    for case in args.cases:
        small, large = SIZES[case]
        times = [statistics.median(run_once(case, n) for _ in range(args.runs))
                 for n in (small, large)]
        for n, t in zip((small, large), times):
            print(f"| {case} | {n:,} {UNITS[case]} | {t:.3f} | | |")
        ratio = total_bytes(case, large) / total_bytes(case, small)
        print(f"| {case} | | | {ratio:.1f} | {times[1] / times[0]:.2f} |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
