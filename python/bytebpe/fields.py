"""Reading the fields of a tokenizer file with the place of every error: each loader
walks its format with an `At` (the file and the path to the field), so a damaged file is a
`CorruptTokenizerError` such as "'tok.json': merges[3]: expected 4 integers, got 3", and
`reading` turns whatever slips past those checks into the same error naming the file.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import Any

from bytebpe.errors import ArgumentError, CorruptTokenizerError

# Ids and ranks are u32 in the core; merge counts are u64.
MAX_ID = 2**32 - 1
MAX_COUNT = 2**64 - 1


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return {dict: "an object", list: "an array", str: "a string", int: "an integer",
            float: "a number"}.get(type(value), type(value).__name__)


class At:
    """A place in a file: the file (`where`, already quoted) and the path to a field."""

    __slots__ = ("path", "where")

    def __init__(self, where: str, path: str = "") -> None:
        self.where = where
        self.path = path

    def key(self, name: str) -> At:
        return At(self.where, f"{self.path}.{name}" if self.path else name)

    def item(self, index: int) -> At:
        return At(self.where, f"{self.path}[{index}]")

    def error(self, why: str) -> CorruptTokenizerError:
        return CorruptTokenizerError(f"{self.where}: {self.path or 'the top level'}: {why}")

    def expected(self, what: str, value: object) -> CorruptTokenizerError:
        shown = repr(value) if isinstance(value, (int, float, str)) else ""
        shown = f" {shown[:60]}" if shown else ""
        return self.error(f"expected {what}, got {_kind(value)}{shown}")

    def obj(self, value: object) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.expected("an object", value)
        return value

    def array(self, value: object) -> list[Any]:
        if not isinstance(value, list):
            raise self.expected("an array", value)
        return value

    def string(self, value: object) -> str:
        if not isinstance(value, str):
            raise self.expected("a string", value)
        return value

    def integer(self, value: object, maximum: int = MAX_ID, minimum: int = 0) -> int:
        """An integer in minimum..maximum (JSON has no other kind of id or count)."""
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.expected("an integer", value)
        if not minimum <= value <= maximum:
            raise self.error(f"{value} is out of range (expected {minimum}..{maximum})")
        return value

    def field(self, obj: dict[str, Any], name: str) -> tuple[Any, At]:
        """A required field of `obj` (which is at self) and its place."""
        if name not in obj:
            raise self.error(f"the field {name!r} is missing")
        return obj[name], self.key(name)


def parse_json(raw: bytes, where: str, what: str) -> Any:
    """The JSON document in `raw`; CorruptTokenizerError naming the file otherwise (not
    UTF-8, not JSON, nested deeper than the parser's recursion limit, huge numbers)."""
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise CorruptTokenizerError(f"{where} is not a {what} (not UTF-8: {e})") from None
    except RecursionError:
        raise CorruptTokenizerError(
            f"{where} is not a {what} (its JSON is nested too deeply)") from None
    except ValueError as e:  # JSONDecodeError, or an integer of over 4,300 digits
        raise CorruptTokenizerError(f"{where} is not a {what} (not valid JSON: {e})") from None


@contextlib.contextmanager
def reading(where: str) -> Iterator[None]:
    """Whatever goes wrong while a file is turned into a tokenizer is CorruptTokenizerError
    naming the file (the original as `__cause__`), except what is not the file's fault: an
    OS error (missing file, permission; it names the path), a bad argument
    (`ArgumentError`), a missing optional package (ImportError), running out of memory,
    and interrupts."""
    try:
        yield
    except (OSError, ArgumentError, ImportError, MemoryError):
        raise
    except CorruptTokenizerError as e:
        if where in str(e):
            raise
        raise CorruptTokenizerError(f"{where}: {e}") from e
    except RecursionError as e:
        raise CorruptTokenizerError(f"{where} is nested too deeply to read") from e
    except Exception as e:  # a ValueError of the core, or a bug: the file is refused
        message = str(e) if isinstance(e, ValueError) else f"{type(e).__name__}: {e}"
        if where not in message:
            message = f"{where}: {message}"
        raise CorruptTokenizerError(message) from e
