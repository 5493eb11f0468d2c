"""Two builds of one profiling example (`examples/*_profile.rs`), run alternately.

On a shared machine one build's runs can be 30% apart from each other, more than most
changes move; a build compared with another run minutes later measures the machine. Here
each round runs both builds back to back, in an order that flips every round, and the
figure is each round's ratio (B over A), so a slow minute slows both sides of a pair.
Reported per argument set: each build's median, and the median ratio with its min–max.

Both builds must print the same result (the examples print an ids hash, the merges'
hashes or the distinct words): the line with its timings taken out must be equal, or
the script stops, since a faster build that answers differently is a bug, not a gain.

    cp target/release/examples/encode_profile /tmp/encode_profile.main     # build A
    # ... change, rebuild ...
    python benches/ab_builds.py /tmp/encode_profile.main \\
        target/release/examples/encode_profile --rounds 7 \\
        --args "en.ranks en.docs cl100k 2" --args "ml.ranks ml.docs cl100k 2"

--metric is the regex whose last match on the last output line is the figure (higher is
better; default: the last "N MB/s").
"""

from __future__ import annotations

import argparse
import re
import shlex
import statistics
import subprocess
import sys

# Timings in an example's line: "0.243 s", "82.36 MB/s", "12,284 merges/s" and the like.
TIMINGS = re.compile(r"[0-9][0-9.,]*\s*(?:s|ms|MB/s|merges/s)\b")


def run(build: str, args: list[str], metric: re.Pattern) -> tuple[float, str]:
    """The build's figure and its result (the last line without its timings)."""
    done = subprocess.run([build, *args], capture_output=True, text=True, check=False)
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        sys.exit(f"{build} {shlex.join(args)} failed ({done.returncode}):\n{done.stderr}")
    found = metric.findall(lines[-1])
    if not found:
        sys.exit(f"no {metric.pattern!r} in the last line of {build}: {lines[-1]!r}")
    return float(found[-1].replace(",", "")), TIMINGS.sub("", lines[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("a", help="build A (the reference)")
    ap.add_argument("b", help="build B (the change)")
    ap.add_argument("--args", action="append", required=True, help="one argument set")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--metric", default=r"([0-9.]+) MB/s")
    opts = ap.parse_args()
    if opts.rounds < 1:
        ap.error("--rounds must be at least 1")
    metric = re.compile(opts.metric)
    sets = [shlex.split(s) for s in opts.args]
    figures: list[list[tuple[float, float]]] = [[] for _ in sets]
    for r in range(opts.rounds):
        for i, args in enumerate(sets):
            if r % 2 == 0:
                (fa, ra), (fb, rb) = run(opts.a, args, metric), run(opts.b, args, metric)
            else:
                (fb, rb), (fa, ra) = run(opts.b, args, metric), run(opts.a, args, metric)
            if ra != rb:
                sys.exit(
                    f"the builds answer differently on {shlex.join(args)}:\n A: {ra}\n B: {rb}"
                )
            figures[i].append((fa, fb))
            print(f"round {r + 1}, {shlex.join(args)}: A {fa:g}, B {fb:g}", file=sys.stderr)
    print(f"{opts.rounds} alternated rounds; B = {opts.b}, A = {opts.a}")
    for i, args in enumerate(sets):
        pairs = figures[i]
        ratios = [b / a for a, b in pairs]
        print(
            f"{shlex.join(args)}: A {statistics.median(a for a, _ in pairs):g}, "
            f"B {statistics.median(b for _, b in pairs):g}; B/A median "
            f"{statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f})"
        )


if __name__ == "__main__":
    main()
