"""tiktoken interop: a `tiktoken.Encoding` with identical ids, the `.tiktoken` ranks file
with its sidecar, and importing either.

A `.tiktoken` file holds one line per mergeable token, `base64(bytes) SP rank`, which is
what tiktoken's `load_tiktoken_bpe` reads. It stores neither the pre-tokenization pattern
nor the special tokens, so `save_tiktoken` also writes `<path>.json`:

    {"format": "bytebpe-tiktoken-sidecar", "version": 1, "pattern": str,
     "special_tokens": {text: id, ...}, "ranks_file": basename, "ranks_sha256": hex,
     "n_ranks": int}

Every export is checked before it is returned: the exported encoder must give bytebpe's
ids on a battery of stress strings (`stress_texts`), or the export raises ValueError.
tiktoken runs the same regex engine as bytebpe (fancy-regex), so built-in patterns export
unchanged; a custom pattern that leaves text unmatched (which tiktoken would drop) gets
an extra alternative that matches exactly that text.

This module also holds what the Hugging Face exporter shares: the battery and
`pieces`, bytebpe's own pre-tokenization of texts.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import json
import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from bytebpe import file_format
from bytebpe._bytebpe import CoreTokenizer, CorruptTokenizerError, resolve_pattern

__all__ = [
    "from_tiktoken",
    "pieces",
    "read_ranks_file",
    "save_tiktoken",
    "stress_texts",
    "to_tiktoken",
]

SIDECAR_FORMAT = "bytebpe-tiktoken-sidecar"
SIDECAR_VERSION = 1
BUILTIN_PATTERNS = tuple(resolve_pattern(n) for n in ("gpt2", "cl100k", "o200k"))


# ==================== The battery

# One character of each class the built-in patterns (and typical custom ones) tell apart.
_CLASS_SAMPLES = (
    "a", "Z", "\u01c5", "\u02b0", "\u4e2d", "\ud55c", "\u0e01", "\u0915", "\u0627", "\u00e9",
    "\u0301", "\u0903", "\u200d", "\ufe0f", "1", "\u0663", "\u0967", "\uff11", "\u2167", "\u00bd",
    " ", "\t", "\n", "\r", "\x0b", "\x0c", "\x85", "\xa0", "\u1680", "\u2003", "\u2028",
    "\u2029", "\u202f", "\u3000", "\u180e", "\u200b", "\ufeff", "'", "\u2019", "!", ".", "-",
    "/", "$", "^", "_", "#", "\\", "\U0001f600", "\U0001f3fd", "\U00010d4a", "\U00031350",
    "\U0010fffd", "\x00", "s", "S", "\u017f", "K", "\u212a", "\u00df", "\ufb06",
)
_ENDINGS = ("", " ", "  ", "\n", " \n", "\n ", "\r\n", "\n\n", "\t", " x", "\u3000")

_TEXTS = (
    "Hello, world! It's a fine day; isn't it? We've seen what you'd do, and they'll agree.",
    "I'LL DON'T HE'S SHE'D WE'RE THEY'VE I'M 'S 'T 'Ll 'lL 'Re 'vE 'M 'D 'ſ 'K 'ſt",
    "The quick brown fox jumps over the lazy dog.\n\nSecond paragraph --- with dashes...\n",
    ("def f(x):\n    return x ** 2  # square\n\n\tif (a != b) { c += 1; }\r\n"
     "for (int i = 0; i < n; ++i) {\n        printf(\"%d\\n\", i);\n    }\n"),
    "import numpy as np\nx = np.zeros((3, 4), dtype=np.float32)  # comment\n    \n\n",
    "<html><body class=\"x\">&nbsp;&amp;</body></html>\nhttps://example.com/a/b?c=d&e=f#g",
    ("\u4e2d\u6587\u5206\u8bcd\u6d4b\u8bd5\uff0c\u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8"
     "\u3002\u6f22\u5b57\u3068\u304b\u306a\u3002"),
    "\ud55c\uad6d\uc5b4 \ud14d\uc2a4\ud2b8\uc785\ub2c8\ub2e4. \uc548\ub155\ud558\uc138\uc694!",
    ("\u0645\u0631\u062d\u0628\u0627 \u0628\u0627\u0644\u0639\u0627\u0644\u0645\u060c "
     "\u0643\u064a\u0641 \u062d\u0627\u0644\u0643\u061f \u0661\u0662\u0663"),
    ("\u0e20\u0e32\u0e29\u0e32\u0e44\u0e17\u0e22\u0e44\u0e21\u0e48\u0e21\u0e35\u0e0a\u0e48\u0e2d"
     "\u0e07\u0e27\u0e48\u0e32\u0e07 \u0e2a\u0e27\u0e31\u0e2a\u0e14\u0e35\u0e04\u0e23\u0e31\u0e1a"),
    ("\u0928\u092e\u0938\u094d\u0924\u0947 \u0926\u0941\u0928\u093f\u092f\u093e\u0903 "
     "\u0915\u094d\u0937\u0924\u094d\u0930\u093f\u092f \u0967\u0968\u0969"),
    ("\u041f\u0440\u0438\u0432\u0435\u0442, \u043c\u0438\u0440! \u0393\u03b5\u03b9\u03ac "
     "\u03c3\u03bf\u03c5 \u05e9\u05dc\u05d5\u05dd Ti\u1ebfng Vi\u1ec7t e\u0301\u0302\u0323"),
    ("\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466 \U0001f3f3\ufe0f\u200d"
     "\U0001f308 \U0001f44d\U0001f3fd 1\ufe0f\u20e3 \U0001f1fa\U0001f1f8!!\U0001f600\U0001f600"),
    ("1234567 3.14159 1,000,000 0x1F 1e-10 -42 +7 12:30 2024-01-02 \uff11\uff12\uff13 "
     "\u0663\u0664\u0665 \u0967\u0968 \u00bd \u2153 \u216b \u00b2 12345678901234567890"),
    "\r\n\r\n  \t\n", " " * 50 + "x", "x" + " " * 7, "\n\n\n", "a \n b", "  \n  x  \n",
    "\u00a0\u2003\u3000x\u2028y\u2029z\x85w\u180e\u200bv\ufeff", "\t\t\tx\r\r\n\n\r",
    "", " ", "\n", "'", "'s", "'S", "'\u017f", "'ll", "'LL", "\u01c5ungla \u02b0\u02b2",
    "aaaa", "aaaaa", "a" * 97, "^" * 300, "\n" * 300, " " * 301, "ab" * 100, "\U0001f600" * 40,
    "x\u0301" * 20, "1" * 50, "...!!!???", "a-b_c/d\\e", "\x00\x01\x1b[0m\x7f",
)


@functools.lru_cache(maxsize=1)
def stress_texts() -> tuple[str, ...]:
    """Strings that tell pre-tokenizers apart: prose, code, many scripts, numbers,
    whitespace and line-break runs, contractions, every pair of a set of character classes,
    and text ending in each kind of whitespace (patterns anchor on the end of text)."""
    out = list(_TEXTS)
    for x in _CLASS_SAMPLES:
        out.append("".join(x + y + y + x + " " + x + "\n" + y + x + x + x for y in _CLASS_SAMPLES))
        out.extend("w" + x + ending for ending in _ENDINGS)
        out.extend(x + x + ending for ending in _ENDINGS)
        out.append(" " + x + "'s " + x + "'LL" + x + "  " + x)
    return tuple(out)


def pieces(pattern: str, texts: Sequence[str]) -> list[list[bytes]]:
    """bytebpe's pre-tokenization of each text (its pieces, in order).

    Through the public API only: trains a probe tokenizer on the texts with
    `min_frequency=1` until every piece is a token (training never merges across pieces,
    and uses the same pre-tokenization as encoding), then encodes them: each piece becomes
    exactly its own token.
    """
    from bytebpe.tokenizer import Tokenizer, TrainingWarning

    total = sum(len(t.encode("utf-8")) for t in texts)
    with warnings.catch_warnings():
        # The probe always stops short of its (upper bound) vocabulary size.
        warnings.simplefilter("ignore", TrainingWarning)
        probe = Tokenizer.train_from_iterator(
            list(texts), 257 + total, pattern=pattern, min_frequency=1, progress=False
        )
    tokens = probe._core.tokens()
    return [[tokens[i] for i in ids] for ids in probe.encode_batch(list(texts))]


def mismatch_message(what: str, text: str, want: Sequence[Any], got: Sequence[Any],
                     length: Any = len) -> str:
    """Names the input on which an export differs from bytebpe, and where: `want` and
    `got` are pieces (bytes) or ids, `length` gives the byte length of one of `want`."""
    i = next((k for k, (a, b) in enumerate(zip(want, got)) if a != b), min(len(want), len(got)))
    offset = sum(length(x) for x in want[:i])
    data = text.encode("utf-8")
    near = data[max(0, offset - 30):offset + 50].decode("utf-8", "replace")
    shown = text if len(text) <= 80 else text[:80] + "..."
    return (
        f"{what} on the input {shown!r}, at byte {offset} (near {near!r}): bytebpe gives "
        f"{list(want[i:i + 6])}, the export gives {list(got[i:i + 6])}"
    )


# ==================== Export


def _tiktoken() -> Any:
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


def _first_difference(tok: Any, enc: Any, texts: Iterable[str]) -> str | None:
    """Compares ids (ordinary, and with every special allowed) and round trips."""
    texts = list(texts)
    ordinary = tok.encode_batch(texts)
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
                "tiktoken gives different ids", text, want, ids, lambda t: len(tok.decode_bytes([t]))
            )
        if enc.decode_bytes(ids) != text.encode("utf-8"):
            return f"tiktoken drops or changes text of the input {text[:120]!r}"
    specials = list(tok.special_tokens)
    if specials:
        for k, text in enumerate(texts[:64]):
            mixed = specials[k % len(specials)].join([text, text[: len(text) // 2], ""])
            want = tok.encode(mixed, allowed_special="all")
            ids = enc.encode(mixed, allowed_special="all")
            if ids != want:
                return mismatch_message(
                    "tiktoken gives different ids with special tokens", mixed, want, ids,
                    lambda t: len(tok.decode_bytes([t])),
                )
    return None


def _tiktoken_pattern(tok: Any) -> str:
    """The pattern to give tiktoken: bytebpe's own, or that plus a gap-covering
    alternative; checked piece by piece on the battery."""
    pattern = tok.pattern
    if pattern in BUILTIN_PATTERNS:
        return pattern
    texts = stress_texts()
    want = pieces(pattern, texts)
    # A probe whose tokens are exactly the pieces: ids then show every piece boundary.
    distinct = sorted({p for ps in want for p in ps if len(p) > 1}, key=lambda p: (len(p), p))
    ranks = {bytes([b]): b for b in range(256)}
    ranks.update((p, 256 + i) for i, p in enumerate(distinct))
    probe = CoreTokenizer.from_ranks(pattern, list(ranks.items()), [])
    from bytebpe.tokenizer import Tokenizer

    probe_tok = Tokenizer(probe)
    problem = "the pattern does not compile in tiktoken"
    for candidate in (pattern, _gap_covering(pattern)):
        try:
            enc = _encoding("bytebpe-probe", candidate, ranks, {})
        except ValueError as e:  # tiktoken wraps regex errors in ValueError
            problem = f"the pattern does not compile in tiktoken ({e})"
            continue
        difference = _first_difference(probe_tok, enc, texts)
        if difference is None:
            return candidate
        problem = difference
    raise ValueError(
        f"cannot export to tiktoken: its pre-tokenization of the pattern {pattern!r} "
        f"differs from bytebpe's: {problem}"
    )


def to_tiktoken(tok: Any, name: str = "bytebpe") -> Any:
    """A `tiktoken.Encoding` giving `tok`'s ids (checked on the battery before return)."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty str, not {name!r}")
    _tiktoken()
    specials = tok.special_tokens
    _check_specials_prefix_free(specials)
    pattern = _tiktoken_pattern(tok)
    enc = _encoding(name, pattern, tok.mergeable_ranks(), specials)
    difference = _first_difference(tok, enc, stress_texts())
    if difference is not None:
        raise ValueError(f"cannot export to tiktoken: {difference}")
    return enc


