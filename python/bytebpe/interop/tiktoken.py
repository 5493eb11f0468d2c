"""tiktoken interop: a `tiktoken.Encoding` with identical ids, the `.tiktoken` ranks file
with its sidecar, and importing either. Takes and returns the native `CoreTokenizer`.

A `.tiktoken` file holds one line per mergeable token, `base64(bytes) SP rank`, which is
what tiktoken's `load_tiktoken_bpe` reads. It stores neither the pre-tokenization pattern
nor the special tokens, so `save_tiktoken` also writes `<path>.json`:

    {"format": "bytebpe-tiktoken-sidecar", "version": 1, "pattern": str,
     "special_tokens": {text: id, ...}, "ranks_file": basename, "ranks_sha256": hex,
     "n_ranks": int}

`ranks_sha256` ties the sidecar to the exact bytes of its ranks file: loading a file whose
digest differs (edited, cut short, or another tokenizer's file left beside this sidecar)
is a CorruptTokenizerError naming both files, rather than the other vocabulary loading
silently with this one's pattern and special tokens. Every sidecar bytebpe has written
carries the digest, so one without it is damaged and refused by field name.

Every export is checked before it is returned: the exported encoder must give bytebpe's
ids on the battery of stress strings (`battery.stress_texts`), or the export raises
ValueError. tiktoken runs the same regex engine as bytebpe (fancy-regex), so built-in
patterns export unchanged; a custom pattern that leaves text unmatched (which tiktoken
would drop) gets an extra alternative that matches exactly that text.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import re
from collections.abc import Iterable, Mapping
from types import ModuleType
from typing import Any

from bytebpe._bytebpe import CoreTokenizer, CorruptTokenizerError
from bytebpe.checks import printable_path
from bytebpe.errors import ArgumentError
from bytebpe.fields import MAX_ID, At, parse_json, reading
from bytebpe.file_format import check_header, write_atomic
from bytebpe.interop.battery import mismatch_message, stress_pieces, stress_texts
from bytebpe.patterns import builtin_sources

__all__ = [
    "from_ranks_bytes",
    "from_tiktoken",
    "read_ranks",
    "save_tiktoken",
    "sidecar_path",
    "to_tiktoken",
]

SIDECAR_FORMAT = "bytebpe-tiktoken-sidecar"
SIDECAR_VERSION = 1
_SHA256_HEX = re.compile("[0-9a-f]{64}")


# ==================== Export


def _tiktoken() -> ModuleType:
    try:
        import tiktoken
    except ImportError:
        raise ImportError(
            "tiktoken is not installed; `pip install tiktoken` to export to it"
        ) from None
    return tiktoken


def _check_specials_prefix_free(specials: Mapping[str, int]) -> None:
    texts = sorted(specials)
    for a, b in zip(texts, texts[1:]):
        if b.startswith(a):
            raise ValueError(
                f"cannot export to tiktoken: the special token {a!r} is a prefix of "
                f"{b!r}, and tiktoken picks between them in hash-map order (not the "
                f"longest, as bytebpe does), so ids could differ on text containing {b!r}"
            )


def _gap_covering(pattern: str) -> str:
    """`pattern` plus an alternative matching the text it leaves unmatched (tiktoken drops
    that text; bytebpe keeps each maximal unmatched run as a piece)."""
    return f"(?:{pattern})|(?:(?!(?:{pattern}))[\\s\\S])+"


def _encoding(name: str, pattern: str, ranks: Mapping[bytes, int],
              specials: Mapping[str, int]) -> Any:
    return _tiktoken().Encoding(
        name, pat_str=pattern, mergeable_ranks=dict(ranks), special_tokens=dict(specials)
    )


def _first_difference(core: CoreTokenizer, enc: Any, texts: Iterable[str]) -> str | None:
    """Compares ids (ordinary, and with every special allowed) and round trips."""
    texts = list(texts)
    ordinary = core.encode_batch(texts)
    try:
        got = [enc.encode_ordinary(text) for text in texts]
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:
        # its PanicException is a BaseException)
        return f"tiktoken fails on it ({type(e).__name__}: {e}; does the pattern match empty text?)"
    for text, want, ids in zip(texts, ordinary, got):
        if ids != want:
            return mismatch_message(
                "tiktoken gives different ids", text, want, ids, lambda t: len(core.decode_bytes([t]))
            )
        if enc.decode_bytes(ids) != text.encode("utf-8"):
            return f"tiktoken drops or changes text of the input {text[:120]!r}"
    specials = [text for text, _ in core.special_tokens]
    if specials:
        for k, text in enumerate(texts[:64]):
            mixed = specials[k % len(specials)].join([text, text[: len(text) // 2], ""])
            want = core.encode(mixed, set(specials))
            ids = enc.encode(mixed, allowed_special="all")
            if ids != want:
                return mismatch_message(
                    "tiktoken gives different ids with special tokens", mixed, want, ids,
                    lambda t: len(core.decode_bytes([t])),
                )
    return None


def _tiktoken_pattern(core: CoreTokenizer) -> str:
    """The pattern to give tiktoken: bytebpe's own, or that plus a gap-covering
    alternative; checked piece by piece on the battery."""
    pattern = core.pattern
    if pattern in builtin_sources():
        return pattern
    texts = stress_texts()
    want = stress_pieces(pattern)
    # A probe whose tokens are exactly the pieces: ids then show every piece boundary.
    distinct = sorted({p for ps in want for p in ps if len(p) > 1}, key=lambda p: (len(p), p))
    ranks = {bytes([b]): b for b in range(256)}
    ranks.update((p, 256 + i) for i, p in enumerate(distinct))
    probe = CoreTokenizer.from_ranks(pattern, list(ranks.items()), [])
    problem = "the pattern does not compile in tiktoken"
    for candidate in (pattern, _gap_covering(pattern)):
        try:
            enc = _encoding("bytebpe-probe", candidate, ranks, {})
        except ValueError as e:  # tiktoken wraps regex errors in ValueError
            problem = f"the pattern does not compile in tiktoken ({e})"
            continue
        difference = _first_difference(probe, enc, texts)
        if difference is None:
            return candidate
        problem = difference
    raise ValueError(
        f"cannot export to tiktoken: its pre-tokenization of the pattern {pattern!r} "
        f"differs from bytebpe's: {problem}"
    )


def to_tiktoken(core: CoreTokenizer, name: str = "bytebpe") -> Any:
    """A `tiktoken.Encoding` giving `core`'s ids (checked on the battery before return)."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty str, not {name!r}")
    _tiktoken()
    specials = dict(core.special_tokens)
    _check_specials_prefix_free(specials)
    pattern = _tiktoken_pattern(core)
    enc = _encoding(name, pattern, core.mergeable_ranks(), specials)
    difference = _first_difference(core, enc, stress_texts())
    if difference is not None:
        raise ValueError(f"cannot export to tiktoken: {difference}")
    return enc


