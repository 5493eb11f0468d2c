"""Where a benchmark corpus named on the command line lives.

The three real corpora (english, code, multilingual) are files in the corpora folder. The
fourth, "mix", is built from them on first use: 50% English, 30% code and 20% multilingual
text by bytes, interleaved document by document so that every prefix keeps those shares
(a `--mb` slice of the mix is a mix too). It is written once to benches/.corpora/ and
rebuilt when a source changes.
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

from train_one import load_texts

MIX = (("english", 0.5), ("code", 0.3), ("multilingual", 0.2))
MIX_BYTES = 100_000_000
CACHE = Path(__file__).resolve().parent / ".corpora"


def corpus_path(corpora: str | Path, name: str) -> Path:
    """The .jsonl.gz file of corpus `name` (a name or a path ending in .gz)."""
    if name.endswith(".gz"):
        return Path(name)
    if name == "mix":
        return mix_path(Path(corpora))
    return Path(corpora) / f"{name}.jsonl.gz"


def mix_path(corpora: Path) -> Path:
    sources = [corpora / f"{name}.jsonl.gz" for name, _ in MIX]
    for src in sources:
        if not src.exists():
            raise SystemExit(f"corpus not found: {src} (the mix is built from it; use --corpora DIR)")
    stamp = [[str(src.resolve()), src.stat().st_size, src.stat().st_mtime_ns] for src in sources]
    out = CACHE / "mix.jsonl.gz"
    meta = CACHE / "mix.json"
    if out.exists() and meta.exists() and json.loads(meta.read_text()) == stamp:
        return out
    CACHE.mkdir(exist_ok=True)
    tmp = out.with_suffix(".tmp")
    write_mix(sources, tmp)
    os.replace(tmp, out)
    meta.write_text(json.dumps(stamp))
    return out


def write_mix(sources: list[Path], out: Path) -> None:
    """Greedy interleave: the next document comes from the source furthest below its share
    of what has been written so far (ties: the order of MIX), until MIX_BYTES."""
    shares = [share for _, share in MIX]
    docs = [iter(load_texts(str(src), MIX_BYTES * share * 1.05)) for src, share in zip(sources, shares)]
    written = [0] * len(sources)
    total = 0
    with gzip.open(out, "wt", encoding="utf-8", compresslevel=1, newline="") as f:
        while total < MIX_BYTES:
            deficit = [share * (total + 1) - done for share, done in zip(shares, written)]
            i = max(range(len(sources)), key=lambda k: (deficit[k], -k))
            text = next(docs[i], None)
            if text is None:
                break  # a source ran out: stop rather than skew the shares
            n = len(text.encode("utf-8"))
            f.write(json.dumps({"text": text, "src": MIX[i][0]}, ensure_ascii=False) + "\n")
            written[i] += n
            total += n
