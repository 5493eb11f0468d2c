"""Every bad input gets a clear error naming what and where, and nothing partial."""

from __future__ import annotations

import bytebpe
import pytest
from bytebpe import PatternError, Tokenizer, TrainingWarning


def train(data, vocab_size=300, **kw):
    return Tokenizer.train_from_iterator(data, vocab_size, progress=False, **kw)


@pytest.mark.parametrize(
    ("data", "where", "kind"),
    [
        (["ok", 42], "item 1", "int"),
        (["ok", None, "x"], "item 1", "NoneType"),
        ([["a", "b"], ["c", 3.5]], "item 1[1]", "float"),
        ([{"text": "a"}, {"text": 7}], "item 1['text']", "int"),
        ([object()], "item 0", "object"),
    ],
)
def test_bad_item_names_index_and_type(data, where, kind):
    with pytest.raises(TypeError, match=rf"{where.replace('[', '.').replace(']', '.')} .*{kind}"):
        train(data)


def test_row_without_text_column_names_columns():
    with pytest.raises(KeyError, match=r"item 1 .*'content'.*text_column"):
        train([{"text": "a"}, {"content": "b"}])


def test_single_string_is_not_a_corpus():
    with pytest.raises(TypeError, match="single str"):
        train("just one string")


def test_not_iterable():
    with pytest.raises(TypeError, match="must be iterable"):
        train(12)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"vocab_size": 255}, ValueError, r"vocab_size=255 is too small.*at least 256"),
        (
            {"vocab_size": 257, "special_tokens": ["<a>", "<b>"]},
            ValueError,
            r"at least 258 .*2 special tokens",
        ),
        ({"vocab_size": 300, "special_tokens": ["<a>", "<a>"]}, ValueError, r"'<a>' is given more than once"),
        ({"vocab_size": 300, "special_tokens": ["<a>", ""]}, ValueError, r"special_tokens\[1\] is empty"),
        ({"vocab_size": 300, "special_tokens": "<a>"}, TypeError, r"list of str"),
        ({"vocab_size": 300, "special_tokens": [5]}, TypeError, r"special_tokens\[0\] is int"),
        ({"vocab_size": "300"}, TypeError, r"vocab_size must be an int"),
        ({"vocab_size": 300, "min_frequency": 0}, ValueError, r"min_frequency=0"),
        ({"vocab_size": 300, "num_threads": 0}, ValueError, r"num_threads=0"),
        ({"vocab_size": 300, "buffer_size": 0}, ValueError, r"buffer_size=0"),
        ({"vocab_size": 300, "surrogates": "replace"}, ValueError, r"surrogates='replace'"),
    ],
)
def test_bad_settings(kwargs, error, message):
    consumed = []

    def data():
        consumed.append(True)
        yield "some text"

    with pytest.raises(error, match=message):
        Tokenizer.train_from_iterator(data(), progress=False, **kwargs)
    assert not consumed, "settings are checked before any input is read"


def test_invalid_regex_reports_engine_message_and_pattern():
    with pytest.raises(PatternError, match=r"invalid pattern \"\(\?<bad\".*") as info:
        train(["text"], pattern="(?<bad")
    assert isinstance(info.value, ValueError)


def test_lone_surrogate_is_refused_by_default():
    with pytest.raises(ValueError, match=r"document 1 contains a lone surrogate at character 3"):
        train(["fine", "abc\ud800def"])


def test_lone_surrogate_opt_in_is_reversible():
    text = "abc\ud800def \udfff"
    tok = train([text] * 5, vocab_size=260, surrogates="surrogatepass")
    data = text.encode("utf-8", "surrogatepass")
    assert tok.decode_bytes(tok.encode_bytes(data)).decode("utf-8", "surrogatepass") == text
    with pytest.raises(ValueError, match="lone surrogate at character 3"):
        tok.encode(text)


def test_empty_iterable_gives_byte_tokenizer_and_warning():
    with pytest.warns(TrainingWarning, match="empty"):
        tok = train([], special_tokens=["<eos>"])
    assert tok.vocab_size == 257
    assert tok.special_tokens == {"<eos>": 256}
    assert tok.decode(tok.encode("hé")) == "hé"


