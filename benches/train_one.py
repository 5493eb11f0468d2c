"""Train one tool once on one corpus; print one JSON line with the measurements.

Run by train_compare.py, one fresh process per run, e.g.:

    python benches/train_one.py --tool rustbpe --corpus ../shared/corpora/code.jsonl.gz \
        --mb 10 --vocab-size 32768 --pattern cl100k

Phases:
  1. import the tool (its memory is part of the baseline);
  2. load the corpus: gunzip + JSON-decode the documents into a Python list of str
     (reported as load_s, rss_loaded_mb);
  3. train: the timed part (wall_s, cpu_s) is the single train_from_iterator call over
     iter(list) -- it includes iterating over the documents and pre-tokenization, but
     no decompression or JSON parsing;
  4. after timing, read the merges back (for the agreement check) and report.

Memory: peak_rss_mb is the whole process peak (ru_maxrss); train_peak_mb is the peak
during phase 3 alone (VmHWM after resetting it through /proc/self/clear_refs; null if
the kernel refuses), so train_peak_mb - rss_loaded_mb is training's own memory.
"""

from __future__ import annotations

import argparse
import gc
import glob
import gzip
import hashlib
import json
import os
import resource
import sys
import time
from importlib import metadata

# o200k_base pat_str, in the parts tiktoken joins with "|".
O200K_PARTS = (
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""\p{N}{1,3}""",
    r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
    r"""\s*[\r\n]+""",
    r"""\s+(?!\S)""",
    r"""\s+""",
)
# tiktoken's pat_str strings (tiktoken_ext/openai_public.py, tiktoken 0.14).
PATTERNS = {
    "gpt2": r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s""",
    "cl100k": r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",
    "o200k": "|".join(O200K_PARTS),
}
# The same patterns in Oniguruma's syntax for Hugging Face tokenizers: exactly what
# bytebpe.interop.oniguruma.to_oniguruma gives for the strings above (the translation the
# interop tests check id for id; train_compare.py refuses to run if these drift). Its
# Oniguruma reads `{1,3}+` as "({1,3})+", so the translation writes `(?>\p{N}{1,3})`, and
# `$` becomes `\z` so that `\s++$` still means the end of the piece's text.
HF_PATTERNS = {
    "gpt2": r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++\z|\s+(?!\S)|\s""",
    "cl100k": r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|(?>\p{N}{1,3})| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++\z|\s*[\r\n]|\s+(?!\S)|\s""",
    "o200k": PATTERNS["o200k"],
}


def load_texts(path: str, mb: float | None) -> list[str]:
    """Documents of a .jsonl.gz corpus, split on "\\n" only; with mb, only the first
    mb * 10**6 bytes of UTF-8 text (the last document is cut on a character boundary)."""
    limit = None if mb is None else int(mb * 1_000_000)
    texts: list[str] = []
    total = 0
    rest = ""
    with gzip.open(path, "rt", encoding="utf-8", newline="") as f:
        while limit is None or total < limit:
            chunk = f.read(1 << 20)
            lines = (rest + chunk).split("\n")
            rest = lines.pop()
            for line in lines if chunk else lines + [rest]:
                if not line.strip():
                    continue
                text = json.loads(line)["text"]
                n = len(text.encode("utf-8"))
                if limit is not None and total + n > limit:
                    text = text.encode("utf-8")[: limit - total].decode("utf-8", "ignore")
                    n = len(text.encode("utf-8"))
                texts.append(text)
                total += n
                if limit is not None and total >= limit:
                    break
            if not chunk:
                break
    return texts


def status_mb(field: str) -> float | None:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return None


def peak_mb() -> float:
    return round(
        max(status_mb("VmHWM") or 0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024), 1
    )


def reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # resets VmHWM to the current RSS
        return True
    except OSError:
        return False


def setup(tool: str, vocab_size: int, pattern: str, threads: int | None):
    """Import the tool; return (version, train(texts) -> merged token bytes in rank order,
    vocab size reported by the tool)."""
    regex = PATTERNS.get(pattern, pattern)
    if tool in ("bytebpe", "bytebpe-store"):
        import tempfile

        import bytebpe

        # bytebpe-store: the same call keeping the run in a fresh SQLite run store (the
        # cost of durability: merges committed every second, the word table saved once).
        store_dir = tempfile.mkdtemp() if tool == "bytebpe-store" else None

        def train(texts):
            store = os.path.join(store_dir, "run.sqlite") if store_dir else None
            tok = bytebpe.Tokenizer.train_from_iterator(
                iter(texts), vocab_size, pattern=pattern, progress=False, store=store,
                num_threads=threads,
            )
            return lambda: (ranked(tok.mergeable_ranks()), tok.vocab_size)

    elif tool == "rustbpe":
        import rustbpe

        def train(texts):
            tok = rustbpe.Tokenizer()
            tok.train_from_iterator(iter(texts), vocab_size, pattern=regex)
            return lambda: (ranked(tok.get_mergeable_ranks()), tok.vocab_size)

    elif tool == "bpeasy":
        import bpeasy

        def train(texts):
            # bpeasy caps token length; a cap no piece reaches keeps it comparable.
            ranks = bpeasy.train_bpe(iter(texts), regex, 1 << 20, vocab_size)
            return lambda: (ranked(ranks), len(ranks))

    elif tool == "tokenizers":
        from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers

        def train(texts):
            tok = Tokenizer(models.BPE())
            tok.pre_tokenizer = pre_tokenizers.Sequence(
                [
                    pre_tokenizers.Split(Regex(HF_PATTERNS.get(pattern, pattern)), "isolated"),
                    pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
                ]
            )
            trainer = trainers.BpeTrainer(
                vocab_size=vocab_size,
                show_progress=False,
                special_tokens=[],
                initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            )
            tok.train_from_iterator(iter(texts), trainer=trainer)
            return lambda: (hf_merged_tokens(tok), tok.get_vocab_size())

    else:
        raise SystemExit(f"unknown tool {tool!r}")
    return metadata.version(tool.split("-")[0]), train


