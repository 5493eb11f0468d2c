"""Interop with tiktoken and Hugging Face `tokenizers`, one job per module:

- `battery`: the stress texts every export is checked on, bytebpe's own pre-tokenization
  of texts, and the message naming where an export differs;
- `bytemap`: GPT-2's byte <-> unicode mapping (Hugging Face's byte-level vocabularies);
- `oniguruma`: the Rust regex <-> Oniguruma pattern translator;
- `tiktoken`: export to `tiktoken.Encoding`, the `.tiktoken` ranks file and its sidecar,
  import of either;
- `huggingface`: export to `tokenizer.json` and the id check shared with the import;
- `huggingface_import`: import of byte-level BPE `tokenizer.json` files;
- `transformers`: `save_pretrained`, a directory `AutoTokenizer.from_pretrained` loads.

These modules take and return the native `CoreTokenizer`; they import the native
module, `patterns` and `file_format`, never `bytebpe.tokenizer` (which wraps them).
The optional packages (tiktoken, tokenizers) are imported only when an export or
import needs them.
"""

from bytebpe.interop import (
    battery,
    bytemap,
    huggingface,
    huggingface_import,
    oniguruma,
    tiktoken,
    transformers,
)

__all__ = [
    "battery",
    "bytemap",
    "huggingface",
    "huggingface_import",
    "oniguruma",
    "tiktoken",
    "transformers",
]