def test_stopping_early_says_so():
    with pytest.warns(TrainingWarning, match=r"stopped at vocab_size=257, short of the requested 1000"):
        tok = train(["ab ab"], vocab_size=1000)
    assert tok.vocab_size == 257


def test_train_from_counts_bad_counts():
    with pytest.raises(ValueError, match=r"word 'a' is -1"):
        Tokenizer.train_from_counts({"a": -1}, 300, progress=False)
    with pytest.raises(ValueError, match=r"2\*\*64"):
        Tokenizer.train_from_counts({"ab": 2**64}, 300, progress=False)
    with pytest.raises(TypeError, match=r"word 'ab' is float"):
        Tokenizer.train_from_counts({"ab": 1.5}, 300, progress=False)
    with pytest.raises(TypeError, match=r"word 5 is int"):
        Tokenizer.train_from_counts({5: 1}, 300, progress=False)
    with pytest.raises(TypeError, match="mapping"):
        Tokenizer.train_from_counts(["ab"], 300, progress=False)


def test_pair_count_overflow_is_an_error():
    with pytest.raises(OverflowError, match=r"pair \(a, b\) exceeds 2\*\*64-1"):
        Tokenizer.train_from_counts({"ab": 2**64 - 1, "abc": 1}, 300, progress=False)


@pytest.fixture(scope="module")
def tok():
    return train(["hello world"] * 20, vocab_size=262, special_tokens=["<|eot|>"])


def test_encode_rejects_non_str(tok):
    with pytest.raises(TypeError, match="text must be str, not bytes"):
        tok.encode(b"bytes")
    with pytest.raises(TypeError, match="encode_bytes takes bytes, not str"):
        tok.encode_bytes("text")
    with pytest.raises(TypeError, match=r"texts\[1\] must be str, not int"):
        tok.encode_batch(["a", 1])


@pytest.mark.parametrize(
    "encode",
    [
        lambda tok, text: tok.encode_ordinary(text),
        lambda tok, text: tok.encode(text),
        lambda tok, text: tok.encode(text, allowed_special="all"),
        lambda tok, text: tok.encode_to_numpy(text),
    ],
)
def test_single_calls_name_a_lone_surrogate_and_refuse_non_str(tok, encode):
    # The core refuses the surrogate while reading the text; the message is check_text's,
    # by character position, after non-ASCII text before it (a position in bytes would
    # say 12 here, not 9).
    for text, at in [("\ud800", 0), ("héllo wö \udc80 rld", 9), ("é" * 5000 + "\udfff", 5000)]:
        with pytest.raises(ValueError, match=rf"^text contains a lone surrogate at character {at},"):
            encode(tok, text)
    for bad in (b"bytes", None, 3, ["a"]):
        with pytest.raises(TypeError, match=rf"text must be str, not {type(bad).__name__}"):
            encode(tok, bad)
    assert list(encode(tok, "héllo wörld")) == tok.encode_ordinary("héllo wörld") != []


def test_disallowed_special_says_which_argument(tok):
    with pytest.raises(ValueError, match=r"allowed_special=\{'<\|eot\|>'\}.*disallowed_special=\(\)"):
        tok.encode("a <|eot|> b")
    assert tok.encode("a <|eot|> b", allowed_special="all").count(tok.special_tokens["<|eot|>"]) == 1
    assert tok.special_tokens["<|eot|>"] not in tok.encode("a <|eot|> b", disallowed_special=())


def test_many_disallowed_specials_name_the_first_in_the_text():
    # Hundreds of special tokens (as Llama 3 reserves) are found in one pass; the error
    # names the token that comes first in the text, the longest where two start at once.
    from bytebpe.special_policy import first_in

    reserved = [f"<|reserved_{i}|>" for i in range(256)]
    many = train(["hello world"] * 20, vocab_size=256 + 2 + 256,
                 special_tokens=["<|eot|>", "<|eot|>x", *reserved])
    text = "a <|reserved_200|> b <|eot|>x c <|reserved_3|>"
    with pytest.raises(ValueError, match=r"contains the special token '<\|reserved_200\|>'"):
        many.encode(text)
    with pytest.raises(ValueError, match=r"texts\[1\] contains the special token '<\|eot\|>x'"):
        many.encode_batch(["fine", "b <|eot|>x <|eot|> <|reserved_3|>"])
    # None of these is in the text: it is encoded as ordinary text.
    got = many.encode(text, disallowed_special=set(reserved[100:200]))
    assert got == many.encode(text, disallowed_special=()) == many.encode_ordinary(text)
    tokens = frozenset(["ab", "abc", "b", "zz"])
    assert [first_in(t, tokens) for t in ("xabcz", "xab", "xbab", "zzab", "none", "")] == [
        "abc", "ab", "b", "zz", None, None]
    assert first_in("a.b", frozenset(["."])) == "." and first_in("ab", frozenset(["."])) is None
    assert first_in("a.b", frozenset(["a.", "x"])) == "a." and first_in("ab", frozenset(["a.", "x"])) is None


