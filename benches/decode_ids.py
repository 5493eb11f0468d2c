"""Decoding time of ids handed over in different forms. `decode` of one long sequence: a
list of int, NumPy arrays of several dtypes, and a list with `skip_special_tokens=True`.
`decode_batch` of the documents: as lists, as `uint16` arrays, and as one 2-D `uint16`
array of rows of 1,024 ids (a data loader's batch). The ids are those of the held-out
documents of an `encode_one.py --mode prepare` directory, encoded with its tokenizer;
best of --repeats calls each, in milliseconds.

    python benches/decode_ids.py DIR [--repeats 3]
"""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from bytebpe import Tokenizer
from encode_one import load_texts_json


def best_ms(call: Callable[[], object], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - start)
    return best * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir", type=Path, help="a directory from encode_one.py --mode prepare")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    tok = Tokenizer.load(args.dir / "tok.bbpe")
    flat, offsets = tok.encode_batch_numpy(load_texts_json(args.dir))
    ids = flat.tolist()
    arrays = {dtype: flat.astype(dtype) for dtype in (np.uint16, np.uint32, np.int64)}
    documents = np.split(arrays[np.uint16], offsets[1:-1])
    document_lists = [d.tolist() for d in documents]
    rows = arrays[np.uint16][: len(flat) // 1024 * 1024].reshape(-1, 1024)
    forms: dict[str, Callable[[], object]] = {
        "list of int": lambda: tok.decode(ids),
        "uint16 array": lambda: tok.decode(arrays[np.uint16]),
        "uint32 array": lambda: tok.decode(arrays[np.uint32]),
        "int64 array": lambda: tok.decode(arrays[np.int64]),
        "list, skip_special_tokens=True": lambda: tok.decode(ids, skip_special_tokens=True),
        "decode_batch: documents as lists": lambda: tok.decode_batch(document_lists),
        "decode_batch: documents as uint16 arrays": lambda: tok.decode_batch(documents),
        "decode_batch: 2-D uint16, rows of 1,024": lambda: tok.decode_batch(rows),
    }
    gc.disable()
    print(f"{len(ids):,} ids, {args.repeats} calls each, best ms\n")
    print("| ids as | ms |")
    print("|---|--:|")
    for name, call in forms.items():
        print(f"| {name} | {best_ms(call, args.repeats):.1f} |")


if __name__ == "__main__":
    main()
