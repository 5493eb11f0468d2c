"""Token arrays for training data: which integer type holds a tokenizer's ids, and which
id ends each document. Shared by `Tokenizer.encode_batch_numpy` and `encode_to_file`."""

from __future__ import annotations

from collections.abc import Mapping

DTYPES = {"uint16": 2, "uint32": 4}


def itemsize_for(vocab_size: int, dtype: object) -> tuple[str, int]:
    """The dtype name and item size to store ids below `vocab_size`, checked to fit."""
    if dtype is None:
        name = "uint16" if vocab_size <= 2**16 else "uint32"
    else:
        name = getattr(dtype, "__name__", None) or str(getattr(dtype, "name", dtype))
        if name not in DTYPES:
            raise ValueError(f"dtype={dtype!r}; token arrays are 'uint16' or 'uint32'")
        if name == "uint16" and vocab_size > 2**16:
            raise ValueError(f"dtype=uint16 cannot hold ids up to {vocab_size - 1}; use uint32")
    return name, DTYPES[name]


def eot_id(vocab_size: int, special_tokens: Mapping[str, int], eot: object) -> int | None:
    """The id written after every document: `eot` is a special token's text or an id."""
    if eot is None:
        return None
    if isinstance(eot, str):
        if eot not in special_tokens:
            raise ValueError(
                f"eot={eot!r} is not a special token of this tokenizer "
                f"(it has {sorted(special_tokens)})"
            )
        return special_tokens[eot]
    if isinstance(eot, bool) or not isinstance(eot, int) or not 0 <= eot < vocab_size:
        raise ValueError(f"eot={eot!r} is not a token id below {vocab_size}")
    return eot
