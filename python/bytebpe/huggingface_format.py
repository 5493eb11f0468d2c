"""Hugging Face `tokenizers` interop: export to a `tokenizer.json` with identical ids, and
import byte-level BPE `tokenizer.json` files.

The export is a BPE model over GPT-2's byte-to-unicode mapping, with vocabulary "mapped
token string -> bytebpe id" (ids are not permuted) and `ignore_merges=True` (a piece that
is a token is that token, as in tiktoken). Merges make Hugging Face's pair-rank algorithm
reproduce tiktoken's byte-rank algorithm: for every multi-byte token T, in id order, every
split T = x + y where x and y are tokens. Then "the adjacent pair with the lowest merge
rank, leftmost on ties" is "the adjacent pair whose joined bytes have the lowest id,
leftmost on ties" (several splits of one T get consecutive ranks, see `_merges`).

The pre-tokenizer is Sequence[Split(Regex(pattern), "isolated"), ByteLevel(no regex)]
with bytebpe's pattern translated from Rust regex syntax (fancy-regex) to Oniguruma's
Ruby syntax, which Hugging Face uses: possessive intervals (`{1,3}+`, which Oniguruma
reads as a repeated interval) become atomic groups, `$` and `^` (line anchors in
Oniguruma, text anchors in Rust) become `\\z` and `\\A`. Every export is checked before it
is returned: for a custom pattern, piece by piece against bytebpe's pre-tokenization on
the battery of stress strings; for every pattern, ids on the battery. A difference raises
ValueError: a mismatch is never silent.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Sequence
from typing import Any

from bytebpe import tiktoken_format
from bytebpe._bytebpe import CoreTokenizer, CorruptTokenizerError, resolve_pattern

__all__ = [
    "from_huggingface",
    "from_oniguruma",
    "save_huggingface",
    "to_huggingface",
    "to_huggingface_json",
    "to_oniguruma",
]

GPT2_PATTERN = resolve_pattern("gpt2")
BUILTIN_PATTERNS = tiktoken_format.BUILTIN_PATTERNS


# ==================== GPT-2's byte <-> unicode mapping


@functools.lru_cache(maxsize=1)
def _byte_maps() -> tuple[dict[int, str], dict[int, int]]:
    """(byte -> mapped char, as a str.translate table over latin-1 text;
    mapped char -> byte, as a str.translate table)."""
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    chars = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in chars:
            chars[b] = chr(256 + extra)
            extra += 1
    forward = {b: c for b, c in chars.items()}
    inverse = {ord(c): b for b, c in chars.items()}
    return forward, inverse


def bytes_to_unicode(token: bytes) -> str:
    """A token's bytes as the string Hugging Face's byte-level vocabularies use."""
    return token.decode("latin-1").translate(_byte_maps()[0])


def unicode_to_bytes(text: str) -> bytes | None:
    """The inverse of `bytes_to_unicode`; None when `text` has a character outside the
    byte-level alphabet."""
    inverse = _byte_maps()[1]
    if any(ord(c) not in inverse for c in text):
        return None
    return text.translate(inverse).encode("latin-1")


# ==================== Regex translation

_INTERVAL = re.compile(r"\{(\d*)(,(\d*))?\}")


class _Item:
    __slots__ = ("atom", "text")

    def __init__(self, text: str, atom: bool) -> None:
        self.text = text
        self.atom = atom


def _read_escape(p: str, i: int) -> int:
    """End of the escape sequence starting at p[i] == '\\'."""
    if i + 1 >= len(p):
        raise ValueError("the pattern ends with a lone backslash")
    c = p[i + 1]
    if c in "pPxu" and i + 2 < len(p) and p[i + 2] == "{":
        end = p.find("}", i + 3)
        if end < 0:
            raise ValueError(f"unterminated \\{c}{{ at position {i}")
        return end + 1
    if c in "pP":
        return i + 3
    if c == "x":
        return i + 4
    if c == "u":
        return i + 6
    if c == "k" and i + 2 < len(p) and p[i + 2] in "<'":
        end = p.find(">" if p[i + 2] == "<" else "'", i + 3)
        if end < 0:
            raise ValueError(f"unterminated \\k at position {i}")
        return end + 1
    return i + 2


def _read_class(p: str, i: int, target: str) -> int:
    """End of the character class starting at p[i] == '['."""
    j = i + 1
    depth = 1
    first = True
    while j < len(p):
        c = p[j]
        if first and c == "^":
            j += 1
            if j < len(p) and p[j] == "]":
                j += 1
            first = False
            continue
        if first and c == "]":
            j += 1
            first = False
            continue
        first = False
        if c == "\\":
            j = _read_escape(p, j)
        elif c == "[":
            if p.startswith("[:", j):
                end = p.find(":]", j + 2)
                if end < 0:
                    raise ValueError(f"unterminated POSIX class at position {j}")
                j = end + 2
            else:
                depth += 1
                j += 1
                first = True
        elif c == "]":
            depth -= 1
            j += 1
            if depth == 0:
                return j
        else:
            if target == "oniguruma" and p.startswith(("--", "~~"), j):
                raise ValueError(
                    f"the class set operation {p[j:j + 2]!r} at position {j} has no "
                    "Oniguruma equivalent"
                )
            j += 1
    raise ValueError(f"unterminated character class at position {i}")


# Rust's \\w is Alphabetic + M + Nd + Pc + Join_Control; Oniguruma's is L + M + Nd + Pc.
_RUST_WORD = r"\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}"
_ONIG_WORD = r"\p{L}\p{M}\p{Nd}\p{Pc}"


def _word_escapes(word: str) -> tuple[dict[str, str], dict[str, str]]:
    """(escape -> replacement outside a class, escape -> replacement inside a class)."""
    w, nw = f"[{word}]", f"[^{word}]"
    return (
        {"\\w": w, "\\W": nw,
         "\\b": f"(?:(?<={w})(?!{w})|(?<!{w})(?={w}))",
         "\\B": f"(?:(?<={w})(?={w})|(?<!{w})(?!{w}))"},
        {"\\w": word, "\\W": nw},
    )


_ESCAPES = {
    # Escapes whose meaning differs between the engines, per target.
    "oniguruma": _word_escapes(_RUST_WORD),
    "rust": (
        {**_word_escapes(_ONIG_WORD)[0], "\\h": "[0-9a-fA-F]", "\\H": "[^0-9a-fA-F]",
         "\\Z": "(?=\\n?\\z)"},
        {**_word_escapes(_ONIG_WORD)[1], "\\h": "0-9a-fA-F", "\\H": "[^0-9a-fA-F]"},
    ),
}


def _rewrite_class(text: str, target: str) -> str:
    """A character class with the escapes that differ between the engines replaced."""
    table = _ESCAPES[target][1]
    out = []
    j = 0
    while j < len(text):
        if text[j] == "\\":
            end = _read_escape(text, j)
            out.append(table.get(text[j:end], text[j:end]))
            j = end
        else:
            out.append(text[j])
            j += 1
    return "".join(out)


def _translate(p: str, target: str) -> str:
    """Translates between Rust regex syntax (fancy-regex, bytebpe and tiktoken) and
    Oniguruma's Ruby syntax (Hugging Face). `target` is "oniguruma" or "rust"."""
    to_onig = target == "oniguruma"
    stack: list[list[_Item]] = [[]]
    openers: list[str] = []
    # Per open group: whether Rust's multi-line flag is on (then ^ and $ are line anchors,
    # as Oniguruma's always are).
    multiline = [False]
    i = 0
    n = len(p)
    while i < n:
        cur = stack[-1]
        c = p[i]
        if c == "\\":
            end = _read_escape(p, i)
            cur.append(_Item(_ESCAPES[target][0].get(p[i:end], p[i:end]), True))
            i = end
        elif c == "[":
            end = _read_class(p, i, target)
            cur.append(_Item(_rewrite_class(p[i:end], target), True))
            i = end
        elif c == "(":
            if p.startswith("(?#", i):
                end = p.find(")", i)
                if end < 0:
                    raise ValueError(f"unterminated comment at position {i}")
                i = end + 1
                continue
            if p.startswith("(?P=", i):
                end = p.find(")", i)
                if end < 0:
                    raise ValueError(f"unterminated backreference at position {i}")
                cur.append(_Item(f"\\k<{p[i + 4:end]}>", True))
                i = end + 1
                continue
            opener = None
            for prefix in ("(?:", "(?=", "(?!", "(?<=", "(?<!", "(?>"):
                if p.startswith(prefix, i):
                    opener = prefix
                    break
            if opener is None and p.startswith(("(?P<", "(?<"), i):
                start = i + (4 if p[i + 2] == "P" else 3)
                end = p.find(">", start)
                if end < 0:
                    raise ValueError(f"unterminated group name at position {i}")
                opener = f"(?<{p[start:end]}>"
                i = end + 1 - len(opener)  # so that i += len(opener) lands after '>'
            elif opener is None and p.startswith("(?", i):
                m = re.compile(r"\(\?([A-Za-z-]*)([:)])").match(p, i)
                if m is None:
                    raise ValueError(f"unsupported group syntax at position {i}")
                flags, lines = _translate_flags(m.group(1), target)
                if m.group(2) == ")":
                    if cur and cur[-1].text != "|":
                        raise ValueError(
                            f"the inline flag group {m.group(0)!r} at position {i} is not at "
                            "the start of a group or alternative; the engines scope it "
                            "differently, "
                            f"write (?{m.group(1)}:...) instead"
                        )
                    if flags:
                        cur.append(_Item(f"(?{flags})", False))
                    if lines is not None:
                        multiline[-1] = lines
                    i = m.end()
                    continue
                opener = f"(?{flags}:"
                openers.append(opener)
                stack.append([])
                multiline.append(multiline[-1] if lines is None else lines)
                i = m.end()
                continue
            elif opener is None:
                opener = "("
            openers.append(opener)
            stack.append([])
            multiline.append(multiline[-1])
            i += len(opener)
        elif c == ")":
            if not openers:
                raise ValueError(f"unbalanced ')' at position {i}")
            inner = "".join(item.text for item in stack.pop())
            multiline.pop()
            stack[-1].append(_Item(openers.pop() + inner + ")", True))
            i += 1
        elif c == "|":
            cur.append(_Item("|", False))
            i += 1
        elif c in "*+?" or (c == "{" and _INTERVAL.match(p, i)):
            if not cur or not cur[-1].atom:
                raise ValueError(f"quantifier {c!r} at position {i} follows nothing")
            if c == "{":
                m = _INTERVAL.match(p, i)
                assert m is not None
                low, comma, high = m.group(1), m.group(2), m.group(3)
                quant = "{" + (low or "0") + ("," + (high or "") if comma else "") + "}"
                if not to_onig and not comma and not low:
                    raise ValueError(f"empty repetition '{{}}' at position {i}")
                i = m.end()
            else:
                quant = c
                i += 1
            modifier = p[i] if i < n and p[i] in "?+" else ""
            i += len(modifier)
            atom = cur[-1].text
            if c == "{" and modifier == "+":
                # Possessive interval in Rust; in Oniguruma `{n,m}+` repeats the interval.
                if to_onig:
                    cur[-1] = _Item(f"(?>{atom}{quant})", True)
                else:
                    cur[-1] = _Item(f"(?:{atom}{quant})+", True)
            else:
                cur[-1] = _Item(atom + quant + modifier, True)
        elif c in "^$":
            if not to_onig:
                text = f"(?m:{c})"  # Oniguruma's ^ and $ are line anchors
            elif multiline[-1]:
                text = c
            else:
                text = "\\A" if c == "^" else "\\z"
            cur.append(_Item(text, True))
            i += 1
        else:
            cur.append(_Item(c, True))
            i += 1
    if openers:
        raise ValueError("unbalanced '(': a group is not closed")
    return "".join(item.text for item in stack[0])