def build_stamp(tool: str) -> str | None:
    """bytebpe is a development build that may change between runs: a short hash of its
    native module and Python sources, and when the native module was built. None for
    released tools."""
    if not tool.startswith("bytebpe"):
        return None
    import bytebpe
    import bytebpe._bytebpe as native

    files = [
        native.__file__,
        *sorted(glob.glob(os.path.join(os.path.dirname(bytebpe.__file__), "*.py"))),
    ]
    h = hashlib.sha256()
    for path in files:
        with open(path, "rb") as f:
            h.update(f.read())
    built = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(os.path.getmtime(native.__file__)))
    return f"{h.hexdigest()[:10]}, native module built {built}"


def ranked(ranks) -> list[bytes]:
    """Merged tokens (rank >= 256) in rank order, from a dict or a list of pairs."""
    items = ranks.items() if isinstance(ranks, dict) else ranks
    return [b for b, r in sorted(items, key=lambda kv: kv[1]) if r >= 256]


def hf_merged_tokens(tok) -> list[bytes]:
    # Inverse of the GPT-2 bytes_to_unicode table used by the ByteLevel pre-tokenizer.
    bs = [*range(33, 127), *range(161, 173), *range(174, 256)]
    cs = bs + [256 + i for i in range(256 - len(bs))]
    bs = bs + [b for b in range(256) if b not in bs]
    byte_of = {chr(c): b for b, c in zip(bs, cs)}
    by_id = sorted(tok.get_vocab().items(), key=lambda kv: kv[1])
    return [bytes(byte_of[ch] for ch in s) for s, i in by_id if i >= 256]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tool", required=True, choices=["bytebpe", "bytebpe-store", "rustbpe", "bpeasy", "tokenizers"])
    ap.add_argument("--corpus", required=True, help="path to a .jsonl.gz corpus")
    ap.add_argument("--mb", type=float, default=None, help="use only the first N MB of text")
    ap.add_argument("--vocab-size", type=int, default=32768)
    ap.add_argument("--pattern", default="cl100k", help="gpt2, cl100k, o200k or a regex")
    ap.add_argument("--dump-merges", help="write the merged tokens (hex, one a line) here")
    ap.add_argument(
        "--threads",
        type=int,
        default=None,
        help="bytebpe's num_threads (the others read RAYON_NUM_THREADS, set by the caller)",
    )
    args = ap.parse_args()
    if args.threads and os.environ.get("RAYON_NUM_THREADS") != str(args.threads):
        os.environ["RAYON_NUM_THREADS"] = os.environ["RAYON_RS_NUM_CPUS"] = str(args.threads)

    try:
        version, train = setup(args.tool, args.vocab_size, args.pattern, args.threads)
    except ImportError as e:
        print(json.dumps({"tool": args.tool, "error": f"ImportError: {e}"}))
        sys.exit(2)

    t0 = time.perf_counter()
    texts = load_texts(args.corpus, args.mb)
    load_s = time.perf_counter() - t0
    n_bytes = sum(len(t.encode("utf-8")) for t in texts)
    gc.collect()
    rss_loaded = status_mb("VmRSS")
    peak_reset = reset_peak()

    r0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    result = train(texts)
    wall_s = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    train_peak = status_mb("VmHWM") if peak_reset else None

    merged, vocab_out = result()
    digest = hashlib.sha256(b"".join(len(m).to_bytes(4, "little") + m for m in merged))
    if args.dump_merges:
        with open(args.dump_merges, "w") as f:
            f.writelines(m.hex() + "\n" for m in merged)
    print(
        json.dumps(
            {
                "tool": args.tool,
                "version": version,
                "build": build_stamp(args.tool),
                "corpus": args.corpus,
                "docs": len(texts),
                "bytes": n_bytes,
                "vocab_size": args.vocab_size,
                "threads": args.threads,
                "vocab_out": vocab_out,
                "merges": len(merged),
                "merges_sha256": digest.hexdigest(),
                "load_s": round(load_s, 3),
                "wall_s": round(wall_s, 3),
                "cpu_s": round(r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime, 3),
                "rss_loaded_mb": round(rss_loaded, 1),
                "train_peak_mb": None if train_peak is None else round(train_peak, 1),
                "peak_rss_mb": round(max(r1.ru_maxrss / 1024, train_peak or 0), 1),
            }
        )
    )


if __name__ == "__main__":
    main()