def _ranks_bytes(ranks: Mapping[bytes, int]) -> bytes:
    lines = [
        base64.b64encode(token) + b" " + str(rank).encode("ascii") + b"\n"
        for token, rank in sorted(ranks.items(), key=lambda item: item[1])
    ]
    return b"".join(lines)


def _write_atomic(path: str, data: bytes) -> None:
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def sidecar_path(path: str | os.PathLike[str]) -> str:
    return f"{os.fspath(path)}.json"


def save_tiktoken(tok: Any, path: str | os.PathLike[str]) -> None:
    """Writes the ranks file at `path` and the sidecar at `<path>.json`."""
    path = os.fspath(path)
    data = _ranks_bytes(tok.mergeable_ranks())
    sidecar = {
        "format": SIDECAR_FORMAT,
        "version": SIDECAR_VERSION,
        "pattern": tok.pattern,
        "special_tokens": dict(sorted(tok.special_tokens.items(), key=lambda kv: kv[1])),
        "ranks_file": os.path.basename(path),
        "ranks_sha256": hashlib.sha256(data).hexdigest(),
        "n_ranks": tok._core.n_mergeable,
    }
    _write_atomic(path, data)
    text = json.dumps(sidecar, indent=1, ensure_ascii=False) + "\n"
    _write_atomic(sidecar_path(path), text.encode("utf-8"))