def _translate_flags(flags: str, target: str) -> tuple[str, bool | None]:
    """(the flags for the target engine, Rust's multi-line flag if set or cleared)."""
    out = []
    lines = None
    on = True
    for f in flags:
        if f == "-":
            on = False
            out.append(f)
        elif f in "ix":
            out.append(f)
        elif target == "oniguruma" and f == "s":
            out.append("m")  # dot matches newline: Rust `s` is Oniguruma (Ruby) `m`
        elif target == "oniguruma" and f == "m":
            lines = on  # handled by the ^/$ translation
        elif target == "rust" and f == "m":
            out.append("s")
        else:
            raise ValueError(f"the inline flag {f!r} has no equivalent in the other engine")
    return "".join(out).rstrip("-"), lines


def _untranslate(onig: str) -> str:
    """Undoes `to_oniguruma`'s rewrites textually (a guess, checked by the caller)."""
    w = _RUST_WORD
    s = onig.replace(f"(?:(?<=[{w}])(?![{w}])|(?<![{w}])(?=[{w}]))", "\\b")
    s = s.replace(f"(?:(?<=[{w}])(?=[{w}])|(?<![{w}])(?![{w}]))", "\\B")
    s = s.replace(f"[^{w}]", "\\W").replace(f"[{w}]", "\\w").replace(w, "\\w")
    atom = r"\\p\{[^}]*\}|\\.|\[(?:[^\]\\]|\\.)*\]|[^\\()\[]"
    s = re.sub(rf"\(\?>({atom})(\{{\d+(?:,\d*)?\}})\)", r"\1\2+", s)
    return s.replace("\\z", "$").replace("\\A", "^")