def _ranks_bytes(ranks: Mapping[bytes, int]) -> bytes:
    lines = [
        base64.b64encode(token) + b" " + str(rank).encode("ascii") + b"\n"
        for token, rank in sorted(ranks.items(), key=lambda item: item[1])
    ]
    return b"".join(lines)


def sidecar_path(path: str | os.PathLike[str]) -> str:
    """Where the sidecar of the ranks file at `path` is."""
    return f"{os.fsdecode(path)}.json"


def save_tiktoken(core: CoreTokenizer, path: str | os.PathLike[str]) -> None:
    """Writes the ranks file at `path` and the sidecar at `<path>.json`."""
    path = os.fsdecode(path)
    data = _ranks_bytes(core.mergeable_ranks())
    sidecar = {
        "format": SIDECAR_FORMAT,
        "version": SIDECAR_VERSION,
        "pattern": core.pattern,
        "special_tokens": dict(sorted(core.special_tokens, key=lambda kv: kv[1])),
        "ranks_file": printable_path(os.path.basename(path)),  # informative only
        "ranks_sha256": hashlib.sha256(data).hexdigest(),
        "n_ranks": core.n_mergeable,
    }
    write_atomic(path, data)
    text = json.dumps(sidecar, indent=1, ensure_ascii=False) + "\n"
    write_atomic(sidecar_path(path), text.encode("utf-8"))