@pytest.mark.parametrize(
    ("kw", "error", "message"),
    [
        (dict(allowed_special="<|eot|>"), ValueError, r"allowed_special='<\|eot\|>'.*\{'<\|eot\|>'\}"),
        (dict(allowed_special="ALL"), ValueError, r"allowed_special='ALL': pass 'all'"),
        (dict(disallowed_special="none"), ValueError, r"disallowed_special='none'.*=\(\) for none"),
        (dict(allowed_special=b"<|eot|>"), TypeError, "allowed_special must be 'all' or a collection of str"),
        (dict(allowed_special=5), TypeError, "not int"),
        (dict(disallowed_special=iter(["<|eot|>"])), TypeError, "not list_iterator"),
        (dict(allowed_special={b"<|eot|>"}), TypeError, "special tokens as str, not bytes"),
    ],
)
def test_special_arguments_are_all_or_a_collection_of_str(tok, kw, error, message):
    # A str is never a set of its characters (tiktoken's rule); every encode path checks.
    for encode in (tok.encode, lambda t, **k: tok.encode_batch([t], **k)):
        with pytest.raises(error, match=message):
            encode("a <|eot|> b", **kw)
    eot = tok.special_tokens["<|eot|>"]
    for allowed in ({"<|eot|>"}, ["<|eot|>"], ("<|eot|>",), frozenset({"<|eot|>"}), "all"):
        assert eot in tok.encode("a <|eot|> b", allowed_special=allowed)
    for disallowed in ((), [], set(), frozenset()):
        assert eot not in tok.encode("a <|eot|> b", disallowed_special=disallowed)


def test_load_blames_a_too_small_vocab_size_not_the_file(tok, tmp_path):
    path = tmp_path / "tok.json"
    tok.save(path)
    with pytest.raises(ValueError, match=r"vocab_size=256 is too small: it must be at least 257") as e:
        Tokenizer.load(path, vocab_size=256)
    assert not isinstance(e.value, bytebpe.CorruptTokenizerError)
    assert "malformed" not in str(e.value)
    assert Tokenizer.load(path, vocab_size=257).vocab_size == 257


def test_decode_bad_ids_name_position(tok):
    with pytest.raises(bytebpe.UnknownTokenError, match=r"unknown token id 99999 at position 2"):
        tok.decode([104, 105, 99999])
    with pytest.raises(bytebpe.UnknownTokenError, match=r"unknown token id -1 at position 1"):
        tok.decode([104, -1])
    with pytest.raises(TypeError, match=r"position 1 is str"):
        tok.decode([104, "x"])
    with pytest.raises(ValueError, match="errors='bogus'"):
        tok.decode([104], errors="bogus")


def test_decode_invalid_utf8_strict_and_replace(tok):
    ids = tok.encode_bytes(b"ok\xff")
    with pytest.raises(UnicodeDecodeError):
        tok.decode(ids, errors="strict")
    assert tok.decode(ids, errors="replace") == "ok\ufffd"
    assert tok.decode(ids, errors="ignore") == "ok"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "is empty"),
        (b"\x00\x01garbage", "not a tokenizer bytebpe reads"),
        (b'{"hello": 1}', "not a bytebpe tokenizer"),
        (b"[1, 2]", "not a bytebpe tokenizer"),
    ],
)
def test_load_foreign_files(tmp_path, content, message):
    path = tmp_path / "t.json"
    path.write_bytes(content)
    with pytest.raises(bytebpe.CorruptTokenizerError, match=message):
        Tokenizer.load(path)


