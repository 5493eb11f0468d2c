"""Interop: exports to tiktoken and Hugging Face give bytebpe's ids exactly; imports
encode like their source; bad files get clear errors.

Tokenizers are trained on the bundled sample (each kind, each built-in pattern) and
compared on held-out text, hand-written stress strings and hypothesis-generated text.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import random
import warnings

import bytebpe
import pytest
from bytebpe import CorruptTokenizerError, Tokenizer, TrainingWarning
from bytebpe._bytebpe import CoreTokenizer, resolve_pattern
from bytebpe.interop import battery, bytemap, oniguruma
from bytebpe.interop import huggingface as hf_export
from bytebpe.interop import tiktoken as tiktoken_interop
from bytebpe.sample import KINDS, sample_documents
from hypothesis import given, settings
from hypothesis import strategies as st

tiktoken = pytest.importorskip("tiktoken")
tiktoken_load = pytest.importorskip("tiktoken.load")
tokenizers = pytest.importorskip("tokenizers")

PATTERNS = ["gpt2", "cl100k", "o200k"]
SPECIALS = ["<|endoftext|>", "<|fim_prefix|>", "<|im_start|>"]

HAND = [
    # numbers
    "1234567", "3.14159", "1,000,000", "0.5e-10", "12345678901234567890", "\uff11\uff12\uff13",
    "\u0661\u0662\u0663\u0664", "\u0967\u0968\u0969\u096a", "\u00bd \u2153 \u216b \u00b2",
    # whitespace and CRLF runs
    "\r\n\r\n  \t\n", " " * 50 + "x", "x" + " " * 9, "a\r\nb\r\n\r\n\r\nc", "\t\t\t  \n\n x",
    "\u00a0\u2003\u3000x\u2028y\u2029z\x85w", "  \n  ", "\n", " ", "",
    # contractions
    "I'LL DON'T", "i'll don't we've you're he'd I'm it's", "'S 'T 'Re 'vE 'M 'D 'Ll \u017f'\u017f",
    # Thai, CJK, Korean, Arabic, Devanagari
    ("\u0e20\u0e32\u0e29\u0e32\u0e44\u0e17\u0e22\u0e44\u0e21\u0e48\u0e21\u0e35\u0e0a\u0e48\u0e2d"
     "\u0e07\u0e27\u0e48\u0e32\u0e07\u0e23\u0e30\u0e2b\u0e27\u0e48\u0e32\u0e07\u0e04\u0e33"),
    "\u4e2d\u6587\u6587\u672c\uff0c\u65e5\u672c\u8a9e\u306e\u6587\u7ae0\u3002",
    "\ud55c\uad6d\uc5b4 \ubb38\uc7a5\uc785\ub2c8\ub2e4",
    "\u0627\u0644\u0644\u063a\u0629 \u0627\u0644\u0639\u0631\u0628\u064a\u0629",
    "\u0939\u093f\u0928\u094d\u0926\u0940 \u092d\u093e\u0937\u093e",
    # emoji ZWJ sequences, skin tones, flags, keycaps
    "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466",
    "\U0001f3f3\ufe0f\u200d\U0001f308 \U0001f44d\U0001f3fd \U0001f1ef\U0001f1f5 #\ufe0f\u20e3",
    # combining marks
    "e\u0301e\u0301\u0302\u0323 A\u030a Z\u0351\u0352\u0353\u0354\u0355\u0356\u0357",
    # code
    "def f(x):\n    return {'a': [1, 2, 3]}  # c\r\n\tif (a != b) { c += 1; }\n",
    # adversarial
    "a" * 5000, "^" * 3000, "\n" * 3000, " " * 3000, "ab" * 2000, "\U0001f600" * 1000,
    "1" * 1000, "x\u0301" * 1000, "'s" * 1000,
]


def _train(docs, vocab_size, **kw):
    with warnings.catch_warnings():
        # The emoji kind is one short document: training stops early, as it should.
        warnings.simplefilter("ignore", TrainingWarning)
        return Tokenizer.train_from_iterator(docs, vocab_size, progress=False, **kw)


@functools.cache
def exported(pattern, kind):
    """(tokenizer, tiktoken.Encoding, tokenizers.Tokenizer) trained on one kind."""
    tok = _train(sample_documents(kind=kind), 1200, pattern=pattern, special_tokens=SPECIALS)
    return tok, tok.to_tiktoken(), tok.to_huggingface()


def assert_same_ids(tok, enc, hf, texts):
    texts = list(texts)
    ordinary = tok.encode_ordinary_batch(texts)
    assert enc.encode_ordinary_batch(texts) == ordinary
    with_specials = [tok.encode(t, allowed_special="all") for t in texts]
    assert [enc.encode(t, allowed_special="all") for t in texts] == with_specials
    got = [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)]
    for text, want, ids in zip(texts, with_specials, got):
        assert ids == want, text[:200]


def mixed(texts):
    """Each text with special tokens around and inside it."""
    out = []
    for i, t in enumerate(texts):
        a, b = SPECIALS[i % 3], SPECIALS[(i + 1) % 3]
        out.append(a + t[: len(t) // 2] + b + t[len(t) // 2:] + b + b + " " + a)
    return out


# ==================== Export equality


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("pattern", PATTERNS)
def test_exports_match_on_heldout(pattern, kind):
    tok, enc, hf = exported(pattern, kind)
    assert tok.special_tokens == {s: tok.vocab_size - 3 + i for i, s in enumerate(SPECIALS)}
    heldout = sample_documents(split="heldout", kind=kind)
    others = sample_documents(split="heldout")[::10]
    assert_same_ids(tok, enc, hf, heldout + others)
    assert_same_ids(tok, enc, hf, mixed(heldout[::5] + others[::3]))


@pytest.mark.parametrize("pattern", PATTERNS)
def test_exports_match_on_hand_written_strings(pattern):
    for kind in ("english", "multilingual"):
        tok, enc, hf = exported(pattern, kind)
        assert_same_ids(tok, enc, hf, HAND)
        assert_same_ids(tok, enc, hf, mixed(HAND))
        assert_same_ids(tok, enc, hf, battery.stress_texts())
        assert_same_ids(tok, enc, hf, ["".join(SPECIALS), SPECIALS[0] * 3, "<|endoftext", "|>"])


@pytest.mark.parametrize("pattern", PATTERNS)
def test_hf_pre_tokenizer_splits_like_bytebpe(pattern):
    hf = exported(pattern, "code")[2]
    texts = [*HAND, *battery.stress_texts()]
    split = hf.pre_tokenizer
    for text, want in zip(texts, battery.pieces(resolve_pattern(pattern), texts)):
        got = [bytemap.unicode_to_bytes(p) for p, _ in split.pre_tokenize_str(text)]
        assert got == want, text[:100]


def test_hf_pattern_translation_of_builtins():
    onig = {p: oniguruma.to_oniguruma(resolve_pattern(p)) for p in PATTERNS}
    # Oniguruma reads `{1,3}+` as a repeated interval, and `$` as end of line.
    assert "(?>\\p{N}{1,3})" in onig["cl100k"] and "{1,3}+" not in onig["cl100k"]
    assert "\\s++\\z" in onig["cl100k"] and "$" not in onig["cl100k"]
    assert "\\s++\\z" in onig["gpt2"]
    assert onig["o200k"] == resolve_pattern("o200k")
    split = tokenizers.pre_tokenizers.Split(tokenizers.Regex(onig["cl100k"]), "isolated")
    text = "12915 x  \n  y  "
    want = ["129", "15", " x", "  \n", " ", " y", "  "]
    assert [p for p, _ in split.pre_tokenize_str(text)] == want
    assert battery.pieces("cl100k", [text]) == [[p.encode() for p in want]]


def test_repeated_characters_tie_break_leftmost():
    # Tokens "aa", "aaa", "aaaa", ...: HF's pair ranks must pick the leftmost pair on ties
    # exactly as tiktoken's byte ranks do.
    docs = ["a" * n for n in range(1, 40)] + ["ab" * n + "a" for n in range(1, 20)]
    tok = _train(docs, 300, pattern=r"[^\n]+", min_frequency=1)
    enc, hf = tok.to_tiktoken(), tok.to_huggingface()
    texts = ["a" * n for n in range(1, 300)] + ["ab" * n for n in range(1, 100)]
    texts += ["b" + "a" * n + "b" for n in range(1, 100)]
    assert_same_ids(tok, enc, hf, texts)
    assert hf.encode("aaaa").ids == tok.encode("aaaa")


no_surrogates = st.characters(exclude_categories=("Cs",))
snippets = st.sampled_from([
    *SPECIALS, " ", "  ", "\n", "\r\n", "\t", "'s", "'LL", "1", "123", "\u0301", "\u200d",
    "\U0001f44d", "\u4e2d", "\u0e01", "\u0915", "a", "the", " the", "\u00a0", "\u3000",
])
random_text = st.lists(st.one_of(snippets, no_surrogates, st.text(no_surrogates, max_size=8)),
                       max_size=30).map("".join)


@settings(derandomize=True, max_examples=300, deadline=None)
@given(text=random_text, which=st.sampled_from([(p, k) for p in PATTERNS for k in
                                                 ("english", "multilingual")]))
def test_exports_match_on_random_text(text, which):
    tok, enc, hf = exported(*which)
    want = tok.encode(text, allowed_special="all")
    assert enc.encode(text, allowed_special="all") == want
    assert hf.encode(text, add_special_tokens=False).ids == want
    ordinary = tok.encode_ordinary(text)
    assert enc.encode_ordinary(text) == ordinary
    assert tok.decode(want) == text


@settings(derandomize=True, max_examples=100, deadline=None)
@given(
    tokens=st.lists(st.text("ab", min_size=2, max_size=7), min_size=1, max_size=40, unique=True),
    texts=st.lists(st.text("ab ", max_size=40), min_size=1, max_size=20),
)
def test_hf_merges_follow_rank_order_for_any_vocabulary(tokens, texts):
    # Any ids, any order (not only trained vocabularies, where a token's parts come
    # before it): Hugging Face's pair ranks still give tiktoken's byte-rank segmentation.
    ranks = [(bytes([b]), b) for b in range(256)]
    ranks += [(t.encode(), 256 + i) for i, t in enumerate(tokens)]
    tok = Tokenizer(CoreTokenizer.from_ranks(r" ?[ab]+|\s", ranks, []))
    hf = tokenizers.Tokenizer.from_str(json.dumps(hf_export.to_huggingface_json(tok._core)))
    for text in texts:
        assert hf.encode(text).ids == tok.encode(text), text


_CHARS = ["\u00e9", "\u0436", "\u4e2d", "\u6587", "\U0001f600", "a", " "]
_FRAGMENTS = sorted({c.encode()[i:j] for c in _CHARS for i in range(4) for j in range(i + 1, 5)}
                    - {b""})


@settings(derandomize=True, max_examples=150, deadline=None)
@given(
    tokens=st.lists(st.lists(st.sampled_from(_FRAGMENTS), min_size=1, max_size=4).map(b"".join),
                    min_size=1, max_size=60, unique=True),
    texts=st.lists(st.text(st.sampled_from(_CHARS), max_size=60), min_size=1, max_size=10),
)
def test_mixed_scripts_match_tiktoken_for_any_vocabulary(tokens, texts):
    # Tokens of whole characters, parts of them and parts across them, in any rank order:
    # the encoder may start a piece's merge from whole characters only where that gives
    # the byte-start ids, which tiktoken computes.
    tokens = [t for t in tokens if len(t) > 1]
    ranks = [(bytes([b]), b) for b in range(256)]
    ranks += [(t, 256 + i) for i, t in enumerate(tokens)]
    pattern = r"\S+|\s+"
    tok = Tokenizer(CoreTokenizer.from_ranks(pattern, ranks, []))
    enc = tiktoken.Encoding("any", pat_str=pattern, mergeable_ranks=dict(ranks),
                            special_tokens={})
    for text in texts:
        assert tok.encode_ordinary(text) == enc.encode_ordinary(text), text


# ==================== Custom patterns, odd special tokens


@pytest.mark.parametrize(
    "pattern",
    [
        r"\w+|[^\w\s]+|\s+",  # \w differs between the engines: translated
        r"[a-z]+|\d",  # leaves text unmatched: tiktoken gets a gap-covering alternative
        r"(?m)^\w+|\s+(?!\S)|\s+|.",  # multi-line anchors
        r"(?i:the|and)\b| ?\p{L}{1,4}+|\p{N}|[^\p{L}\p{N}]",  # possessive interval, \b
    ],
)
def test_custom_patterns_export_exactly(pattern):
    tok = _train(sample_documents(kind="english")[:60], 700, pattern=pattern,
                 special_tokens=SPECIALS[:1])
    enc, hf = tok.to_tiktoken(), tok.to_huggingface()
    texts = [*HAND, *sample_documents(split="heldout")[:40]]
    assert_same_ids(tok, enc, hf, texts)
    for text in texts:
        assert enc.decode_bytes(enc.encode_ordinary(text)) == text.encode()


@pytest.mark.parametrize("pattern", [r"x*", r"(?:)|a"])
def test_pattern_matching_empty_text_is_refused(pattern):
    # bytebpe skips empty matches; tiktoken panics on them and Hugging Face splits there.
    tok = _train(["xxab x"] * 5, 260, pattern=pattern)
    with pytest.raises(ValueError, match="cannot export to tiktoken"):
        tok.to_tiktoken()
    with pytest.raises(ValueError, match="cannot export to Hugging Face.*splits text differently"):
        tok.to_huggingface()


def test_untranslatable_pattern_is_refused():
    tok = _train(["aaa bbb"] * 5, 260, pattern=r"(?U)a+|b+|.")
    with pytest.raises(ValueError, match=r"Hugging Face.*inline flag 'U'"):
        tok.to_huggingface()
    tok = _train(["aaa bbb"] * 5, 260, pattern=r"a(?i)b|.")
    with pytest.raises(ValueError, match=r"not at the start of a group"):
        tok.to_huggingface()


def test_special_token_prefix_of_another():
    tok = _train(sample_documents(kind="code")[:20], 400, special_tokens=["<|a|>", "<|a|>x"])
    # bytebpe and Hugging Face take the longest; tiktoken's choice follows hash order.
    with pytest.raises(ValueError, match="prefix of '<|a|>x'"):
        tok.to_tiktoken()
    hf = tok.to_huggingface()
    for text in ["<|a|>x", "<|a|>", "q<|a|>xx<|a|>"]:
        assert hf.encode(text).ids == tok.encode(text, allowed_special="all")


def test_special_tokens_with_id_gaps():
    base = exported("cl100k", "english")[0]
    n = base._core.n_mergeable
    specials = [("<|endoftext|>", n + 5), ("<|pad|>", n), ("<|x|>", n + 1000)]
    tok = Tokenizer(CoreTokenizer.from_ranks(
        base.pattern, sorted(base.mergeable_ranks().items(), key=lambda kv: kv[1]), specials
    ))
    enc, hf = tok.to_tiktoken(), tok.to_huggingface()
    for text, token in specials:
        assert hf.token_to_id(text) == token
    texts = [f"a{s}b{t}" for s, _ in specials for t, _ in specials] + HAND[:10]
    assert_same_ids(tok, enc, hf, texts)
    assert hf.decode(hf.encode("hi <|x|>").ids, skip_special_tokens=False) == "hi <|x|>"


# ==================== Round trips and imports


def test_tiktoken_file_round_trip(tmp_path, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # tiktoken would cache files by path
    tok = exported("o200k", "multilingual")[0]
    path = tmp_path / "tok.tiktoken"
    tok.save_tiktoken(path)
    assert tiktoken_load.load_tiktoken_bpe(str(path)) == tok.mergeable_ranks()
    side = json.loads((tmp_path / "tok.tiktoken.json").read_text())
    assert side["pattern"] == tok.pattern and side["special_tokens"] == tok.special_tokens
    assert side["n_ranks"] == len(tok.mergeable_ranks())
    assert side["ranks_sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    back = Tokenizer.from_tiktoken(path)
    assert back.mergeable_ranks() == tok.mergeable_ranks()
    assert (back.pattern, back.special_tokens) == (tok.pattern, tok.special_tokens)
    texts = sample_documents(split="heldout")[::3] + HAND
    assert [back.encode(t, allowed_special="all") for t in texts] == [
        tok.encode(t, allowed_special="all") for t in texts
    ]
    # An imported tokenizer (no merge log) round-trips to equality and exports again.
    path2 = tmp_path / "again.tiktoken"
    back.save_tiktoken(path2)
    assert Tokenizer.from_tiktoken(path2) == back
    assert path2.read_bytes() == path.read_bytes()
    assert_same_ids(back, back.to_tiktoken(), back.to_huggingface(), HAND[:20])
    # Explicit arguments override the sidecar.
    plain = Tokenizer.from_tiktoken(path, pattern="gpt2", special_tokens={})
    assert plain.pattern == resolve_pattern("gpt2") and plain.special_tokens == {}


def test_from_tiktoken_encoding(tmp_path):
    tok, enc, _ = exported("cl100k", "code")
    back = Tokenizer.from_tiktoken(enc)
    assert back.mergeable_ranks() == tok.mergeable_ranks()
    assert back.special_tokens == tok.special_tokens and back.pattern == tok.pattern
    other = Tokenizer.from_tiktoken(enc, pattern="gpt2", special_tokens={"<|x|>": 5000})
    assert other.pattern == resolve_pattern("gpt2") and other.special_tokens == {"<|x|>": 5000}


def test_from_tiktoken_with_permuted_byte_ids():
    # tiktoken's own encodings do not give bytes the ids 0..255 (b"!" is 0 in cl100k);
    # build such an encoding by hand, since downloading them is not possible here.
    tok = exported("cl100k", "multilingual")[0]
    perm = list(range(256))
    random.Random(7).shuffle(perm)
    assert perm != list(range(256))
    ranks = {t: (perm[i] if i < 256 else i) for t, i in tok.mergeable_ranks().items()}
    enc = tiktoken.Encoding("permuted", pat_str=tok.pattern, mergeable_ranks=ranks,
                            special_tokens=tok.special_tokens)
    back = Tokenizer.from_tiktoken(enc)
    assert back.mergeable_ranks() == ranks
    texts = sample_documents(split="heldout")[::5] + HAND + mixed(HAND[:10])
    for text in texts:
        want = [perm[i] if i < 256 else i for i in tok.encode(text, allowed_special="all")]
        assert back.encode(text, allowed_special="all") == want
        assert enc.encode(text, allowed_special="all") == want
    # ...and it exports to both formats with the same permuted ids.
    assert_same_ids(back, back.to_tiktoken(), back.to_huggingface(), texts[:40])


def test_huggingface_file_round_trip(tmp_path):
    tok, _, hf = exported("cl100k", "english")
    path = tmp_path / "tokenizer.json"
    tok.save_huggingface(path)
    document = json.loads(path.read_text(encoding="utf-8"))
    assert document["model"]["type"] == "BPE" and document["model"]["ignore_merges"] is True
    assert document["normalizer"] is None and document["post_processor"] is None
    # ids are not permuted: the vocabulary maps each token's byte-level string to its id
    vocab = document["model"]["vocab"]
    assert vocab["!"] == ord("!") and vocab["\u0120"] == ord(" ") and vocab["\u0100"] == 0
    loaded = tokenizers.Tokenizer.from_file(str(path))
    texts = sample_documents(split="heldout")[::4] + HAND
    assert_same_ids(tok, tok.to_tiktoken(), loaded, texts)
    for source in (path, str(path), tmp_path, path.read_text(encoding="utf-8"), hf):
        back = Tokenizer.from_huggingface(source)
        assert back.mergeable_ranks() == tok.mergeable_ranks()
        assert (back.pattern, back.special_tokens) == (tok.pattern, tok.special_tokens)
    assert loaded.decode(loaded.encode(HAND[-5]).ids) == HAND[-5]
    # An imported tokenizer round-trips to equality.
    back.save_huggingface(tmp_path / "again.json")
    assert Tokenizer.from_huggingface(tmp_path / "again.json") == back


def test_transformers_loads_the_file(tmp_path):
    import transformers  # a test dependency: missing, the test fails rather than skips
    tok = exported("o200k", "english")[0]
    path = tmp_path / "tokenizer.json"
    tok.save_huggingface(path)
    fast = transformers.PreTrainedTokenizerFast(tokenizer_file=str(path))
    for text in HAND[:25]:
        assert fast.encode(text, add_special_tokens=False) == tok.encode(text)


LLAMA3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
          r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")


@functools.cache
def _hf_trained_json(style):
    """tokenizer.json of a BPE trained by Hugging Face's own trainer."""
    pt = tokenizers.pre_tokenizers
    if style == "gpt2":
        pre_tokenizer = pt.ByteLevel(add_prefix_space=False)
    else:
        pre_tokenizer = pt.Sequence([pt.Split(tokenizers.Regex(LLAMA3), "isolated"),
                                     pt.ByteLevel(add_prefix_space=False, use_regex=False)])
    hf = tokenizers.Tokenizer(tokenizers.models.BPE())
    hf.pre_tokenizer = pre_tokenizer
    hf.decoder = tokenizers.decoders.ByteLevel()
    trainer = tokenizers.trainers.BpeTrainer(
        vocab_size=1500, show_progress=False,
        initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet(),
    )
    docs = sample_documents(kind="english")[:80] + sample_documents(kind="code")[:80]
    hf.train_from_iterator(docs, trainer)
    hf.add_special_tokens(["<|endoftext|>"])
    return hf.to_str()


