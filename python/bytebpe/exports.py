"""Export to tiktoken, Hugging Face `tokenizers` and transformers, as a base class of
`Tokenizer` (`Exports`): each method is one call into `interop` with the native
tokenizer. The imports (`from_tiktoken`, `from_huggingface`) are constructors and stay
on `Tokenizer`.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Literal

from bytebpe import _bytebpe, interop

if TYPE_CHECKING:
    import tiktoken

__all__ = ["Exports"]


class Exports:
    """`to_tiktoken`, `save_tiktoken`, `to_huggingface`, `save_huggingface` and
    `save_pretrained` over `_core` (the native tokenizer)."""

    __slots__ = ()
    _core: _bytebpe.CoreTokenizer

    def to_tiktoken(self, name: str = "bytebpe") -> tiktoken.Encoding:
        """A `tiktoken.Encoding` with identical ids (needs tiktoken installed)."""
        enc: tiktoken.Encoding = interop.tiktoken.to_tiktoken(self._core, name)
        return enc

    def save_tiktoken(self, path: str | os.PathLike[str]) -> None:
        """Writes the `.tiktoken` ranks file plus a `<path>.json` sidecar holding what the
        format cannot (pattern, special tokens) and the ranks file's hash."""
        interop.tiktoken.save_tiktoken(self._core, path)

    def to_huggingface(self) -> Any:
        """A `tokenizers.Tokenizer` with identical ids (needs tokenizers installed)."""
        return interop.huggingface.to_huggingface(self._core)

    def save_huggingface(self, path: str | os.PathLike[str]) -> None:
        """Writes a `tokenizer.json` (also loadable by transformers'
        `PreTrainedTokenizerFast(tokenizer_file=...)`)."""
        interop.huggingface.save_huggingface(self._core, path)

    def save_pretrained(
        self,
        directory: str | os.PathLike[str],
        *,
        bos_token: str | None = None,
        eos_token: str | None = None,
        pad_token: str | None = None,
        unk_token: str | None = None,
        model_max_length: int | None = None,
        padding_side: Literal["right", "left"] = "right",
    ) -> list[str]:
        """Writes a directory `transformers.AutoTokenizer.from_pretrained(directory)`
        loads offline (`tokenizer.json`, `tokenizer_config.json`,
        `special_tokens_map.json`); returns the paths written. Each role names one of the
        special tokens, so `padding=True` works with a `pad_token`. `len()` of the loaded
        tokenizer equals `vocab_size`; its `vocab_size` counts no special tokens (they are
        Hugging Face "added tokens").

        >>> tok.save_pretrained("out", eos_token="<|endoftext|>", pad_token="<|pad|>")  # doctest: +SKIP
        >>> AutoTokenizer.from_pretrained("out")(["a", "bc"], padding=True)          # doctest: +SKIP
        """
        roles = {"bos_token": bos_token, "eos_token": eos_token, "pad_token": pad_token,
                 "unk_token": unk_token}
        return interop.transformers.save_pretrained(
            self._core, directory, roles, model_max_length=model_max_length,
            padding_side=padding_side,
        )