def _rust_pattern(onig: str) -> str:
    """The bytebpe pattern for a Hugging Face Split regex: a built-in when the regex is
    bytebpe's export of one, else bytebpe's own pattern when the regex is its export,
    else the general translation."""
    for pattern in BUILTIN_PATTERNS:
        if to_oniguruma(pattern) == onig:
            return pattern
    candidate = _untranslate(onig)
    try:
        if to_oniguruma(candidate) == onig:
            return candidate
    except ValueError:
        pass
    return from_oniguruma(onig)


def to_oniguruma(pattern: str) -> str:
    """bytebpe's pattern (Rust regex syntax) in Oniguruma's syntax, same matches."""
    try:
        return _translate(pattern, "oniguruma")
    except ValueError as e:
        raise ValueError(
            f"cannot export the pattern {pattern!r} to Hugging Face (Oniguruma): {e}"
        ) from None


def from_oniguruma(pattern: str) -> str:
    """A Hugging Face (Oniguruma) pattern in bytebpe's Rust regex syntax."""
    try:
        return _translate(pattern, "rust")
    except ValueError as e:
        raise ValueError(f"cannot import the Hugging Face pattern {pattern!r}: {e}") from None


# ==================== Export


def _tokenizers() -> Any:
    try:
        import tokenizers
    except ImportError:
        raise ImportError(
            "Hugging Face tokenizers is not installed; `pip install tokenizers`"
        ) from None
    return tokenizers