# ==================== Import


def read_ranks(raw: bytes, where: str) -> dict[bytes, int]:
    """The ranks of a `.tiktoken` file's bytes (`where` names it). Errors name the file
    and the line: malformed lines, bad base64, bad or repeated ranks, repeated tokens, an
    empty file."""
    ranks: dict[bytes, int] = {}
    seen_ranks: dict[int, int] = {}
    lines = raw.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for number, line in enumerate(lines, start=1):
        def bad(why: str, line: bytes = line, number: int = number) -> CorruptTokenizerError:
            shown = line[:80].decode("utf-8", "replace")
            return CorruptTokenizerError(
                f"{where}, line {number}: {why} (the line reads {shown!r}); expected "
                "'<base64 of the token bytes> <rank>', as tiktoken writes"
            )

        fields = line.rstrip(b"\r").split(b" ")
        if len(fields) != 2 or not fields[0] or not fields[1]:
            raise bad(f"{len(fields)} space-separated fields, expected 2")
        token_b64, rank_text = fields
        try:
            token = base64.b64decode(token_b64, validate=True)
        except (binascii.Error, ValueError):
            raise bad("the token is not valid base64") from None
        if not token:
            raise bad("the token is empty")
        if not rank_text.isdigit() or not rank_text.isascii():
            raise bad("the rank is not a non-negative integer")
        if len(rank_text) > 10 or int(rank_text) > MAX_ID:
            raise bad(f"the rank is too large (ranks are at most {MAX_ID})")
        rank = int(rank_text)
        if token in ranks:
            raise bad(f"the token {token!r} was already given rank {ranks[token]}")
        if rank in seen_ranks:
            raise bad(f"rank {rank} was already given on line {seen_ranks[rank]}")
        ranks[token] = rank
        seen_ranks[rank] = number
    if not ranks:
        raise CorruptTokenizerError(f"{where} is empty: no ranks in it")
    return ranks


def _read_sidecar(path: str) -> dict[str, Any] | None:
    """The sidecar of the ranks file at `path`, each field checked (None if absent)."""
    side = sidecar_path(path)
    if not os.path.exists(side):
        return None
    where = f"sidecar {side!r}"
    with open(side, "rb") as f:
        raw = f.read()
    meta = check_header(parse_json(raw, where, "bytebpe tiktoken sidecar"), where,
                        SIDECAR_FORMAT, SIDECAR_VERSION, "bytebpe tiktoken sidecar")
    top = At(where)
    value, at = top.field(meta, "pattern")
    at.string(value)
    value, at = top.field(meta, "special_tokens")
    for text, token in at.obj(value).items():
        at.key(text).integer(token)
    value, at = top.field(meta, "ranks_sha256")
    if not _SHA256_HEX.fullmatch(at.string(value)):
        raise at.expected("64 lowercase hex digits (a sha256 digest)", value)
    value, at = top.field(meta, "n_ranks")
    at.integer(value, MAX_ID + 1)
    return meta


def _check_matches_sidecar(raw: bytes, n_ranks: int, meta: dict[str, Any], path: str) -> None:
    """The ranks file must be the one the sidecar was written beside: its pattern and
    special tokens describe that vocabulary only. The digest covers the file's exact bytes;
    the rank count says how it differs (fewer: cut short, same: edited or another file)."""
    digest = hashlib.sha256(raw).hexdigest()
    if digest == meta["ranks_sha256"]:
        return
    recorded = meta["n_ranks"]
    if n_ranks < recorded:
        how = "it has fewer ranks than recorded: truncated, or another tokenizer's file"
    elif n_ranks > recorded:
        how = "it has more ranks than recorded: another tokenizer's file, or lines added"
    else:
        how = "same number of ranks, different bytes: edited, or another tokenizer's file"
    raise CorruptTokenizerError(
        f"{path!r} does not match its sidecar {sidecar_path(path)!r} ({how}): the sidecar "
        f"records {recorded:,} ranks with sha256 {meta['ranks_sha256']}, the file has "
        f"{n_ranks:,} ranks with sha256 {digest}. The sidecar's pattern and special tokens "
        "belong to the file it was written with; restore that file, or delete the sidecar "
        "and pass pattern= (and special_tokens=) to load this one as it is"
    )