# ==================== Import


def read_ranks_file(path: str | os.PathLike[str]) -> tuple[dict[bytes, int], bytes]:
    """Parses a `.tiktoken` ranks file strictly; returns (ranks, raw file bytes).

    Errors name the file and the line: malformed lines, bad base64, bad or repeated
    ranks, repeated tokens, an empty file.
    """
    where = os.fspath(path)
    with open(path, "rb") as f:
        raw = f.read()
    ranks: dict[bytes, int] = {}
    seen_ranks: dict[int, int] = {}
    lines = raw.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for number, line in enumerate(lines, start=1):
        def bad(why: str, line: bytes = line, number: int = number) -> CorruptTokenizerError:
            shown = line[:80].decode("utf-8", "replace")
            return CorruptTokenizerError(
                f"{where!r}, line {number}: {why} (the line reads {shown!r}); expected "
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
        if not rank_text.isdigit():
            raise bad("the rank is not a non-negative integer")
        rank = int(rank_text)
        if rank >= 2**32:
            raise bad("the rank is too large")
        if token in ranks:
            raise bad(f"the token {token!r} was already given rank {ranks[token]}")
        if rank in seen_ranks:
            raise bad(f"rank {rank} was already given on line {seen_ranks[rank]}")
        ranks[token] = rank
        seen_ranks[rank] = number
    if not ranks:
        raise CorruptTokenizerError(f"{where!r} is empty: no ranks in it")
    return ranks, raw


def _read_sidecar(path: str) -> dict[str, Any] | None:
    side = sidecar_path(path)
    if not os.path.exists(side):
        return None
    try:
        with open(side, encoding="utf-8") as f:
            meta = json.load(f)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CorruptTokenizerError(f"sidecar {side!r} is not valid JSON: {e}") from None
    file_format.check_header(
        meta, f"sidecar {side!r}", SIDECAR_FORMAT, SIDECAR_VERSION, "bytebpe tiktoken sidecar"
    )
    pattern = meta.get("pattern")
    specials = meta.get("special_tokens")
    if not isinstance(pattern, str) or not isinstance(specials, dict) or not all(
        isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool)
        for k, v in specials.items()
    ):
        raise CorruptTokenizerError(f"sidecar {side!r} has a malformed pattern or special_tokens")
    if not isinstance(meta.get("ranks_sha256"), str):
        raise CorruptTokenizerError(f"sidecar {side!r} has no ranks_sha256")
    return meta


