"""The work of a request on one vocabulary snapshot: encode (with tiktoken's rules for
special tokens), pieces and offsets, decode. Plain functions of (snapshot, request),
called on the event loop for small requests and in the thread pool for large ones."""

from __future__ import annotations

from typing import Any

from bytebpe import special_policy
from bytebpe.serve.holder import Served
from bytebpe.serve.schema import ApiError, DecodeRequest, EncodeRequest, invalid

VERSION_HEADER = "x-bytebpe-vocab-version"


def _special_sets(served: Served, req: EncodeRequest) -> tuple[frozenset[str], frozenset[str]]:
    """The Python API's rules (`special_policy`), and one more: every token named must be
    a special token of this vocabulary (a typo would otherwise be ignored)."""
    specials = frozenset(served.tokenizer.special_tokens)
    for key in ("allowed_special", "disallowed_special"):
        value = getattr(req, key)
        if value != "all":
            for name in sorted(value):
                if name not in specials:
                    raise invalid(key, f"{name!r} is not a special token of this vocabulary "
                                       f"(it has {sorted(specials)})")
    allowed = special_policy.resolve(req.allowed_special, specials)
    return allowed, special_policy.resolve(req.disallowed_special, specials - allowed)


def encode_texts(served: Served, req: EncodeRequest) -> list[list[int]]:
    """The ids of every text, exactly as `Tokenizer.encode` gives them."""
    tok = served.tokenizer
    texts = req.texts
    if served.special_ids and req.allowed_special == frozenset() and req.disallowed_special == "all":
        # The default: any special token's text is an error.
        _refuse_specials(req, served.special_texts)
    elif served.special_ids or req.allowed_special != frozenset() or req.disallowed_special != "all":
        allowed, disallowed = _special_sets(served, req)
        _refuse_specials(req, disallowed)
        if allowed:
            return tok.encode_batch(texts, allowed_special=allowed, disallowed_special=())
    if len(texts) == 1:
        return [tok.encode_ordinary(texts[0])]
    return tok.encode_batch(texts) if texts else []


def encode_answer(served: Served, req: EncodeRequest) -> tuple[list[list[int]], dict[str, Any]]:
    """The ids, and the pieces and offsets when asked for (all the per-token work, so that
    a large request does all of it in the thread pool)."""
    ids = encode_texts(served, req)
    extra: dict[str, Any] = {}
    if req.return_pieces or req.return_offsets:
        both = [pieces_and_offsets(served, x) for x in ids]
        if req.return_pieces:
            extra["pieces"] = both[0][0] if req.single else [p for p, _ in both]
        if req.return_offsets:
            extra["offsets"] = both[0][1] if req.single else [o for _, o in both]
    return ids, extra


def _refuse_specials(req: EncodeRequest, disallowed: frozenset[str]) -> None:
    """Refuses the first text holding a token of `disallowed`, naming the first such
    token in it."""
    for i, text in enumerate(req.texts):
        token = special_policy.first_in(text, disallowed)
        if token is not None:
            _special_in_text(req, i, token)


def _special_in_text(req: EncodeRequest, i: int, token: str) -> None:
    field = "text" if req.single else f"texts[{i}]"
    raise invalid(field, f"contains the special token {token!r}; pass \"allowed_special\": "
                         f"[{token!r}] (or \"all\") to encode it as that token, or "
                         "\"disallowed_special\": [] to encode it as ordinary text")


def pieces_and_offsets(served: Served, ids: list[int]) -> tuple[list[Any], list[list[int]]]:
    """Each token's text (or {"hex": ...} where its bytes are not valid UTF-8) and its
    [start, end) byte offsets in the text's UTF-8."""
    table = served.token_bytes_table()
    pieces: list[Any] = []
    offsets: list[list[int]] = []
    at = 0
    for token in ids:
        data = table[token] or b""
        try:
            pieces.append(data.decode("utf-8"))
        except UnicodeDecodeError:
            pieces.append({"hex": data.hex()})
        offsets.append([at, at + len(data)])
        at += len(data)
    return pieces, offsets


def check_ids(served: Served, req: DecodeRequest) -> None:
    for i, tokens in enumerate(req.lists):
        for j, token in enumerate(tokens):
            if type(token) is not int or not served.is_valid_id(token):
                field = f"ids[{j}]" if req.single else f"ids[{i}][{j}]"
                if type(token) is not int:
                    raise invalid(field, f"must be an integer token id, not {token!r}")
                raise ApiError(
                    400, "unknown_id",
                    f"{field}: {token} is not a token id of this vocabulary (ids are "
                    f"0..{served.valid_end - 1}" + (f" except {len(served.gaps)} unused ids"
                                                    if served.gaps else "") + ")",
                    field, {VERSION_HEADER: served.name})


def decode_lists(served: Served, req: DecodeRequest) -> list[str]:
    check_ids(served, req)
    tok = served.tokenizer
    out: list[str] = []
    for i, tokens in enumerate(req.lists):
        data = tok.decode_bytes(tokens)
        try:
            out.append(data.decode("utf-8"))
        except UnicodeDecodeError as e:
            if req.errors == "strict":
                field = "ids" if req.single else f"ids[{i}]"
                raise ApiError(
                    400, "invalid_utf8",
                    f"{field}: the tokens decode to bytes that are not valid UTF-8 (at byte "
                    f"{e.start}); pass \"errors\": \"replace\" or \"ignore\"", field,
                    {VERSION_HEADER: served.name}) from None
            out.append(tok.decode(tokens, errors=req.errors))  # type: ignore[arg-type]
    return out