def _specials_list(specials: object, where: str) -> list[tuple[str, int]]:
    """A `special_tokens=` argument (or an Encoding's) as (text, id) pairs sorted by id."""
    if not isinstance(specials, Mapping):
        raise TypeError(
            f"special_tokens must be a dict of text -> id, not {type(specials).__name__}"
        )
    out = []
    for text, token in specials.items():
        if not isinstance(text, str) or isinstance(token, bool) or not isinstance(token, int):
            raise TypeError(f"special_tokens from {where}: {text!r}: {token!r} is not str -> int")
        if not 0 <= token <= MAX_ID:
            raise ValueError(
                f"special_tokens from {where}: {text!r} has id {token}, which is not a "
                f"token id (0..{MAX_ID})"
            )
        out.append((text, token))
    return sorted(out, key=lambda kv: kv[1])


def _build(pattern: str, ranks: Mapping[bytes, int], specials: list[tuple[str, int]],
           where: str) -> CoreTokenizer:
    try:
        return CoreTokenizer.from_ranks(
            pattern, sorted(ranks.items(), key=lambda kv: kv[1]), specials
        )
    except ValueError as e:  # CorruptTokenizerError, PatternError, bad special ids
        raise type(e)(f"{where}: {e}") from None


def from_tiktoken(
    source: Any,
    pattern: str | None = None,
    special_tokens: Mapping[str, int] | None = None,
) -> CoreTokenizer:
    """A tokenizer from a `tiktoken.Encoding` or a `.tiktoken` ranks file.

    For an Encoding, its pattern, ranks and special tokens are taken (explicit
    arguments override). For a file, its sidecar `<path>.json` (if present) gives the
    pattern and special tokens and its hash is checked; explicit arguments override.
    """
    if pattern is not None and not isinstance(pattern, str):
        raise TypeError(f"pattern must be a str, not {type(pattern).__name__}")
    if hasattr(source, "_mergeable_ranks") and hasattr(source, "_pat_str"):
        where = f"tiktoken encoding {getattr(source, 'name', '?')!r}"
        specials = special_tokens if special_tokens is not None else source._special_tokens
        return _build(
            pattern if pattern is not None else source._pat_str,
            source._mergeable_ranks,
            _specials_list(specials, where),
            where,
        )
    if not isinstance(source, (str, bytes, os.PathLike)):
        raise TypeError(
            "from_tiktoken takes a tiktoken.Encoding or the path of a .tiktoken file, "
            f"not {type(source).__name__}"
        )
    path = os.fsdecode(source)
    with open(path, "rb") as f:
        raw = f.read()
    return from_ranks_bytes(raw, path, pattern, special_tokens)


def from_ranks_bytes(
    raw: bytes,
    path: str,
    pattern: str | None = None,
    special_tokens: Mapping[str, int] | None = None,
) -> CoreTokenizer:
    """The tokenizer of a `.tiktoken` file's bytes (read once: it may be a pipe) and of
    the sidecar next to `path`, if any."""
    where = repr(path)
    blame_files = pattern is None and special_tokens is None
    if special_tokens is not None:
        specials = _specials_list(special_tokens, where)
    with reading(where):
        ranks = read_ranks(raw, where)
        meta = _read_sidecar(path)
        if meta is not None:
            _check_matches_sidecar(raw, len(ranks), meta, path)
        if pattern is None:
            if meta is None:
                raise ArgumentError(
                    f"{where} is a bare .tiktoken ranks file (no sidecar "
                    f"{sidecar_path(path)!r}), and that format does not store the "
                    "pre-tokenization pattern; pass pattern= (e.g. pattern='cl100k', "
                    "'o200k', 'gpt2', or the regex the vocabulary was trained with)"
                )
            pattern = str(meta["pattern"])
        if special_tokens is None:
            specials = _specials_list(meta["special_tokens"] if meta is not None else {}, where)
        if blame_files:
            return _build(pattern, ranks, specials, where)
    # An argument is in play: the core's error (a bad pattern, a taken id) keeps its type.
    return _build(pattern, ranks, specials, where)
