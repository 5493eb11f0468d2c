"""Single calls on texts either side of the size up to which the core keeps the GIL
(`SMALL_WORK` in src/py/enter.rs: 256 bytes of UTF-8): the same ids as the batch path, which
always releases it, and as encoding the bytes."""

from __future__ import annotations

import pytest
from bytebpe import Tokenizer

SMALL_WORK = 256
BASE = "héllo wörld, the tokenizer's 123 <|eot|> ünïcode\n\n  x"


@pytest.fixture(scope="module")
def tok():
    return Tokenizer.train_from_iterator(
        [BASE * 3] * 20, 290, progress=False, special_tokens=["<|eot|>"]
    )


def text_of(size: int) -> str:
    """A text of `size` UTF-8 bytes or one to three fewer (a character is not cut)."""
    data = (BASE * (size // len(BASE) + 1)).encode()[:size]
    return data.decode("utf-8", "ignore")


@pytest.mark.parametrize("size", [0, 1, SMALL_WORK - 1, SMALL_WORK, SMALL_WORK + 1, 4 * SMALL_WORK])
def test_ids_do_not_depend_on_the_size(tok, size):
    text = text_of(size)
    assert abs(len(text.encode()) - size) <= 3
    ids = tok.encode_ordinary(text)
    assert ids == tok.encode_ordinary_batch([text, "x"])[0]
    assert ids == tok.encode_bytes(text.encode())
    assert tok.decode(ids) == text
    special = tok.encode(text, allowed_special="all")
    assert special == tok.encode_batch([text, "x"], allowed_special="all")[0]
    assert tok.decode(special) == text
    assert (tok.special_tokens["<|eot|>"] in special) == ("<|eot|>" in text)
