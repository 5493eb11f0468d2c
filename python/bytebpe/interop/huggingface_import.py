"""Hugging Face `tokenizers` import: a native `CoreTokenizer` from a byte-level BPE
`tokenizer.json` (a path, its JSON text or a `tokenizers.Tokenizer`), with the checks
that refuse what bytebpe cannot reproduce (other models, normalizers, pre-tokenizers
other than Split + ByteLevel, added-token options) and a final check that the import
encodes like Hugging Face on a battery of texts.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from bytebpe._bytebpe import CoreTokenizer, CorruptTokenizerError, resolve_pattern
from bytebpe.fields import MAX_ID, At, parse_json, reading
from bytebpe.interop.battery import stress_texts
from bytebpe.interop.bytemap import unicode_to_bytes
from bytebpe.interop.huggingface import check_ids, tokenizers_module, vocab_texts
from bytebpe.interop.oniguruma import rust_pattern

__all__ = ["from_huggingface", "from_huggingface_bytes", "import_document"]

GPT2_PATTERN = resolve_pattern("gpt2")


def _load(source: Any) -> tuple[Any, str]:
    """The JSON document of `source` and how errors name it."""
    if hasattr(source, "to_str") and hasattr(source, "encode_batch"):
        where = "the tokenizers.Tokenizer"
        return parse_json(source.to_str().encode("utf-8"), where, "tokenizer.json"), where
    if isinstance(source, str) and source.lstrip().startswith("{"):
        where = "the tokenizer.json text"
        return parse_json(source.encode("utf-8", "surrogatepass"), where, "tokenizer.json"), where
    if isinstance(source, (str, bytes, os.PathLike)):
        path = os.fsdecode(source)
        if os.path.isdir(path):
            path = os.path.join(path, "tokenizer.json")
        with open(path, "rb") as f:
            raw = f.read()
        where = repr(path)
        return parse_json(raw, where, "tokenizer.json"), where
    raise TypeError(
        "from_huggingface takes a tokenizer.json path, its JSON text or a "
        f"tokenizers.Tokenizer, not {type(source).__name__}"
    )


def _components(node: Any, at: At) -> list[dict[str, Any]]:
    """The steps of a normalizer, pre-tokenizer or decoder (a Sequence flattened)."""
    if node is None:
        return []
    step = at.obj(node)
    if step.get("type") == "Sequence":
        name = next((k for k in ("pretokenizers", "normalizers", "decoders") if k in step), "")
        if not name:
            raise at.error("a Sequence without its list of steps")
        inner = at.key(name)
        return [c for i, sub in enumerate(inner.array(step[name]))
                for c in _components(sub, inner.item(i))]
    return [step]


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
    parts = _components(document.get("pre_tokenizer"), At(where, "pre_tokenizer"))
    names = [str(p.get("type")) for p in parts]
    described = f"pre-tokenizer {' + '.join(names) or 'none'}"
    levels = [p for p in parts if p.get("type") == "ByteLevel"]
    if not levels:
        decoders = [str(d.get("type"))
                    for d in _components(document.get("decoder"), At(where, "decoder"))]
        normalizers = [str(d.get("type"))
                       for d in _components(document.get("normalizer"), At(where, "normalizer"))]
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
        return rust_pattern(pattern["Regex"])
    if isinstance(pattern, dict) and isinstance(pattern.get("String"), str):
        return re.escape(str(pattern["String"]))
    raise CorruptTokenizerError(f"{where}: malformed Split pattern {pattern!r}")


def from_huggingface(source: Any) -> CoreTokenizer:
    """A tokenizer from a byte-level BPE tokenizer.json, checked to encode like it."""
    document, where = _load(source)
    with reading(where):
        return import_document(document, where)


def from_huggingface_bytes(raw: bytes, where: str) -> CoreTokenizer:
    """The tokenizer of a tokenizer.json's bytes (read once: the file may be a pipe)."""
    document = parse_json(raw, where, "tokenizer.json")
    with reading(where):
        return import_document(document, where)