def test_load_truncated_and_edited_files(tok, tmp_path):
    path = tmp_path / "t.json"
    tok.save(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(bytebpe.CorruptTokenizerError, match="not valid JSON"):
        Tokenizer.load(path)
    path.write_bytes(data.replace(b'"version":1', b'"version":7'))
    with pytest.raises(bytebpe.CorruptTokenizerError, match="checksum"):
        Tokenizer.load(path)


def test_load_inconsistent_merges(tok, tmp_path):
    from bytebpe import file_format

    state = file_format.to_state(tok._core)
    state["merges"][0][2] = 999
    # No longer a log that made every token from 256 up: checked against the tokens.
    with pytest.raises(bytebpe.CorruptTokenizerError,
                       match=r"merge 0 \(\d+, \d+\) -> 999 does not join two tokens into the third"):
        file_format.from_state(state, "test")
    state = file_format.to_state(tok._core)
    state["merges"][0][0] = 33
    with pytest.raises(bytebpe.CorruptTokenizerError, match="tokens differ from what its merges make"):
        file_format.from_state(state, "test")


def test_load_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        Tokenizer.load(tmp_path / "nope.json")


@pytest.mark.parametrize("special_id", [2**32 - 1, 2**31, 2**31 - 1, 50_000_000, 256 + 1 + 2**16])
@pytest.mark.parametrize("how", ["from_ranks", "from_merges", "from_tokens"])
def test_special_id_far_beyond_vocab_is_corrupt(special_id, how):
    core = bytebpe._bytebpe.CoreTokenizer
    specials = [("<|s|>", special_id)]
    with pytest.raises(bytebpe.CorruptTokenizerError, match=str(special_id)):
        if how == "from_ranks":
            core.from_ranks("gpt2", [(bytes([b]), b) for b in range(256)], specials)
        elif how == "from_merges":
            core.from_merges("gpt2", [], specials)
        else:
            core.from_tokens("gpt2", [bytes([b]) for b in range(256)], [], specials)


def test_special_id_with_a_small_gap_encodes():
    core = bytebpe._bytebpe.CoreTokenizer.from_ranks(
        "gpt2", [(bytes([b]), b) for b in range(256)], [("<|s|>", 276)]
    )
    assert core.encode("a<|s|>", {"<|s|>"}) == [97, 276]


def test_long_pattern_special_token_and_seed_are_refused_before_building():
    with pytest.raises(PatternError, match=r"20000000 bytes long; at most 65536"):
        train(["a b"], pattern="a" * 20_000_000)
    with pytest.raises(ValueError, match=r"100000000 bytes long; at most 4096"):
        train(["a b"], special_tokens=["x" * 100_000_000])
    core = bytebpe._bytebpe.CoreTokenizer
    with pytest.raises(ValueError, match=r"at most 4096"):
        core.from_merges("gpt2", [], [("x" * 10_000_000, 256)])
    with pytest.raises(ValueError, match=r"seed_merges\[0\] is 100000 bytes long; .*at most 1024"):
        train(["a b"], seed_merges=["a" * 100_000])


def test_calls_with_the_default_special_rules_match_explicit_ones(tok):
    # The defaults' rules are worked out once per tokenizer; any other arguments, even
    # equal ones, are worked out per call: both give tiktoken's rules.
    text = "hi <|eot|> there"
    eot = tok.special_tokens["<|eot|>"]
    for kwargs in ({}, {"allowed_special": set()}, {"disallowed_special": ["<|eot|>"]}):
        with pytest.raises(ValueError, match=r"the text contains the special token '<\|eot\|>'"):
            tok.encode(text, **kwargs)
        with pytest.raises(ValueError, match=r"texts\[1\] contains the special token"):
            tok.encode_batch(["fine", text], **kwargs)
    assert tok.encode(text, disallowed_special=()) == tok.encode_ordinary(text)
    assert eot in tok.encode(text, allowed_special="all")
    assert eot not in tok.encode_ordinary(text)
    with pytest.raises(ValueError, match=r"disallowed_special='ALL'"):
        tok.encode(text, disallowed_special="ALL")
