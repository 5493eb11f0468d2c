"""Run by test_long_documents.py in a fresh process under an address-space cap: trains on
one long document under a memory limit and prints one JSON line with the process's peak
RSS and what training gave (or the error it raised).

    python tests/long_document_child.py --source file --path corpus.txt --limit 64MiB

Sources: `file` (train_from_files, documents="files"), `string` (the file read into one
str, train_from_iterator), `stream` (train_from_stream on an endless generated text cut
off after --max-bytes, never held whole).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import resource
import sys
from typing import Any

TABLE = bytes((97 + b % 26) for b in range(256))


def lines(seed: int) -> Any:
    """Endless lines of 100 random 8-letter words (nearly every word new)."""
    rnd = random.Random(seed)
    while True:
        letters = rnd.randbytes(800).translate(TABLE)
        yield b" ".join(letters[8 * i : 8 * i + 8] for i in range(100)) + b"\n"


def write_corpus(path: str, size: int, seed: int = 0) -> None:
    """`size` bytes (about) of `lines`, written without holding them."""
    with open(path, "wb") as f:
        written = 0
        for line in lines(seed):
            if written >= size:
                break
            f.write(line)
            written += len(line)


class EndlessStream:
    """A binary stream of `lines`, ending after `max_bytes`."""

    def __init__(self, max_bytes: int, seed: int = 0) -> None:
        self.left = max_bytes
        self.lines = lines(seed)
        self.buffer = b""

    def read(self, n: int = -1) -> bytes:
        while len(self.buffer) < n and self.left > 0:
            line = next(self.lines)[: self.left]
            self.left -= len(line)
            self.buffer += line
        out, self.buffer = self.buffer[:n], self.buffer[n:]
        return out


def vm_hwm() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--source", choices=["file", "string", "stream"], required=True)
    p.add_argument("--path", default=None)
    p.add_argument("--limit", required=True)
    p.add_argument("--cap", type=int, required=True, help="RLIMIT_AS in bytes")
    p.add_argument("--chunk-size", type=int, default=1 << 20)
    p.add_argument("--max-bytes", type=int, default=0)
    p.add_argument("--pattern", default="cl100k")
    p.add_argument("--vocab-size", type=int, default=300)
    args = p.parse_args()
    resource.setrlimit(resource.RLIMIT_AS, (args.cap, args.cap))
    from bytebpe import Tokenizer

    common: dict[str, Any] = dict(memory_limit=args.limit, progress=False, pattern=args.pattern)
    try:
        if args.source == "file":
            tok = Tokenizer.train_from_files(args.path, args.vocab_size, documents="files",
                                             chunk_size=args.chunk_size, **common)
        elif args.source == "string":
            with open(args.path, encoding="utf-8") as f:
                text = f.read()
            tok = Tokenizer.train_from_iterator([text], args.vocab_size, **common)
        else:
            tok = Tokenizer.train_from_stream(EndlessStream(args.max_bytes), args.vocab_size,
                                              documents="files", chunk_size=args.chunk_size,
                                              **common)
    except Exception as e:  # reported to the parent, which checks it
        json.dump({"peak_rss_bytes": vm_hwm(), "error": type(e).__name__,
                   "message": str(e)}, sys.stdout)
        print()
        return
    merges = json.dumps([list(m) for m in tok.merges()]).encode()
    training = tok.loss_report()["training"]
    json.dump({
        "peak_rss_bytes": vm_hwm(),
        "merges_sha256": hashlib.sha256(merges).hexdigest(),
        "dropped_word_mass": training["dropped_word_mass"],
        "dropped_bytes": training["dropped_bytes"],
        "bytes": training["bytes"],
        "documents": training["documents"],
    }, sys.stdout)
    print()


if __name__ == "__main__":
    main()