def _merges(tokens: Sequence[bytes], mapped: Sequence[str]) -> list[list[str]]:
    """Every split of every multi-byte token into two tokens, tokens in id order; the
    splits of one token from the longest left part to the shortest."""
    index = {t: i for i, t in enumerate(tokens)}
    merges = []
    for token in tokens:
        for k in range(len(token) - 1, 0, -1):
            left = index.get(token[:k])
            if left is None:
                continue
            right = index.get(token[k:])
            if right is not None:
                merges.append([mapped[left], mapped[right]])
    return merges


def _special_entries(tok: Any, vocab: dict[str, int], n: int) -> list[dict[str, Any]]:
    specials = sorted(tok.special_tokens.items(), key=lambda kv: kv[1])
    contiguous = [i for _, i in specials] == list(range(n, n + len(specials)))
    if not contiguous:
        # Hugging Face numbers added tokens on from the model's size; other ids hold only
        # if the model's vocabulary has the token (as GPT-2's tokenizer.json does).
        for text, token in specials:
            preimage = unicode_to_bytes(text)
            if text in vocab or (preimage is not None and preimage != text.encode("utf-8")):
                raise ValueError(
                    f"cannot export to Hugging Face: the special token {text!r} (id {token}) "
                    "does not directly follow the other tokens, so it must be in the BPE "
                    "vocabulary, where it would collide with the byte-level form of "
                    f"{'a token' if text in vocab else repr(preimage)}"
                )
            vocab[text] = token
    return [
        {"id": token, "content": text, "single_word": False, "lstrip": False,
         "rstrip": False, "normalized": False, "special": True}
        for text, token in specials
    ]