@pytest.mark.parametrize("style", ["gpt2", "split"])
def test_import_huggingface_trained_bpe(style):
    # Hugging Face's own trainer: byte ids permuted ("!" is 0), merges only as trained.
    hf = tokenizers.Tokenizer.from_str(_hf_trained_json(style))
    tok = Tokenizer.from_huggingface(hf)
    assert tok.token_bytes(0) == b"!" and tok.special_tokens == {"<|endoftext|>": 1500}
    assert tok.pattern == (resolve_pattern("gpt2") if style == "gpt2" else LLAMA3)
    texts = sample_documents(split="heldout")[::2] + HAND + mixed(HAND[:10])
    for text in texts:
        assert hf.encode(text).ids == tok.encode(text, allowed_special="all"), text[:100]


def test_gpt2_style_file_with_special_in_vocab():
    # GPT-2's tokenizer.json lists <|endoftext|> both in the BPE vocab and as added token.
    document = json.loads(_hf_trained_json("gpt2"))
    document["model"]["vocab"]["<|endoftext|>"] = 1500
    tok = Tokenizer.from_huggingface(json.dumps(document))
    assert tok.special_tokens == {"<|endoftext|>": 1500} and tok._core.n_mergeable == 1500


# ==================== Bad input


def _write(path, text):
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


