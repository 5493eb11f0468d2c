"""The stress-text battery every export is checked on, bytebpe's own pre-tokenization of
texts (`pieces`), and the message that names where an export differs from bytebpe."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TypeVar

from bytebpe._bytebpe import _split

__all__ = ["mismatch_message", "pieces", "stress_pieces", "stress_texts"]

T = TypeVar("T")

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
    """bytebpe's pre-tokenization of each text (its pieces, in order, as bytes): the
    native splitter that training and encoding use, including each run of text a custom
    pattern leaves unmatched. `pattern` is a built-in name or a regex."""
    return [_split(pattern, text, False) for text in texts]


@functools.lru_cache(maxsize=4)
def stress_pieces(pattern: str) -> tuple[tuple[bytes, ...], ...]:
    """`pieces` of the battery, kept for the last few patterns: the native splitter
    compiles a custom pattern on every call (about a millisecond for one with Unicode
    classes), which is most of an export's checking time, and an export to tiktoken and
    to Hugging Face split the battery with the same pattern."""
    return tuple(tuple(p) for p in pieces(pattern, stress_texts()))


def mismatch_message(what: str, text: str, want: Sequence[T], got: Sequence[T],
                     length: Callable[[T], int]) -> str:
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