def to_huggingface_json(tok: Any) -> dict[str, Any]:
    """The tokenizer.json document (unchecked; `to_huggingface` checks it)."""
    pattern = to_oniguruma(tok.pattern)
    tokens = tok._core.tokens()
    mapped = [bytes_to_unicode(t) for t in tokens]
    vocab = {s: i for i, s in enumerate(mapped)}
    added = _special_entries(tok, vocab, len(tokens))
    byte_level = {"add_prefix_space": False, "trim_offsets": False, "use_regex": False}
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": {
            "type": "Sequence",
            "pretokenizers": [
                {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated",
                 "invert": False},
                {"type": "ByteLevel", **byte_level},
            ],
        },
        "post_processor": None,
        "decoder": {"type": "ByteLevel", **byte_level},
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": True,
            "vocab": vocab,
            "merges": _merges(tokens, mapped),
        },
    }


def _check_pieces(rust_pattern: str, onig_pattern: str, what: str) -> None:
    """Compares Hugging Face's Split with bytebpe's pre-tokenization on the battery."""
    tokenizers = _tokenizers()
    try:
        split = tokenizers.pre_tokenizers.Split(
            tokenizers.Regex(onig_pattern), behavior="isolated"
        )
    except Exception as e:
        raise ValueError(f"{what}: Oniguruma rejects the pattern {onig_pattern!r}: {e}") from None
    texts = tiktoken_format.stress_texts()
    for text, want in zip(texts, tiktoken_format.pieces(rust_pattern, texts)):
        got = [piece.encode("utf-8") for piece, _ in split.pre_tokenize_str(text)]
        if got != want:
            raise ValueError(
                f"{what}: the pattern {rust_pattern!r} splits text differently in Hugging Face "
                "(Oniguruma, which reads it as "
                f"{onig_pattern!r}) than in bytebpe: "
                + tiktoken_format.mismatch_message("", text, want, got)[1:]
            )


