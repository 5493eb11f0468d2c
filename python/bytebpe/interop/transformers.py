"""A directory `transformers.AutoTokenizer.from_pretrained` loads (offline): the checked
`tokenizer.json` of `huggingface.py`, plus `tokenizer_config.json` and
`special_tokens_map.json` naming the special tokens' roles (bos, eos, pad, unk), so
`padding=True` and `add_special_tokens` work as in any Hugging Face tokenizer.

How sizes count: the BPE model holds the 256 bytes and the merged tokens; special tokens
are Hugging Face "added tokens" with their bytebpe ids. So `len(hf_tokenizer)` equals
bytebpe's `vocab_size` (special tokens included) and `hf_tokenizer.vocab_size` is the
model's size without them (bytebpe's `vocab_size - len(special_tokens)`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping

from bytebpe import file_format
from bytebpe._bytebpe import CoreTokenizer
from bytebpe.interop.huggingface import save_huggingface

__all__ = ["ROLES", "save_pretrained"]

ROLES = ("bos_token", "eos_token", "pad_token", "unk_token")


def _check_roles(core: CoreTokenizer, roles: Mapping[str, str | None]) -> dict[str, str]:
    specials = [t for t, _ in core.special_tokens]
    out = {}
    for role, token in roles.items():
        if token is None:
            continue
        if not isinstance(token, str):
            raise TypeError(f"{role} must be a str (a special token's text), not "
                            f"{type(token).__name__}")
        if token not in specials:
            raise ValueError(
                f"{role}={token!r} is not a special token of this tokenizer (it has "
                f"{specials}); train with special_tokens=[..., {token!r}] to give it an id"
            )
        out[role] = token
    return out


def save_pretrained(
    core: CoreTokenizer,
    directory: str | os.PathLike[str],
    roles: Mapping[str, str | None],
    *,
    model_max_length: int | None,
    padding_side: str,
) -> list[str]:
    """Writes the three files into `directory` (created if missing); returns their paths."""
    chosen = _check_roles(core, roles)
    if padding_side not in ("right", "left"):
        raise ValueError(f"padding_side={padding_side!r}; choose 'right' or 'left'")
    if model_max_length is not None and (
        isinstance(model_max_length, bool) or not isinstance(model_max_length, int)
        or model_max_length < 1
    ):
        raise ValueError(f"model_max_length={model_max_length!r}; give a positive int or None")
    path = os.fspath(directory)
    if os.path.exists(path) and not os.path.isdir(path):
        raise ValueError(f"save_pretrained writes a directory; {path!r} is a file")
    os.makedirs(path, exist_ok=True)
    tokenizer_json = os.path.join(path, "tokenizer.json")
    save_huggingface(core, tokenizer_json)
    specials = [t for t, _ in sorted(core.special_tokens, key=lambda kv: kv[1])]
    others = [t for t in specials if t not in chosen.values()]
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "clean_up_tokenization_spaces": False,
        "add_prefix_space": False,
        "model_max_length": model_max_length if model_max_length is not None else 10**30,
        "padding_side": padding_side,
        "model_input_names": ["input_ids", "attention_mask"],
        **chosen,
        "additional_special_tokens": others,
    }
    special_map = {**chosen, "additional_special_tokens": others}
    written = [tokenizer_json]
    for name, document in (("tokenizer_config.json", config),
                           ("special_tokens_map.json", special_map)):
        target = os.path.join(path, name)
        text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
        file_format.write_atomic(target, text.encode("utf-8"))
        written.append(target)
    return written