def import_document(document: Any, where: str) -> CoreTokenizer:
    """The tokenizer of a parsed tokenizer.json, every field checked (`where` names it)."""
    top = At(where)
    value, at = top.field(top.obj(document), "model")
    model = at.obj(value)
    kind = _model_type(model)
    if kind != "BPE":
        raise ValueError(
            f"{where} holds a {kind} model; bytebpe imports only byte-level BPE tokenizers"
        )
    normalizers = _components(document.get("normalizer"), top.key("normalizer"))
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
    by_id = _vocab(model, at)
    _check_merges(model, at, set(by_id.values()))
    specials = _added_tokens(document, top, by_id)
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
        if token < len(ranks):
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


def _vocab(model: dict[str, Any], at: At) -> dict[int, str]:
    """The BPE vocabulary by id (each id once). Entries are checked on a fast path; an
    `At` is made only to word an error."""
    value, at = at.field(model, "vocab")
    by_id: dict[int, str] = {}
    for text, token in at.obj(value).items():
        if type(token) is not int or not 0 <= token <= MAX_ID:
            at.key(text).integer(token)
        if token in by_id:
            raise at.key(text).error(f"id {token} is also the id of {by_id[token]!r}")
        by_id[token] = text
    return by_id


def _check_merges(model: dict[str, Any], at: At, vocab: set[str]) -> None:
    """Each merge joins two vocabulary entries into a third (as `tokenizers` requires;
    the import itself goes by rank, and `_check_import` compares the encodings)."""
    at = at.key("merges")
    for i, merge in enumerate(at.array(model.get("merges", []))):
        parts = merge.split(" ") if type(merge) is str else merge
        if (type(parts) is list and len(parts) == 2 and type(parts[0]) is str
                and type(parts[1]) is str and parts[0] in vocab and parts[1] in vocab
                and parts[0] + parts[1] in vocab):
            continue
        item = at.item(i)
        if not isinstance(merge, str):
            item.array(merge)
        if len(parts) != 2:
            raise item.error(f"expected two tokens ('left right' or [left, right]), "
                             f"got {len(parts)}")
        left, right = (item.item(k).string(parts[k]) for k in range(2))
        for token in (left, right, left + right):
            if token not in vocab:
                raise item.error(f"{token!r} is not in the vocabulary")


def _added_tokens(document: dict[str, Any], top: At, by_id: dict[int, str]) -> list[tuple[str, int]]:
    """The added tokens as (text, id), removed from `by_id` where the BPE vocabulary
    holds them too (with the same text)."""
    at = top.key("added_tokens")
    specials: list[tuple[str, int]] = []
    for i, entry in enumerate(at.array(document.get("added_tokens") or [])):
        item = at.item(i)
        fields = item.obj(entry)
        value, place = item.field(fields, "content")
        text = place.string(value)
        value, place = item.field(fields, "id")
        token = place.integer(value)
        for flag in ("lstrip", "rstrip", "single_word"):
            if fields.get(flag):
                raise ValueError(
                    f"{top.where}: the added token {text!r} has {flag}=true, which bytebpe "
                    "special tokens cannot reproduce"
                )
        if token in by_id:
            if by_id[token] != text:
                raise ValueError(
                    f"{top.where}: the added token {text!r} has id {token}, which the BPE "
                    f"vocabulary gives to {by_id[token]!r}"
                )
            del by_id[token]
        specials.append((text, token))
    return specials


def _check_import(core: CoreTokenizer, document: dict[str, Any], where: str) -> None:
    """Encodes a battery with Hugging Face and with the import; refuses on a difference
    (merges whose order or coverage differs from rank order, or a pattern Oniguruma and
    bytebpe read differently)."""
    tokenizers = tokenizers_module()
    hf = tokenizers.Tokenizer.from_str(json.dumps(document))
    # Only the model and pre-tokenizer matter for ids (bytebpe adds no BOS/EOS).
    hf.post_processor = None
    hf.no_truncation()
    hf.no_padding()
    tokens = core.tokens()
    texts = list(stress_texts())
    for data in tokens:
        try:
            texts.append(data.decode("utf-8"))
        except UnicodeDecodeError:
            pass
    texts.extend(vocab_texts(core))
    try:
        check_ids(core, hf, f"{where} cannot be imported exactly: Hugging Face encodes "
                   "differently than rank order", texts)
    except ValueError as e:
        raise ValueError(
            f"{e}. (bytebpe encodes by merge rank of the joined bytes, as tiktoken does; "
            "this file's merges or pre-tokenizer segment some text another way)"
        ) from None
