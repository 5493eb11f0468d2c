"""Argument checks shared by the facade, each with one wording: the error names the
argument, the value and what would be accepted."""

from __future__ import annotations

import errno
import operator
import os
from collections.abc import Iterable
from typing import Any

from bytebpe.errors import UnknownTokenError


def printable_path(path: str | bytes) -> str:
    """A file name for messages: bytes of a name that is not UTF-8 shown as \\xNN escapes
    (a str with surrogate escapes cannot be printed or encoded as UTF-8)."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def check_int(name: str, value: object, *, minimum: int, why: str = "") -> int:
    """`value` as an int of at least `minimum` (bool is not an int here)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if value < minimum:
        because = f" ({why})" if why else ""
        raise ValueError(f"{name}={value} is too small: it must be at least {minimum}{because}")
    return value


def check_optional_int(name: str, value: object, *, minimum: int) -> int | None:
    return None if value is None else check_int(name, value, minimum=minimum)


# The most threads any call accepts (the core refuses more too): far above any useful
# count on one machine, far below what exhausts the OS's thread limits.
MAX_THREADS = 1024


def check_threads(value: object) -> int | None:
    """`num_threads` as None or an int in 1..MAX_THREADS."""
    threads = check_optional_int("num_threads", value, minimum=1)
    if threads is not None and threads > MAX_THREADS:
        raise ValueError(f"num_threads={threads} is too large: it must be at most {MAX_THREADS}")
    return threads


def check_choice(name: str, value: object, choices: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name}={value!r}; choose one of {choices}")
    return value


def check_str(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, not {type(value).__name__}")
    return value


def check_text_type(text: object, name: str = "text") -> str:
    """A `str`, for encoding (whether it is valid text is check_text's question)."""
    if not isinstance(text, str):
        raise TypeError(f"{name} must be str, not {type(text).__name__} (use encode_bytes for bytes)")
    return text


def check_text(text: object, name: str = "text") -> str:
    """A `str` that is valid text (no lone surrogate), for encoding. The encoders call it
    only once the core has refused a text (it reads every `str` as UTF-8 and refuses a
    lone surrogate): a scan here would copy each non-ASCII text to UTF-8 a second time."""
    text = check_text_type(text, name)
    if text.isascii():
        return text  # CPython knows without a scan: no surrogate, and nothing to copy
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ValueError(
            f"{name} contains a lone surrogate at character {e.start}, which is not valid text; "
            "encode text.encode('utf-8', 'surrogatepass') with encode_bytes to keep it "
            "reversibly"
        ) from None
    return text


def check_errors(errors: object) -> str:
    """A decoding `errors` mode."""
    if errors not in ("strict", "replace", "ignore"):
        raise ValueError(f"errors={errors!r}; choose 'strict', 'replace' or 'ignore'")
    return str(errors)


def integer(value: object) -> int | None:
    """`value` as an int when it is an integer (an int or a NumPy integer, as indexing
    takes them; a bool is not); else None."""
    if isinstance(value, bool) or getattr(getattr(value, "dtype", None), "kind", "i") == "b":
        return None
    try:
        return operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        return None


def check_token_id(token: object, position: int) -> int:
    """A token id as an int (NumPy integers too), refused by type or by range."""
    value = integer(token)
    if value is None:
        raise TypeError(f"token at position {position} is {type(token).__name__}, expected int")
    if not 0 <= value < 2**32:
        raise UnknownTokenError(f"unknown token id {value} at position {position}")
    return value


def check_token_ids(tokens: Iterable[object]) -> None:
    """`check_token_id` of each id in turn: the first bad one is named with its place."""
    for position, token in enumerate(tokens):
        check_token_id(token, position)


def packed_ids(tokens: Any) -> tuple[bytes, int, bool] | None:
    """A one-dimensional NumPy integer array's ids as native-endian bytes, with their size
    and whether they are signed, for the core to read without a Python int per id; None
    for anything else."""
    dtype: Any = getattr(tokens, "dtype", None)
    if getattr(dtype, "kind", None) not in ("i", "u") or getattr(tokens, "ndim", None) != 1:
        return None
    if not dtype.isnative:
        tokens = tokens.astype(dtype.newbyteorder("="))
    return tokens.tobytes(), dtype.itemsize, dtype.kind == "i"


def packed_batch(batch: Any) -> tuple[list[bytes], int, bool] | None:
    """`packed_ids` of every item when all are 1-D integer arrays of one dtype (as the
    rows of a 2-D array are), with that size and signedness; None otherwise, or when
    the batch is empty."""
    data: list[bytes] = []
    kind: tuple[int, bool] | None = None
    for tokens in batch:
        packed = packed_ids(tokens)
        if packed is None or kind not in (None, packed[1:]):
            return None
        data.append(packed[0])
        kind = packed[1:]
    return None if kind is None else (data, *kind)


def token_list(tokens: Any) -> Any:
    """Token ids to decode: NumPy integer arrays become lists (other arrays are refused by
    dtype); anything else is passed on for the native decoder to check."""
    if not isinstance(tokens, Iterable):
        raise TypeError(f"token ids are a sequence of int, not {type(tokens).__name__}")
    dtype = getattr(tokens, "dtype", None)
    if dtype is not None and hasattr(tokens, "tolist"):
        if dtype.kind not in "iu":
            raise TypeError(f"token arrays must have an integer dtype, not {dtype}")
        return tokens.tolist()
    return tokens


def token_batch(batch: object) -> list[Any]:
    """The items of a batch to decode, taken once (a generator is read only here); a
    batch is an iterable of token sequences, which a `str` or `bytes` is not."""
    if isinstance(batch, (str, bytes)) or not isinstance(batch, Iterable):
        raise TypeError(
            f"a batch is a sequence of token sequences, not {type(batch).__name__}"
        )
    return list(batch)


def token_lists(batch: Any) -> list[Any]:
    """`token_list` of every item of a batch; a refusal names the item (`batch[i]`)."""
    lists = []
    for i, tokens in enumerate(batch):
        try:
            lists.append(token_list(tokens))
        except TypeError as e:
            raise TypeError(f"batch[{i}]: {e}") from None
    return lists


def check_writable_file(path: str | os.PathLike[str]) -> None:
    """Raises OSError naming `path` unless a file can be written there: its directory
    exists and `path` is not a directory. Called before long work that ends in a write."""
    name = os.fsdecode(path)  # repr() shows a non-UTF-8 byte as \\udcXX: printable
    if os.path.isdir(name):
        raise IsADirectoryError(errno.EISDIR, f"{name!r} is a directory; give a file path")
    parent = os.path.dirname(os.path.abspath(name))
    if not os.path.isdir(parent):
        raise FileNotFoundError(
            errno.ENOENT, f"cannot write {name!r}: its directory {parent!r} does not exist"
        )
    if not os.access(parent, os.W_OK):
        raise PermissionError(
            errno.EACCES, f"cannot write {name!r}: its directory {parent!r} is not writable"
        )
