"""Hugging Face `tokenizers` export: a `tokenizer.json` document with identical ids, and
the id check that the export and the import (`huggingface_import`) both run. Takes the
native `CoreTokenizer`.

The export is a BPE model over GPT-2's byte-to-unicode mapping, with vocabulary "mapped
token string -> bytebpe id" (ids are not permuted) and `ignore_merges=True` (a piece that
is a token is that token, as in tiktoken). Merges make Hugging Face's pair-rank algorithm
reproduce tiktoken's byte-rank algorithm: for every multi-byte token T, in id order, every
split T = x + y where x and y are tokens. Then "the adjacent pair with the lowest merge
rank, leftmost on ties" is "the adjacent pair whose joined bytes have the lowest id,
leftmost on ties" (several splits of one T get consecutive ranks, see `_merges`).

The pre-tokenizer is Sequence[Split(Regex(pattern), "isolated"), ByteLevel(no regex)]
with bytebpe's pattern translated to Oniguruma's syntax (`oniguruma.to_oniguruma`).
Every export is checked before it is returned: for a custom pattern, piece by piece
against bytebpe's pre-tokenization on the battery of stress strings; for every pattern,
ids on the battery. A difference raises ValueError: a mismatch is never silent.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from bytebpe._bytebpe import CoreTokenizer
from bytebpe.file_format import write_atomic
from bytebpe.interop.battery import mismatch_message, stress_pieces, stress_texts
from bytebpe.interop.bytemap import bytes_to_unicode, unicode_to_bytes
from bytebpe.interop.oniguruma import to_oniguruma
from bytebpe.patterns import builtin_sources

__all__ = [
    "check_ids",
    "save_huggingface",
    "to_huggingface",
    "to_huggingface_json",
    "tokenizers_module",
    "vocab_texts",
]


def tokenizers_module() -> ModuleType:
    """The `tokenizers` package, or ImportError saying how to install it."""
    try:
        import tokenizers
    except ImportError:
        raise ImportError(
            "Hugging Face tokenizers is not installed; `pip install tokenizers`"
        ) from None
    return tokenizers


def _merges(core: CoreTokenizer, mapped: Sequence[str]) -> list[list[str]]:
    """Every split of every multi-byte token into two tokens, tokens in id order; the
    splits of one token from the longest left part to the shortest. The core lists them
    in time linear in the token bytes (slicing every split point here was quadratic)."""
    merges: list[list[str]] = []
    start = 0  # where the current token's splits begin in `merges`
    current = -1
    for left, right, token in core.splits():
        if token != current:
            merges[start:] = merges[start:][::-1]
            start, current = len(merges), token
        merges.append([mapped[left], mapped[right]])
    merges[start:] = merges[start:][::-1]
    return merges


def _special_entries(core: CoreTokenizer, vocab: dict[str, int], n: int) -> list[dict[str, Any]]:
    specials = sorted(core.special_tokens, key=lambda kv: kv[1])
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


def to_huggingface_json(core: CoreTokenizer) -> dict[str, Any]:
    """The tokenizer.json document (unchecked; `to_huggingface` checks it)."""
    pattern = to_oniguruma(core.pattern)
    tokens = core.tokens()
    mapped = [bytes_to_unicode(t) for t in tokens]
    vocab = {s: i for i, s in enumerate(mapped)}
    added = _special_entries(core, vocab, len(tokens))
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
            "merges": _merges(core, mapped),
        },
    }


def _check_pieces(rust_pattern: str, onig_pattern: str, what: str) -> None:
    """Compares Hugging Face's Split with bytebpe's pre-tokenization on the battery."""
    tokenizers = tokenizers_module()
    try:
        split = tokenizers.pre_tokenizers.Split(
            tokenizers.Regex(onig_pattern), behavior="isolated"
        )
    except Exception as e:
        raise ValueError(f"{what}: Oniguruma rejects the pattern {onig_pattern!r}: {e}") from None
    for text, want in zip(stress_texts(), stress_pieces(rust_pattern)):
        got = tuple(piece.encode("utf-8") for piece, _ in split.pre_tokenize_str(text))
        if got != want:
            raise ValueError(
                f"{what}: the pattern {rust_pattern!r} splits text differently in Hugging Face "
                "(Oniguruma, which reads it as "
                f"{onig_pattern!r}) than in bytebpe: "
                + mismatch_message("", text, want, got, len)[1:]
            )


def check_ids(core: CoreTokenizer, hf: Any, what: str, texts: Sequence[str]) -> None:
    """bytebpe (every special allowed) and Hugging Face must give the same ids."""
    texts = list(texts)
    specials = [text for text, _ in core.special_tokens]
    if specials:
        texts += [
            specials[k % len(specials)].join([t, t[: len(t) // 2], ""])
            for k, t in enumerate(texts[:64])
        ]
        texts.append("".join(specials) + " " + " ".join(specials))
    got = [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)]
    wanted = core.encode_batch(texts, None, set(specials) or None)
    for text, ids, want in zip(texts, got, wanted):
        if ids != want:
            raise ValueError(mismatch_message(
                what, text, want, ids, lambda t: len(core.decode_bytes([t]))
            ))


def vocab_texts(core: CoreTokenizer, limit: int = 10000) -> list[str]:
    """Strings that exercise the merges: tokens repeated and next to their neighbours. A
    token over 64 KiB is checked alone: five copies of each (a 1 MB token) made the check
    take most of the export."""
    tokens = core.tokens()
    step = max(1, len(tokens) // limit)
    out = []
    for i in range(256, len(tokens), step):
        token = tokens[i]
        long = len(token) > 1 << 16
        for data in (token,) if long else (token * 3, token + tokens[i - 1] + token):
            try:
                out.append(data.decode("utf-8"))
            except UnicodeDecodeError:
                pass
    return out


def to_huggingface(core: CoreTokenizer) -> Any:
    """A `tokenizers.Tokenizer` giving `core`'s ids (checked before it is returned)."""
    return _checked(core, to_huggingface_json(core))[0]


def _checked(core: CoreTokenizer, document: dict[str, Any]) -> tuple[Any, str]:
    tokenizers = tokenizers_module()
    what = "cannot export to Hugging Face"
    onig = document["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"]
    if core.pattern not in builtin_sources():
        _check_pieces(core.pattern, onig, what)
    text = json.dumps(document, ensure_ascii=False)
    hf = tokenizers.Tokenizer.from_str(text)
    for special, token in core.special_tokens:
        if hf.token_to_id(special) != token:
            raise ValueError(
                f"{what}: Hugging Face gives the special token {special!r} id "
                f"{hf.token_to_id(special)}, not {token}"
            )
    check_ids(
        core, hf, f"{what}: Hugging Face gives different ids",
        [*stress_texts(), *vocab_texts(core)],
    )
    return hf, text


def save_huggingface(core: CoreTokenizer, path: str | os.PathLike[str]) -> None:
    """Writes tokenizer.json at `path` (checked like `to_huggingface`)."""
    _, text = _checked(core, to_huggingface_json(core))
    write_atomic(path, text.encode("utf-8"))
