"""The hand-written splitters of the built-in patterns against fancy-regex.

`bytebpe._bytebpe._split(pattern, text, use_regex)` splits `text` through either path;
hypothesis (derandomized) generates the text. Plus the million-character inputs that
fancy-regex cannot split, through the public API, with ids compared to a reference.
"""

from __future__ import annotations

import pytest
from bytebpe import Tokenizer
from bytebpe._bytebpe import _split
from bytebpe.sample import sample_documents
from hypothesis import given, settings
from hypothesis import strategies as st
from tiktoken_pieces import reference_ids

PATTERNS = ["gpt2", "cl100k", "o200k"]

# Characters and snippets that sit on the boundaries of the patterns' alternatives.
STRESS = [
    # contractions, any case, and U+017F LONG S (folds to "s" under (?i:...))
    "'", "'s", "'S", "'t", "'re", "'RE", "'ve", "'m", "'ll", "'LL", "'d", "'\u017f",
    "don't", "WE'LL", "s", "l", "e",
    # whitespace: ASCII, Unicode White_Space, and U+001C (isspace() in Python, not \s)
    " ", "  ", "\t", "\r", "\n", "\r\n", "\x0b", "\x0c", "\xa0", "\u3000", "\u2028",
    "\x85", "\x1c",
    # punctuation, slashes, symbols, emoji
    ".", "!", "?", "/", "//", "^", "$", "\U0001f600", "\U0001f44d\U0001f3fd", "\u200d",
    # marks: combining acute, Devanagari vowel sign and virama, Thai vowel
    "\u0301", "e\u0301", "A\u0301", "\u093f", "\u094d", "\u0e31",
    # letters: CJK, Hangul, Arabic, Devanagari, Thai, titlecase, modifier, other
    "\u4e2d", "\ud55c\uad6d", "\u0628\u0639", "\u0915", "\u0e01", "\u01c5", "\u02b0",
    "\u30fc", "\xaa", "Hello", "WORLD", "HTTPServer", "x",
    # numbers: ASCII, Arabic-Indic, circled, superscript, Roman
    "0", "123456", "\u0663", "\u2460", "\xb2", "\u216b",
]

no_surrogates = st.characters(exclude_categories=("Cs",))
texts = st.one_of(
    st.text(no_surrogates, max_size=40),
    st.lists(st.one_of(st.sampled_from(STRESS), no_surrogates), max_size=40).map("".join),
)


@pytest.mark.parametrize("pattern", PATTERNS)
@settings(derandomize=True, max_examples=1000, deadline=None)
@given(text=texts)
def test_hand_written_splitter_matches_fancy_regex(pattern, text):
    fast = _split(pattern, text, False)
    assert fast == _split(pattern, text, True)
    assert b"".join(fast) == text.encode()


@pytest.mark.parametrize("pattern", PATTERNS)
def test_long_runs_match_fancy_regex(pattern):
    for run in [" ", "\n", " \n", "a", "A", "A\u0301", "1", "^", "'s", "\u4e2d"]:
        text = "x" + run * 2000 + " !"
        assert _split(pattern, text, False) == _split(pattern, text, True)


def test_the_regex_path_fails_where_the_fast_path_does_not():
    text = " " * 1_000_000 + "x"
    with pytest.raises(ValueError, match="(?i)stack"):
        _split("cl100k", text, True)
    assert _split("cl100k", text, False) == [b" " * 999_999, b" x"]


@pytest.fixture(scope="module", params=PATTERNS)
def tok(request):
    docs = sample_documents(split="train")[:50]
    return Tokenizer.train_from_iterator(docs, 400, pattern=request.param, progress=False)


@pytest.mark.parametrize(
    "text", [" " * 1_000_000 + "x", "\n" * 1_000_000, " \n" * 500_000 + "x", "a" * 1_000_000]
)
def test_million_character_runs_encode_and_round_trip(tok, text):
    ids = tok.encode_ordinary(text)
    assert ids == reference_ids(tok.mergeable_ranks(), tok.pattern, text)
    assert tok.decode(ids) == text


def test_training_on_a_million_spaces():
    text = " " * 1_000_000 + "x"
    docs = sample_documents(split="train")[:50] + [text]
    tok = Tokenizer.train_from_iterator(docs, 300, progress=False)
    ids = tok.encode_ordinary(text)
    assert ids == reference_ids(tok.mergeable_ranks(), tok.pattern, text)
    assert tok.decode(ids) == text