@pytest.mark.parametrize(
    ("lines", "line", "why"),
    [
        (["IQ== 0", "Ig==0"], 2, "1 space-separated fields"),
        (["IQ== 0", "Ig== 1 2"], 2, "3 space-separated fields"),
        (["IQ== 0", "I*g== 1"], 2, "not valid base64"),
        (["IQ== 0", "Ig== x"], 2, "not a non-negative integer"),
        (["IQ== 0", "Ig== -1"], 2, "not a non-negative integer"),
        (["IQ== 0", "IQ== 1"], 2, "already given rank 0"),
        (["IQ== 0", "Ig== 0"], 2, "rank 0 was already given on line 1"),
        (["IQ== 0", "Ig=="], 2, "1 space-separated fields"),  # truncated mid-line
    ],
)
def test_corrupt_ranks_file_names_file_and_line(tmp_path, lines, line, why):
    path = _write(tmp_path / "bad.tiktoken", "\n".join(lines) + "\n")
    with pytest.raises(CorruptTokenizerError, match=rf"bad\.tiktoken'?, line {line}: .*{why}"):
        Tokenizer.from_tiktoken(path, pattern="cl100k")


def test_ranks_file_missing_bytes_or_ids(tmp_path):
    path = _write(tmp_path / "few.tiktoken", "IQ== 0\nIg== 1\n")
    with pytest.raises(CorruptTokenizerError, match="few.tiktoken"):
        Tokenizer.from_tiktoken(path, pattern="cl100k")
    with pytest.raises(CorruptTokenizerError, match="empty"):
        Tokenizer.from_tiktoken(_write(tmp_path / "empty.tiktoken", ""), pattern="cl100k")


