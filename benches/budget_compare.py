"""Peak RSS and time of training on a streamed corpus: bytebpe (exact, and under memory
limits) against rustbpe and Hugging Face `tokenizers`, each run in its own process.

Every tool gets the same generator over the corpus files (.jsonl or .jsonl.gz, the "text"
field of each row; read line by line, never held whole), so peak RSS is what training
itself needs. Timed: the one training call (it includes reading and JSON decoding, the
same for every tool).

    python benches/budget_compare.py --files '/work/corpora-large/out/*/*.jsonl' \
        --tools bytebpe,bytebpe@1GiB,bytebpe@512MiB,rustbpe,tokenizers --repeats 1

Prints one JSON line per run and a Markdown table.
"""

from __future__ import annotations

import argparse
import glob
import gzip
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from train_one import HF_PATTERNS, PATTERNS


def docs(paths: list[str]) -> Iterator[str]:
    for path in paths:
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    yield json.loads(line)["text"]


def vm_hwm_mib() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def child(tool: str, paths: list[str], vocab_size: int, pattern: str) -> dict:
    name, _, limit = tool.partition("@")
    if name == "bytebpe":
        import bytebpe

        version = bytebpe.__version__

        def train() -> int:
            tok = bytebpe.Tokenizer.train_from_iterator(
                docs(paths), vocab_size, pattern=pattern, progress=False,
                memory_limit=limit or None,
            )
            return tok.vocab_size

    elif name == "rustbpe":
        from importlib import metadata

        import rustbpe

        version = metadata.version("rustbpe")

        def train() -> int:
            tok = rustbpe.Tokenizer()
            tok.train_from_iterator(docs(paths), vocab_size, pattern=PATTERNS[pattern])
            return tok.vocab_size

    elif name == "tokenizers":
        import tokenizers
        from tokenizers import Regex, models, pre_tokenizers, trainers

        version = tokenizers.__version__

        def train() -> int:
            tok = tokenizers.Tokenizer(models.BPE())
            tok.pre_tokenizer = pre_tokenizers.Sequence([
                pre_tokenizers.Split(Regex(HF_PATTERNS[pattern]), behavior="isolated"),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ])
            trainer = trainers.BpeTrainer(
                vocab_size=vocab_size, show_progress=False,
                initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            )
            tok.train_from_iterator(docs(paths), trainer)
            return tok.get_vocab_size()

    else:
        raise SystemExit(f"unknown tool {tool!r}")
    base = vm_hwm_mib()
    started = time.perf_counter()
    cpu = time.process_time()
    vocab = train()
    return {
        "tool": tool, "version": version, "wall_s": round(time.perf_counter() - started, 2),
        "cpu_s": round(time.process_time() - cpu, 2), "peak_rss_mib": round(vm_hwm_mib(), 1),
        "baseline_rss_mib": round(base, 1), "vocab_size": vocab,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--files", required=True, help="glob(s) of .jsonl[.gz] files, comma-separated")
    ap.add_argument("--tools", default="bytebpe,bytebpe@1GiB,rustbpe,tokenizers")
    ap.add_argument("--vocab-size", type=int, default=32768)
    ap.add_argument("--pattern", default="cl100k")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--address-space-gib", type=float, default=12,
                    help="RLIMIT_AS of each run, so a tool running out of memory fails "
                         "alone instead of waking the OOM killer on a shared machine")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    paths = sorted(p for g in args.files.split(",") for p in glob.glob(g))
    if not paths:
        raise SystemExit(f"no file matches {args.files!r}")
    if args.child:
        print(json.dumps(child(args.child, paths, args.vocab_size, args.pattern)))
        return
    size = sum(os.path.getsize(p) for p in paths)
    print(f"{len(paths)} files, {size / 1e6:,.0f} MB on disk; address space cap "
          f"{args.address_space_gib} GiB per run", flush=True)
    rows = []
    for tool in args.tools.split(","):
        runs = []
        for _ in range(args.repeats):
            cmd = [sys.executable, __file__, "--child", tool, "--files", args.files,
                   "--vocab-size", str(args.vocab_size), "--pattern", args.pattern]
            cap = int(args.address_space_gib * 2**30)

            def limit_memory(cap: int = cap) -> None:
                resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout,
                                      preexec_fn=limit_memory)
            except subprocess.TimeoutExpired:
                print(json.dumps({"tool": tool, "error": f"timeout after {args.timeout} s"}))
                break
            if proc.returncode != 0:
                print(json.dumps({"tool": tool, "error": proc.stderr.strip()[-300:],
                                  "returncode": proc.returncode}))
                break
            r = json.loads(proc.stdout.strip().splitlines()[-1])
            print(json.dumps(r), flush=True)
            runs.append(r)
        if runs:
            rows.append({
                "tool": tool, "version": runs[0]["version"],
                "wall_s": statistics.median(r["wall_s"] for r in runs),
                "cpu_s": statistics.median(r["cpu_s"] for r in runs),
                "peak_rss_mib": max(r["peak_rss_mib"] for r in runs),
                "vocab_size": runs[0]["vocab_size"], "n": len(runs),
            })
    ref = next((r for r in rows if r["tool"] == "bytebpe"), rows[0] if rows else None)
    print()
    print("| tool | version | wall s (median) | CPU s | peak RSS MiB | time × bytebpe | "
          "RSS × bytebpe | vocab |")
    print("|---|---|--:|--:|--:|--:|--:|--:|")
    for r in rows:
        print(f"| {r['tool']} | {r['version']} | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | "
              f"{r['peak_rss_mib']:,.0f} | {r['wall_s'] / ref['wall_s']:.2f} | "
              f"{r['peak_rss_mib'] / ref['peak_rss_mib']:.2f} | {r['vocab_size']:,} |")


if __name__ == "__main__":
    main()
