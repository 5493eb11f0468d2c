"""Request bodies: parsed and checked by hand, so that every error names its field.

Each `parse_*` takes the decoded JSON and returns a small request object, or raises
`ApiError` (a 4xx with a JSON body `{"error": {"code", "message", "field"}}`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Union

from bytebpe import special_policy
from bytebpe.serve.config import ServeConfig

Special = Union[Literal["all"], frozenset[str]]  # "all" or a set of special-token texts


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str, field: str | None = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.headers = headers or {}

    def body(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message, "field": self.field}}


def invalid(field: str, message: str) -> ApiError:
    return ApiError(400, "invalid_field", f"{field}: {message}", field)


def too_large(field: str, message: str) -> ApiError:
    return ApiError(413, "too_large", f"{field}: {message}", field)


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "boolean", int: "integer", float: "number", str: "string", list: "array",
            dict: "object"}.get(type(value), type(value).__name__)


def _object(body: Any, allowed: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise ApiError(400, "invalid_body",
                       f"the body must be a JSON object, not {_type_name(body)}", None)
    for key in body:
        if key not in allowed:
            raise ApiError(400, "unknown_field",
                           f"unknown field {key!r}; known fields: {', '.join(allowed)}", key)
    return body


def _bool(body: dict[str, Any], key: str) -> bool:
    value = body.get(key, False)
    if type(value) is not bool:
        raise invalid(key, f"must be a boolean, not {_type_name(value)}")
    return value


def _version(body: dict[str, Any]) -> str | None:
    value = body.get("version")
    if value is not None and type(value) is not str:
        raise invalid("version", f"must be a string, not {_type_name(value)}")
    return value


def _special(body: dict[str, Any], key: str, default: Special) -> Special:
    """"all" or a set of special tokens, by the Python API's rules (`special_policy`)."""
    if key not in body:
        return default
    value = body[key]
    if isinstance(value, dict):  # a JSON object is not a list of tokens (Python's keys)
        raise invalid(key, f"must be \"all\" or an array of strings, not {_type_name(value)}")
    try:
        return special_policy.argument(key, value)
    except (TypeError, ValueError) as e:
        message = str(e)  # it starts with the field: the key, or key[i]
        raise ApiError(400, "invalid_field", message, message.split("=")[0].split(" ")[0]) from None


def _text(value: Any, field: str, config: ServeConfig) -> int:
    """Checks one text; returns its UTF-8 length."""
    if type(value) is not str:
        raise invalid(field, f"must be a string, not {_type_name(value)}")
    if len(value) * 4 <= config.max_text_bytes:
        return len(value.encode("utf-8"))
    size = len(value.encode("utf-8"))
    if size > config.max_text_bytes:
        raise too_large(field, f"{size} bytes of UTF-8 is over the limit of "
                               f"{config.max_text_bytes} per text")
    return size


@dataclass
class EncodeRequest:
    texts: list[str]
    single: bool
    """True for {"text": ...}: the answer holds one list, not a list of lists."""
    n_bytes: int
    allowed_special: Special
    disallowed_special: Special
    return_pieces: bool
    return_offsets: bool
    version: str | None


TOKENIZE_FIELDS = ("text", "texts", "allowed_special", "disallowed_special", "return_pieces",
                   "return_offsets", "version")
COUNT_FIELDS = ("text", "texts", "allowed_special", "disallowed_special", "version")


def parse_encode(body: Any, config: ServeConfig, *, count: bool = False) -> EncodeRequest:
    body = _object(body, COUNT_FIELDS if count else TOKENIZE_FIELDS)
    if ("text" in body) == ("texts" in body):
        raise ApiError(400, "missing_field", "give exactly one of \"text\" (a string) or "
                       "\"texts\" (an array of strings)", "text")
    if "text" in body:
        texts = [body["text"]]
        n_bytes = _text(texts[0], "text", config)
        single = True
    else:
        texts = body["texts"]
        if type(texts) is not list:
            raise invalid("texts", f"must be an array of strings, not {_type_name(texts)}")
        if len(texts) > config.max_batch:
            raise too_large("texts", f"{len(texts)} texts is over the limit of "
                                     f"{config.max_batch} per request")
        n_bytes = sum(_text(t, f"texts[{i}]", config) for i, t in enumerate(texts))
        single = False
    return EncodeRequest(
        texts, single, n_bytes,
        _special(body, "allowed_special", frozenset()),
        _special(body, "disallowed_special", "all"),
        False if count else _bool(body, "return_pieces"),
        False if count else _bool(body, "return_offsets"),
        _version(body),
    )


@dataclass
class DecodeRequest:
    lists: list[list[int]]
    single: bool
    n_ids: int
    errors: str
    version: str | None


DETOKENIZE_FIELDS = ("ids", "errors", "version")


def parse_decode(body: Any, config: ServeConfig) -> DecodeRequest:
    body = _object(body, DETOKENIZE_FIELDS)
    if "ids" not in body:
        raise ApiError(400, "missing_field", "\"ids\" is required: an array of token ids, or "
                       "an array of such arrays", "ids")
    ids = body["ids"]
    if type(ids) is not list:
        raise invalid("ids", f"must be an array of integers or of arrays, not {_type_name(ids)}")
    single = not ids or type(ids[0]) is not list
    lists = [ids] if single else ids
    if not single and len(lists) > config.max_batch:
        raise too_large("ids", f"{len(lists)} lists is over the limit of {config.max_batch} "
                               "per request")
    n_ids = 0
    for i, tokens in enumerate(lists):
        if type(tokens) is not list:
            raise invalid(f"ids[{i}]", f"must be an array of integers, not {_type_name(tokens)}")
        n_ids += len(tokens)
    if n_ids > config.max_ids:
        raise too_large("ids", f"{n_ids} ids is over the limit of {config.max_ids} per request")
    errors = body.get("errors", "strict")
    if errors not in ("strict", "replace", "ignore"):
        raise invalid("errors", f"must be \"strict\", \"replace\" or \"ignore\", not {errors!r}")
    return DecodeRequest(lists, single, n_ids, errors, _version(body))


RELOAD_FIELDS: tuple[str, ...] = ()


def parse_reload(body: Any) -> None:
    if body is not None:
        _object(body, RELOAD_FIELDS)