def _check_ids(tok: Any, hf: Any, what: str, texts: Sequence[str]) -> None:
    """bytebpe (every special allowed) and Hugging Face must give the same ids."""
    texts = list(texts)
    specials = list(tok.special_tokens)
    if specials:
        texts += [
            specials[k % len(specials)].join([t, t[: len(t) // 2], ""])
            for k, t in enumerate(texts[:64])
        ]
        texts.append("".join(specials) + " " + " ".join(specials))
    got = [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)]
    # Texts without special-token text encode the same either way, in one batch.
    plain = tok.encode_batch(texts)
    for text, ids, want in zip(texts, got, plain):
        if specials and any(s in text for s in specials):
            want = tok.encode(text, allowed_special="all")
        if ids != want:
            raise ValueError(tiktoken_format.mismatch_message(
                what, text, want, ids, lambda t: len(tok.decode_bytes([t]))
            ))


def _vocab_texts(tok: Any, limit: int = 10000) -> list[str]:
    """Strings that exercise the merges: tokens repeated and next to their neighbours."""
    tokens = tok._core.tokens()
    step = max(1, len(tokens) // limit)
    out = []
    for i in range(256, len(tokens), step):
        for data in (tokens[i] * 3, tokens[i] + tokens[i - 1] + tokens[i]):
            try:
                out.append(data.decode("utf-8"))
            except UnicodeDecodeError:
                pass
    return out


def to_huggingface(tok: Any) -> Any:
    """A `tokenizers.Tokenizer` giving `tok`'s ids (checked before it is returned)."""
    return _checked(tok, to_huggingface_json(tok))[0]


def _checked(tok: Any, document: dict[str, Any]) -> tuple[Any, str]:
    tokenizers = _tokenizers()
    what = "cannot export to Hugging Face"
    onig = document["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"]
    if tok.pattern not in BUILTIN_PATTERNS:
        _check_pieces(tok.pattern, onig, what)
    text = json.dumps(document, ensure_ascii=False)
    hf = tokenizers.Tokenizer.from_str(text)
    for special, token in tok.special_tokens.items():
        if hf.token_to_id(special) != token:
            raise ValueError(
                f"{what}: Hugging Face gives the special token {special!r} id "
                f"{hf.token_to_id(special)}, not {token}"
            )
    _check_ids(
        tok, hf, f"{what}: Hugging Face gives different ids",
        [*tiktoken_format.stress_texts(), *_vocab_texts(tok)],
    )
    return hf, text


def save_huggingface(tok: Any, path: str | os.PathLike[str]) -> None:
    """Writes tokenizer.json at `path` (checked like `to_huggingface`)."""
    _, text = _checked(tok, to_huggingface_json(tok))
    tiktoken_format._write_atomic(os.fspath(path), text.encode("utf-8"))


# ==================== Import


def _load(source: Any) -> tuple[dict[str, Any], str]:
    if hasattr(source, "to_str") and hasattr(source, "encode_batch"):
        text, where = source.to_str(), "the tokenizers.Tokenizer"
    elif isinstance(source, str) and source.lstrip().startswith("{"):
        text, where = source, "the tokenizer.json text"
    elif isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if os.path.isdir(path):
            path = os.path.join(path, "tokenizer.json")
        where = repr(path)
        with open(path, "rb") as f:
            raw = f.read()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise CorruptTokenizerError(f"{where} is not a tokenizer.json (not UTF-8: {e})") from None
    else:
        raise TypeError(
            "from_huggingface takes a tokenizer.json path, its JSON text or a "
            f"tokenizers.Tokenizer, not {type(source).__name__}"
        )
    try:
        document = json.loads(text)
    except json.JSONDecodeError as e:
        raise CorruptTokenizerError(f"{where} is not a tokenizer.json (not valid JSON: {e})") from None
    if not isinstance(document, dict) or not isinstance(document.get("model"), dict):
        raise CorruptTokenizerError(f"{where} is not a tokenizer.json: it has no model")
    return document, where


def _components(node: Any) -> list[dict[str, Any]]:
    if node is None:
        return []
    if not isinstance(node, dict):
        raise CorruptTokenizerError(f"malformed component {node!r}")
    if node.get("type") == "Sequence":
        inner = node.get("pretokenizers", node.get("normalizers", node.get("decoders", [])))
        return [c for sub in inner for c in _components(sub)]
    return [node]


def _model_type(model: dict[str, Any]) -> str:
    if "type" in model:
        return str(model["type"])
    if "merges" in model:
        return "BPE"
    if isinstance(model.get("vocab"), list):
        return "Unigram"
    if "max_input_chars_per_word" in model:
        return "WordPiece"
    return "WordLevel"


def _import_pattern(document: dict[str, Any], where: str) -> str:
    parts = _components(document.get("pre_tokenizer"))
    names = [str(p.get("type")) for p in parts]
    described = f"pre-tokenizer {' + '.join(names) or 'none'}"
    levels = [p for p in parts if p.get("type") == "ByteLevel"]
    if not levels:
        decoders = [str(d.get("type")) for d in _components(document.get("decoder"))]
        normalizers = [str(d.get("type")) for d in _components(document.get("normalizer"))]
        if "ByteLevel" in decoders or "ByteLevel" in normalizers:
            raise ValueError(
                f"{where} is byte-level only in its "
                f"{'decoder' if 'ByteLevel' in decoders else 'normalizer'}, with {described}; "
                "bytebpe imports byte-level BPE whose pre-tokenizer ends with ByteLevel"
            )
        raise ValueError(
            f"{where} is BPE without byte-level mapping ({described}, decoder "
            f"{' + '.join(decoders) or 'none'}); bytebpe imports only byte-level BPE (a "
            "SentencePiece-style BPE with Metaspace or byte_fallback cannot be imported)"
        )
    level = levels[-1]
    if level is not parts[-1] or len(levels) > 1:
        raise ValueError(f"{where}: unsupported {described} (ByteLevel must come last, once)")
    if level.get("add_prefix_space"):
        raise ValueError(
            f"{where}: its ByteLevel pre-tokenizer has add_prefix_space=true (it puts a "
            "space before the text), which bytebpe does not do; set it to false first"
        )
    use_regex = level.get("use_regex", True)
    rest = parts[:-1]
    if not rest:
        if use_regex:
            return GPT2_PATTERN
        raise ValueError(
            f"{where}: ByteLevel without a regex and no Split, so the whole text would be "
            "one piece; bytebpe needs a pre-tokenization pattern"
        )
    if len(rest) > 1 or rest[0].get("type") != "Split" or use_regex:
        raise ValueError(
            f"{where}: unsupported {described}{' (ByteLevel with use_regex)' if use_regex else ''}; "
            "bytebpe imports Split(pattern, isolated) + ByteLevel(use_regex=false), or "
            "ByteLevel(use_regex=true) alone"
        )
    split = rest[0]
    if split.get("behavior") != "Isolated" or split.get("invert"):
        raise ValueError(
            f"{where}: its Split pre-tokenizer has behavior={split.get('behavior')!r}, "
            f"invert={split.get('invert')!r}; only behavior 'Isolated' without invert keeps "
            "every piece as bytebpe does"
        )
    pattern = split.get("pattern")
    if isinstance(pattern, dict) and isinstance(pattern.get("Regex"), str):
        return _rust_pattern(pattern["Regex"])
    if isinstance(pattern, dict) and isinstance(pattern.get("String"), str):
        return re.escape(pattern["String"])
    raise CorruptTokenizerError(f"{where}: malformed Split pattern {pattern!r}")


def from_huggingface(source: Any) -> CoreTokenizer:
    """A tokenizer from a byte-level BPE tokenizer.json, checked to encode like it."""
    document, where = _load(source)
    model = document["model"]
    kind = _model_type(model)
    if kind != "BPE":
        raise ValueError(
            f"{where} holds a {kind} model; bytebpe imports only byte-level BPE tokenizers"
        )
    normalizers = [n for n in _components(document.get("normalizer"))]
    if normalizers:
        raise ValueError(
            f"{where} has a normalizer ({' + '.join(str(n.get('type')) for n in normalizers)}), "
            "which changes text before encoding; bytebpe has no normalizer"
        )
    for field in ("continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(field):
            raise ValueError(f"{where}: its BPE model has {field}={model[field]!r}; "
                             "byte-level BPE in bytebpe has none")
    if model.get("dropout"):
        raise ValueError(f"{where}: its BPE model has dropout={model['dropout']!r} "
                         "(random segmentation); bytebpe encodes deterministically")
    pattern = _import_pattern(document, where)
    vocab = model.get("vocab")
    if not isinstance(vocab, dict):
        raise CorruptTokenizerError(f"{where}: the BPE vocab is not a mapping")
    by_id = {}
    for text, token in vocab.items():
        if not isinstance(text, str) or isinstance(token, bool) or not isinstance(token, int):
            raise CorruptTokenizerError(f"{where}: malformed vocab entry {text!r}: {token!r}")
        by_id[token] = text
    specials: list[tuple[str, int]] = []
    for entry in document.get("added_tokens") or []:
        if not isinstance(entry, dict) or not isinstance(entry.get("content"), str):
            raise CorruptTokenizerError(f"{where}: malformed added token {entry!r}")
        text, token = entry["content"], entry.get("id")
        for flag in ("lstrip", "rstrip", "single_word"):
            if entry.get(flag):
                raise ValueError(
                    f"{where}: the added token {text!r} has {flag}=true, which bytebpe "
                    "special tokens cannot reproduce"
                )
        if token in by_id:
            if by_id[token] != text:
                raise ValueError(
                    f"{where}: the added token {text!r} has id {token}, which the BPE "
                    f"vocabulary gives to {by_id[token]!r}"
                )
            del by_id[token]
        specials.append((text, token))
    ranks = []
    for token, text in by_id.items():
        data = unicode_to_bytes(text)
        if data is None:
            raise ValueError(
                f"{where}: the vocabulary entry {text!r} (id {token}) is not byte-level "
                "mapped (it has characters outside GPT-2's byte alphabet), so this is not "
                "a byte-level BPE vocabulary"
            )
        ranks.append((data, token))
    ranks.sort(key=lambda kv: kv[1])
    for text, token in specials:
        if not isinstance(token, int) or token < len(ranks):
            raise ValueError(
                f"{where}: the added token {text!r} has id {token!r}, among the ids of the "
                f"{len(ranks)} byte-level tokens; bytebpe needs those to be 0..{len(ranks) - 1} "
                f"and special tokens after them"
            )
    try:
        core = CoreTokenizer.from_ranks(pattern, ranks, sorted(specials, key=lambda kv: kv[1]))
    except ValueError as e:  # CorruptTokenizerError, PatternError
        raise type(e)(f"{where}: {e}") from None
    _check_import(core, document, where)
    return core


def _check_import(core: CoreTokenizer, document: dict[str, Any], where: str) -> None:
    """Encodes a battery with Hugging Face and with the import; refuses on a difference
    (merges whose order or coverage differs from rank order, or a pattern Oniguruma and
    bytebpe read differently)."""
    from bytebpe.tokenizer import Tokenizer

    tokenizers = _tokenizers()
    tok = Tokenizer(core)
    hf = tokenizers.Tokenizer.from_str(json.dumps(document))
    # Only the model and pre-tokenizer matter for ids (bytebpe adds no BOS/EOS).
    hf.post_processor = None
    hf.no_truncation()
    hf.no_padding()
    tokens = core.tokens()
    texts = list(tiktoken_format.stress_texts())
    for data in tokens:
        try:
            texts.append(data.decode("utf-8"))
        except UnicodeDecodeError:
            pass
    texts.extend(_vocab_texts(tok))
    try:
        _check_ids(tok, hf, f"{where} cannot be imported exactly: Hugging Face encodes "
                   "differently than rank order", texts)
    except ValueError as e:
        raise ValueError(
            f"{e}. (bytebpe encodes by merge rank of the joined bytes, as tiktoken does; "
            "this file's merges or pre-tokenizer segment some text another way)"
        ) from None