def test_truncated_ranks_file_fails_its_sidecar_hash(tmp_path):
    tok = exported("gpt2", "english")[0]
    path = tmp_path / "t.tiktoken"
    tok.save_tiktoken(path)
    data = path.read_bytes()
    cut = data[: data.rindex(b"\n", 0, len(data) // 2) + 1]  # whole lines, half the file
    path.write_bytes(cut)
    with pytest.raises(CorruptTokenizerError, match=r"does not match its sidecar.*sha256"):
        Tokenizer.from_tiktoken(path)
    path.write_bytes(cut + b"SGVsbG8=")  # cut inside a line
    with pytest.raises(CorruptTokenizerError, match=r"t\.tiktoken'?, line \d+: 1 space-sep"):
        Tokenizer.from_tiktoken(path)


def test_modified_ranks_file_fails_its_sidecar_hash(tmp_path):
    tok = exported("gpt2", "english")[0]
    path = tmp_path / "t.tiktoken"
    tok.save_tiktoken(path)
    lines = path.read_bytes().splitlines(keepends=True)
    (a, ra), (b, rb) = lines[300].split(), lines[301].split()
    lines[300], lines[301] = a + b" " + rb + b"\n", b + b" " + ra + b"\n"  # swapped ranks
    path.write_bytes(b"".join(lines))
    with pytest.raises(CorruptTokenizerError, match="does not match its sidecar"):
        Tokenizer.from_tiktoken(path)
    # Without the sidecar (and with a pattern) it is a valid, different vocabulary.
    (tmp_path / "t.tiktoken.json").unlink()
    other = Tokenizer.from_tiktoken(path, pattern="gpt2")
    assert other.mergeable_ranks() != tok.mergeable_ranks()


@pytest.mark.parametrize(
    ("more", "how"),
    [(0, "same number of ranks, different bytes"), (-600, "fewer ranks than recorded"),
     (400, "more ranks than recorded")],
)
def test_another_tokenizers_ranks_file_beside_a_sidecar_is_refused(tmp_path, more, how):
    # A sidecar names the pattern and special tokens of the vocabulary it was written
    # with; another vocabulary's ranks file left beside it must not load as that.
    tok = exported("gpt2", "english")[0]
    other = _train(sample_documents(kind="code"), len(tok.mergeable_ranks()) + more,
                   pattern="cl100k")
    path = tmp_path / "t.tiktoken"
    tok.save_tiktoken(path)
    other.save_tiktoken(tmp_path / "other.tiktoken")
    (tmp_path / "other.tiktoken").replace(path)
    n_other = len(other.mergeable_ranks())
    with pytest.raises(CorruptTokenizerError) as caught:
        Tokenizer.from_tiktoken(path)
    message = str(caught.value)
    assert "t.tiktoken' does not match its sidecar" in message
    assert "t.tiktoken.json'" in message and how in message
    assert f"records {len(tok.mergeable_ranks()):,} ranks" in message
    assert f"the file has {n_other:,} ranks" in message
    with pytest.raises(CorruptTokenizerError, match=how):
        Tokenizer.load(path)  # the loader that recognises files by content checks it too
    # Its own sidecar moved beside it, it loads as itself.
    (tmp_path / "other.tiktoken.json").replace(tmp_path / "t.tiktoken.json")
    assert Tokenizer.from_tiktoken(path).mergeable_ranks() == other.mergeable_ranks()


def test_the_cli_refuses_a_ranks_file_that_does_not_match_its_sidecar(tmp_path, capsys):
    from bytebpe.cli import main

    tok = exported("gpt2", "english")[0]
    path = tmp_path / "t.tiktoken"
    tok.save_tiktoken(path)
    assert main(["inspect", str(path)]) == 0
    assert f"vocab_size: {tok.vocab_size:,}" in capsys.readouterr().out
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-1]))  # the last rank cut off
    assert main(["inspect", str(path)]) != 0
    err = capsys.readouterr().err
    assert "does not match its sidecar" in err and "fewer ranks than recorded" in err


