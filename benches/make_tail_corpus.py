"""A realistic corpus with a web-like long tail: real documents (.jsonl, "text" field)
with one word in every `--every` replaced by a random lowercase string of 5-12 letters
(standing for the names, typos, hashes and identifiers of web text, nearly all distinct),
written as .jsonl to `--out`. Seeded, so the same corpus can be rebuilt.

    python benches/make_tail_corpus.py --files '/work/corpora-large/out/code/*.jsonl' \
        --out /work/corpora-large/tail.jsonl --every 8

It stresses the word table: the exact table grows with the number of distinct words,
which is what makes trainers run out of memory on large web corpora.
"""

from __future__ import annotations

import argparse
import glob
import json
import random
import re

WORD = re.compile(r"(?<=\s)[A-Za-z]+(?=\s)")
TABLE = bytes((97 + b % 26) for b in range(256))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--files", required=True, help="glob(s) of .jsonl files, comma-separated")
    ap.add_argument("--out", required=True)
    ap.add_argument("--every", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rnd = random.Random(args.seed)
    paths = sorted(p for g in args.files.split(",") for p in glob.glob(g))
    seen = replaced = 0

    def swap(m: re.Match[str]) -> str:
        nonlocal seen, replaced
        seen += 1
        if seen % args.every:
            return m.group(0)
        replaced += 1
        n = rnd.randint(5, 12)
        return rnd.randbytes(n).translate(TABLE).decode("ascii")

    size = 0
    with open(args.out, "w", encoding="utf-8") as out:
        for path in paths:
            with open(path, encoding="utf-8") as f:
                for line in f:
                    if not line.strip():
                        continue
                    text = WORD.sub(swap, json.loads(line)["text"])
                    size += len(text.encode("utf-8"))
                    out.write(json.dumps({"text": text}, ensure_ascii=False) + "\n")
    print(f"{len(paths)} files -> {args.out}: {size / 1e6:,.0f} MB of text, "
          f"{replaced:,} of {seen:,} words replaced by random strings")


if __name__ == "__main__":
    main()