def _specials_list(specials: Any, where: str) -> list[tuple[str, int]]:
    if not isinstance(specials, Mapping):
        raise TypeError(
            f"special_tokens must be a dict of text -> id, not {type(specials).__name__}"
        )
    out = []
    for text, token in specials.items():
        if not isinstance(text, str) or isinstance(token, bool) or not isinstance(token, int):
            raise TypeError(f"special_tokens from {where}: {text!r}: {token!r} is not str -> int")
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
    if not isinstance(source, (str, os.PathLike)):
        raise TypeError(
            "from_tiktoken takes a tiktoken.Encoding or the path of a .tiktoken file, "
            f"not {type(source).__name__}"
        )
    path = os.fspath(source)
    ranks, raw = read_ranks_file(path)
    meta = _read_sidecar(path)
    if meta is not None:
        digest = hashlib.sha256(raw).hexdigest()
        if digest != meta["ranks_sha256"]:
            raise CorruptTokenizerError(
                f"{path!r} does not match its sidecar {sidecar_path(path)!r}: the sidecar "
                f"records sha256 {meta['ranks_sha256']}, the file has {digest} (the ranks "
                "file was modified, truncated, or the sidecar belongs to another file)"
            )
    if pattern is None:
        if meta is None:
            raise ValueError(
                f"{path!r} is a bare .tiktoken ranks file (no sidecar "
                f"{sidecar_path(path)!r}), and that format does not store the "
                "pre-tokenization pattern; pass pattern= (e.g. pattern='cl100k', 'o200k', "
                "'gpt2', or the regex the vocabulary was trained with)"
            )
        pattern = meta["pattern"]
    if special_tokens is None:
        special_tokens = meta["special_tokens"] if meta is not None else {}
    return _build(pattern, ranks, _specials_list(special_tokens, repr(path)), repr(path))