def test_bad_sidecar(tmp_path):
    tok = exported("gpt2", "english")[0]
    path = tmp_path / "t.tiktoken"
    tok.save_tiktoken(path)
    _write(tmp_path / "t.tiktoken.json", "{not json")
    with pytest.raises(CorruptTokenizerError, match="sidecar .*not valid JSON"):
        Tokenizer.from_tiktoken(path)
    _write(tmp_path / "t.tiktoken.json", '{"format": "something else"}')
    with pytest.raises(CorruptTokenizerError, match="not a bytebpe tiktoken sidecar"):
        Tokenizer.from_tiktoken(path)


def test_bare_ranks_file_needs_a_pattern(tmp_path):
    tok = exported("cl100k", "english")[0]
    path = tmp_path / "bare.tiktoken"
    path.write_bytes(tiktoken_interop._ranks_bytes(tok.mergeable_ranks()))
    with pytest.raises(ValueError, match=r"bare \.tiktoken ranks file.*pass pattern="):
        Tokenizer.from_tiktoken(path)
    back = Tokenizer.from_tiktoken(path, pattern="cl100k")
    assert back.special_tokens == {} and back.mergeable_ranks() == tok.mergeable_ranks()
    assert back.encode(HAND[0]) == tok.encode(HAND[0])


