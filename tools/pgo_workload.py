"""The work an instrumented build runs so the release wheel is optimized for it (PGO).

`make wheel` builds the native module once with `-Cprofile-generate`, runs this script
against that build, merges the profiles, and builds again with `-Cprofile-use`
(tools/build_wheel.sh). The work is what users do, on the bundled sample corpus (English,
code and multilingual text), so the profile comes from the repository and not from the
benchmark corpora: counting and training at a small and a large vocabulary, from lists
and from files (gzip JSON Lines, plain text), single and batch encoding as lists and
arrays, special tokens, bytes, decoding, under the built-in patterns. Code that runs
here is optimized for speed and code that never runs for size, so every path users
take should run at least once.
"""

from __future__ import annotations

import importlib.util
import tempfile
from importlib.resources import files
from pathlib import Path

import bytebpe
from bytebpe.sample import sample_documents

# (pattern, vocabulary size): the default pattern from few merges (large rewrites) to
# many (the small merges and the queue that dominate large vocabularies), the others once.
RUNS = (("cl100k", 4096), ("cl100k", 32768), ("o200k", 4096), ("gpt2", 2048))


def main() -> None:
    train = sample_documents(split="train")
    heldout = sample_documents(split="heldout")
    # `make wheel` may run before numpy is installed; the arrays' core is the lists' own.
    arrays = importlib.util.find_spec("numpy") is not None
    for pattern, vocab_size in RUNS:
        tok = bytebpe.Tokenizer.train_from_iterator(
            train, vocab_size, pattern=pattern, progress=False
        )
        for _ in range(3):
            for text in heldout + train[:300]:
                ids = tok.encode_ordinary(text)
                assert tok.decode(ids) == text
        tok.encode_ordinary_batch(train)
        if arrays:
            tok.encode_batch_numpy(train)
            tok.encode_batch_numpy(train, num_threads=1)
        for _ in range(20):
            tok.encode_ordinary("hello world")
        tok.encode_ordinary("a" * 300_000)
        tok.encode_ordinary(" " * 300_000 + "x")
    special = bytebpe.Tokenizer.train_from_iterator(
        train, 2048, special_tokens=["<|endoftext|>"], progress=False
    )
    for text in heldout:
        ids = special.encode(text + "<|endoftext|>", allowed_special="all")
        assert special.decode(ids) == text + "<|endoftext|>"
        assert special.decode_bytes(special.encode_bytes(text.encode())) == text.encode()
    special.decode_batch(special.encode_ordinary_batch(heldout))
    sample = files("bytebpe") / "data" / "sample.jsonl.gz"
    with tempfile.TemporaryDirectory() as tmp:
        lines = Path(tmp) / "heldout.txt"
        lines.write_text("\n".join(heldout), encoding="utf-8")
        for path in (str(sample), str(lines)):
            bytebpe.Tokenizer.train_from_files(path, 2048, progress=False)


if __name__ == "__main__":
    main()