def test_from_tiktoken_bad_arguments():
    with pytest.raises(TypeError, match="tiktoken.Encoding or the path"):
        Tokenizer.from_tiktoken(42)
    with pytest.raises(FileNotFoundError):
        Tokenizer.from_tiktoken("/nonexistent/x.tiktoken", pattern="gpt2")


def _hf_document(model, pre_tokenizer=None, decoder=None, normalizer=None):
    hf = tokenizers.Tokenizer(model)
    if pre_tokenizer is not None:
        hf.pre_tokenizer = pre_tokenizer
    if decoder is not None:
        hf.decoder = decoder
    if normalizer is not None:
        hf.normalizer = normalizer
    return hf


def test_import_refuses_what_is_not_byte_level_bpe():
    m, pt = tokenizers.models, tokenizers.pre_tokenizers
    wordpiece = _hf_document(m.WordPiece({"[UNK]": 0, "a": 1}, unk_token="[UNK]"), pt.Whitespace())
    with pytest.raises(ValueError, match="holds a WordPiece model.*only byte-level BPE"):
        Tokenizer.from_huggingface(wordpiece)
    unigram = _hf_document(m.Unigram([("a", -1.0), ("b", -2.0)]), pt.Metaspace())
    with pytest.raises(ValueError, match="holds a Unigram model"):
        Tokenizer.from_huggingface(unigram)
    sentencepiece_bpe = _hf_document(m.BPE({"a": 0, "\u2581": 1}, []), pt.Metaspace(),
                                     tokenizers.decoders.Metaspace())
    with pytest.raises(ValueError, match="BPE without byte-level mapping.*Metaspace"):
        Tokenizer.from_huggingface(sentencepiece_bpe)
    whitespace = _hf_document(m.BPE({"a": 0}, []), pt.Whitespace())
    with pytest.raises(ValueError, match="BPE without byte-level mapping.*Whitespace"):
        Tokenizer.from_huggingface(whitespace.to_str())


def test_import_refuses_unsupported_byte_level_setups():
    tok = exported("gpt2", "english")[0]
    good = hf_export.to_huggingface_json(tok._core)

    def refused(change, message):
        document = json.loads(json.dumps(good))
        change(document)
        with pytest.raises(ValueError, match=message):
            Tokenizer.from_huggingface(json.dumps(document))

    def prefix_space(d):
        d["pre_tokenizer"]["pretokenizers"][1]["add_prefix_space"] = True

    def normalizer(d):
        d["normalizer"] = {"type": "NFC"}

    def removed(d):
        d["pre_tokenizer"]["pretokenizers"][0]["behavior"] = "Removed"

    def vocab_not_byte_level(d):
        d["model"]["vocab"]["a b"] = 10**6

    def suffix(d):
        d["model"]["end_of_word_suffix"] = "</w>"

    def lstrip(d):
        d["added_tokens"][0]["lstrip"] = True

    refused(prefix_space, "add_prefix_space=true")
    refused(normalizer, "has a normalizer .NFC.")
    refused(removed, "behavior='Removed'")
    refused(vocab_not_byte_level, r"'a b' .*not byte-level mapped")
    refused(suffix, "end_of_word_suffix")
    refused(lstrip, "lstrip=true")


def test_import_refuses_merges_that_do_not_follow_rank_order():
    # "bc" merges first, and no merge joins "a" + "bc": Hugging Face leaves "abc" as
    # [a, bc], while rank order (bytebpe, tiktoken) makes the token "abc".
    vocab = {bytemap.bytes_to_unicode(bytes([b])): b for b in range(256)}
    vocab.update({"bc": 256, "ab": 257, "abc": 258})
    model = tokenizers.models.BPE(vocab, [("b", "c"), ("a", "b"), ("ab", "c")])
    hf = _hf_document(model, tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False),
                      tokenizers.decoders.ByteLevel())
    assert hf.encode("abc").tokens == ["a", "bc"]
    with pytest.raises(ValueError, match=r"cannot be imported exactly.*'abc'"):
        Tokenizer.from_huggingface(hf)


def test_import_bad_json(tmp_path):
    with pytest.raises(CorruptTokenizerError, match="not valid JSON"):
        Tokenizer.from_huggingface(_write(tmp_path / "tokenizer.json", "{oops"))
    with pytest.raises(CorruptTokenizerError, match="the top level: the field .model. is missing"):
        Tokenizer.from_huggingface('{"version": "1.0"}')
    with pytest.raises(TypeError, match="tokenizer.json path"):
        Tokenizer.from_huggingface(3.5)


def test_corrupt_error_is_a_value_error():
    assert issubclass(bytebpe.CorruptTokenizerError, ValueError)
    assert base64.b64decode(b"IQ==") == b"!"
