"""The names tiktoken and Hugging Face users type from habit (issue 14), checked against
tiktoken and tokenizers themselves on the same ranks; equality, hashing, loading by
content, save_pretrained for transformers."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from bytebpe import Encoding, Tokenizer, UnknownTokenError
from bytebpe.names import char_spans
from bytebpe.sample import sample_documents

tiktoken = pytest.importorskip("tiktoken")

DOCS = sample_documents(split="train")[:200]
HELDOUT = sample_documents(split="heldout")[:30]
SPECIALS = ["<|endoftext|>", "<|pad|>"]
TEXTS = [*HELDOUT[:10], "héllo wörld 🙂 日本語", "a<|endoftext|>b", ""]


@pytest.fixture(scope="module")
def tok():
    return Tokenizer.train_from_iterator(DOCS, 700, special_tokens=SPECIALS, progress=False)


@pytest.fixture(scope="module")
def enc(tok):
    return tok.to_tiktoken()


def test_tiktoken_properties_match_tiktoken(tok, enc):
    assert tok.n_vocab == enc.n_vocab == 700
    assert tok.max_token_value == enc.max_token_value == 699
    assert tok.eot_token == enc.eot_token == 698
    assert tok.special_tokens_set == enc.special_tokens_set == set(SPECIALS)
    for token in (0, 97, 300, 697, 698, 699):
        assert tok.is_special_token(token) == enc.is_special_token(token)
    assert [tok.is_special_token(t) for t in (697, 698, 699)] == [False, True, True]


def test_eot_token_missing_names_the_fix():
    plain = Tokenizer.train_from_iterator(DOCS[:20], 300, progress=False)
    with pytest.raises(KeyError, match=r"no '<\|endoftext\|>' special token.*special_tokens="):
        _ = plain.eot_token


def test_single_tokens_and_token_bytes_match_tiktoken(tok, enc):
    ranks = tok.mergeable_ranks()
    some = [data for data, rank in ranks.items() if rank in (0, 65, 255, 256, 400, 697)]
    for data in some:
        assert tok.encode_single_token(data) == enc.encode_single_token(data) == ranks[data]
        token = ranks[data]
        assert tok.decode_single_token_bytes(token) == enc.decode_single_token_bytes(token)
    assert tok.encode_single_token("<|pad|>") == enc.encode_single_token("<|pad|>") == 699
    assert tok.encode_single_token(" the") == enc.encode_single_token(" the")
    with pytest.raises(KeyError):
        tok.encode_single_token("not a single token at all")
    with pytest.raises(KeyError):
        enc.encode_single_token("not a single token at all")
    with pytest.raises(TypeError, match="encode_single_token takes str or bytes"):
        tok.encode_single_token(5)  # type: ignore[arg-type]
    for text in TEXTS:
        ids = enc.encode(text, allowed_special="all")
        assert tok.decode_tokens_bytes(ids) == enc.decode_tokens_bytes(ids)
    assert tok.token_byte_values() == enc.token_byte_values()
    ids = [i for text in TEXTS for i in enc.encode(text, allowed_special="all")]
    want = enc.decode_tokens_bytes(ids)
    assert tok.decode_tokens_bytes(ids) == tok.decode_tokens_bytes(np.array(ids)) == want
    # The same bytes object each time an id comes back (shared per id, as they are
    # immutable), and a bad id named with its own position.
    twice = tok.decode_tokens_bytes([ids[0], ids[0]])
    assert twice[0] is twice[1]
    for bad, error, message in (
        ([97, 700], UnknownTokenError, "unknown token id 700 at position 1"),
        ([97, -1], UnknownTokenError, "unknown token id -1 at position 1"),
        ([97, "a"], TypeError, "token at position 1 is str, expected int"),
    ):
        with pytest.raises(error, match=message):
            tok.decode_tokens_bytes(bad)
    batch = [enc.encode(text, allowed_special="all") for text in TEXTS]
    assert tok.decode_bytes_batch(batch) == enc.decode_bytes_batch(batch)
    arrays = [np.array(ids, dtype=np.uint16) for ids in batch]
    assert tok.decode_bytes_batch(arrays, num_threads=1) == enc.decode_bytes_batch(batch)


def test_decode_with_offsets_matches_tiktoken(tok, enc):
    for text in TEXTS:
        ids = enc.encode(text, allowed_special="all")
        assert tok.decode_with_offsets(ids) == enc.decode_with_offsets(ids)
    with pytest.raises(UnicodeDecodeError):
        tok.decode_with_offsets(tok.encode_bytes(b"ok\xff"))


def test_batches_and_numpy_match_tiktoken(tok, enc):
    plain = [t for t in TEXTS if "<|" not in t]
    assert tok.encode_ordinary_batch(TEXTS, num_threads=2) == enc.encode_ordinary_batch(TEXTS)
    assert tok.encode_batch(plain) == enc.encode_batch(plain)
    both = dict(allowed_special="all")
    assert tok.encode_batch(TEXTS, **both) == enc.encode_batch(TEXTS, **both)
    assert tok.encode_batch(TEXTS, disallowed_special=()) == enc.encode_batch(
        TEXTS, disallowed_special=()
    )
    arr = tok.encode_to_numpy("hello world<|pad|>", allowed_special={"<|pad|>"})
    want = enc.encode_to_numpy("hello world<|pad|>", allowed_special={"<|pad|>"})
    assert arr.dtype == want.dtype == np.uint32
    assert arr.tolist() == want.tolist()


@pytest.mark.parametrize(
    "rules",
    [{}, dict(allowed_special="all"), dict(disallowed_special=()),
     dict(allowed_special={"<|pad|>"}, disallowed_special=())],
)
def test_encode_to_numpy_gives_encode_s_ids_as_tiktoken_does(tok, enc, rules):
    # The ids come from the core as bytes, not through a list: the same ids, in the
    # same order, under every special-token rule, as tiktoken's array, and writable
    # (as the array built from a list was).
    texts = [t for t in TEXTS if "<|endoftext|>" not in t or rules]
    for text in [*texts, "<|pad|>x<|endoftext|>" if rules else "x", " ".join(HELDOUT) * 20]:
        arr = tok.encode_to_numpy(text, **rules)
        assert arr.dtype == np.uint32 and arr.ndim == 1 and arr.flags.writeable
        assert arr.tolist() == tok.encode(text, **rules) == enc.encode(text, **rules)
        assert arr.tolist() == enc.encode_to_numpy(text, **rules).tolist()
    assert tok.encode_to_numpy("").shape == (0,)
    with pytest.raises(ValueError, match="special token"):
        tok.encode_to_numpy("a<|endoftext|>b")


def test_encode_batch_raises_on_special_text_as_tiktoken(tok, enc):
    with pytest.raises(ValueError, match="texts\\[2\\] contains the special token '<\\|endoftext\\|>'"):
        tok.encode_batch(["a", "b", "x<|endoftext|>"])
    with pytest.raises(ValueError):
        enc.encode_batch(["a", "b", "x<|endoftext|>"])


def test_decode_replaces_by_default_and_counts_it(tok, enc):
    ids = tok.encode_bytes(b"ok\xff\xfe")
    before = tok.loss_report()["decode"]["bytes_replaced"]
    assert tok.decode(ids) == enc.decode(ids) == "ok\ufffd\ufffd"
    assert tok.loss_report()["decode"]["bytes_replaced"] == before + 2
    assert tok.decode_batch([ids]) == ["ok\ufffd\ufffd"]
    with pytest.raises(UnicodeDecodeError):
        tok.decode(ids, errors="strict")


def test_huggingface_names_match_tokenizers(tok):
    hf = tok.to_huggingface()
    assert len(tok) == tok.vocab_size == hf.get_vocab_size(with_added_tokens=True)
    assert tok.get_vocab_size() == hf.get_vocab_size() == 700
    assert tok.get_vocab_size(with_added_tokens=False) == hf.get_vocab_size(
        with_added_tokens=False
    ) == 698
    assert tok.get_vocab() == hf.get_vocab(with_added_tokens=True)
    for token in (0, 32, 97, 256, 500, 698, 699):
        assert tok.id_to_token(token) == hf.id_to_token(token)
        assert tok.token_to_id(hf.id_to_token(token)) == token
    assert tok.id_to_token(700) is None and hf.id_to_token(700) is None
    # A NumPy integer is an id wherever an int is, as in tiktoken and tokenizers; a
    # bool is not.
    for token in (np.int64(97), np.uint16(500), np.int32(698)):
        assert tok.id_to_token(token) == hf.id_to_token(int(token))
        assert tok.token_bytes(token) == tok.decode_single_token_bytes(token)
        assert tok.decode_single_token_bytes(token) == tok.token_bytes(int(token))
        assert tok.is_special_token(token) == (int(token) == 698)
    assert tok.id_to_token(True) is None
    with pytest.raises(TypeError, match="token at position 0 is bool, expected int"):
        tok.token_bytes(True)
    with pytest.raises(TypeError, match="token at position 0 is float64, expected int"):
        tok.token_bytes(np.float64(97))
    assert tok.token_to_id("no such token anywhere") is None
    assert tok.token_to_id("Ġthe") == hf.token_to_id("Ġthe") is not None


def test_encoding_with_tokens_and_offsets_matches_tokenizers(tok):
    hf = tok.to_huggingface()
    for text in [t for t in TEXTS if "<|" not in t]:
        mine = tok.encode_with_offsets(text)
        theirs = hf.encode(text, add_special_tokens=False)
        assert isinstance(mine, Encoding)
        assert mine.ids == theirs.ids == tok.encode(text)
        assert mine.tokens == theirs.tokens
        assert mine.offsets == theirs.offsets
        assert len(mine) == len(mine.ids)
    enc = tok.encode_with_offsets("hi<|pad|>", allowed_special="all")
    assert enc.tokens[-1] == "<|pad|>" and enc.offsets[-1] == (2, 9)


def test_char_spans_on_every_cut_of_multibyte_text():
    # Spans of pieces cut anywhere, mid-character too, against the character each byte
    # belongs to, counted the slow way.
    text = "aé世😀\ud800z"
    data = text.encode("utf-8", "surrogatepass")
    char_of = [i for i, ch in enumerate(text) for _ in ch.encode("utf-8", "surrogatepass")]
    for cut_a in range(len(data) + 1):
        for cut_b in range(cut_a, len(data) + 1):
            pieces = [data[:cut_a], data[cut_a:cut_b], data[cut_b:]]
            want, at = [], 0
            for p in pieces:
                if not p:
                    want.append((len(text),) * 2 if at >= len(data) else (char_of[at],) * 2)
                else:
                    want.append((char_of[at], char_of[at + len(p) - 1] + 1))
                at += len(p)
            assert char_spans(text, pieces) == want, (cut_a, cut_b)


def test_skip_special_tokens(tok):
    ids = tok.encode("<|endoftext|>hello<|pad|>", allowed_special="all")
    assert tok.decode(ids) == "<|endoftext|>hello<|pad|>"
    assert tok.decode(ids, skip_special_tokens=True) == "hello"
    assert tok.decode_batch([ids, ids], skip_special_tokens=True) == ["hello", "hello"]


def test_equality_means_encodes_the_same_and_hashable(tok, enc, tmp_path):
    back = Tokenizer.from_tiktoken(enc)
    assert back.merges() != tok.merges()  # the log (with counts) is lost on the way
    assert back == tok and hash(back) == hash(tok)
    assert pickle.loads(pickle.dumps(tok)) == tok
    tok.save_huggingface(tmp_path / "tokenizer.json")
    assert Tokenizer.from_huggingface(tmp_path / "tokenizer.json") == tok
    assert len({tok, back, pickle.loads(pickle.dumps(tok))}) == 1
    other = Tokenizer.train_from_iterator(DOCS, 699, special_tokens=SPECIALS, progress=False)
    assert other != tok
    other_pattern = Tokenizer.from_tiktoken(enc, pattern="gpt2")
    assert other_pattern != tok
    other_specials = Tokenizer.from_tiktoken(enc, special_tokens={"<|endoftext|>": 698})
    assert other_specials != tok


def test_load_recognises_every_format_by_content(tok, tmp_path):
    tok.save(tmp_path / "a.data")
    tok.save_huggingface(tmp_path / "b.data")
    tok.save_tiktoken(tmp_path / "c.data")
    bare = tmp_path / "bare.data"
    bare.write_bytes((tmp_path / "c.data").read_bytes())
    for name in ("a.data", "b.data", "c.data"):
        assert Tokenizer.load(tmp_path / name) == tok, name
    with pytest.raises(ValueError, match="pass pattern="):
        Tokenizer.load(bare)
    loaded = Tokenizer.load(bare, pattern="cl100k")
    assert loaded.mergeable_ranks() == tok.mergeable_ranks() and loaded.special_tokens == {}
    tok.save_pretrained(tmp_path / "pretrained", eos_token="<|endoftext|>")
    assert Tokenizer.load(tmp_path / "pretrained") == tok
    # Hugging Face's name for it, on the file Hugging Face's own `from_file` reads.
    assert Tokenizer.from_file(tmp_path / "pretrained" / "tokenizer.json") == tok
    tokenizers = pytest.importorskip("tokenizers")
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "pretrained" / "tokenizer.json"))
    assert hf.encode("hello world").ids == tok.encode("hello world")
    store = tmp_path / "run.sqlite"
    stored = Tokenizer.train_from_iterator(DOCS, 700, special_tokens=SPECIALS, progress=False,
                                           store=store)
    assert Tokenizer.load(store) == stored == tok
    with pytest.raises(ValueError, match="pattern= is only for .tiktoken"):
        Tokenizer.load(tmp_path / "a.data", pattern="gpt2")
    with pytest.raises(ValueError, match="vocab_size= takes a prefix"):
        Tokenizer.load(tmp_path / "b.data", vocab_size=300)
    assert Tokenizer.load(tmp_path / "a.data", vocab_size=300).vocab_size == 300
    (tmp_path / "junk").write_bytes(b"\x89PNG\r\n")
    with pytest.raises(ValueError, match="'.*junk' is not a tokenizer bytebpe reads"):
        Tokenizer.load(tmp_path / "junk")
    with pytest.raises(FileNotFoundError, match="missing: no such file"):
        Tokenizer.load(tmp_path / "missing")


def test_save_pretrained_loads_in_transformers_with_padding(tok, tmp_path, monkeypatch):
    import transformers  # a test dependency: missing, the test fails rather than skips
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    paths = tok.save_pretrained(tmp_path / "out", eos_token="<|endoftext|>",
                                pad_token="<|pad|>", bos_token="<|endoftext|>")
    assert sorted(p.rsplit("/", 1)[1] for p in paths) == [
        "special_tokens_map.json", "tokenizer.json", "tokenizer_config.json"]
    hf = transformers.AutoTokenizer.from_pretrained(str(tmp_path / "out"))
    # Sizes: len() counts special tokens (as bytebpe's vocab_size does); Hugging Face's
    # vocab_size is the BPE model without its added (special) tokens.
    assert len(hf) == tok.vocab_size == 700
    assert hf.vocab_size == tok.vocab_size - len(tok.special_tokens)
    assert (hf.pad_token, hf.pad_token_id) == ("<|pad|>", 699)
    assert (hf.eos_token_id, hf.bos_token_id) == (698, 698)
    texts = [t for t in HELDOUT[:8] if t]
    batch = hf(texts, padding=True)
    longest = max(len(tok.encode(t)) for t in texts)
    for text, ids, mask in zip(texts, batch["input_ids"], batch["attention_mask"]):
        mine = tok.encode(text)
        assert ids[: len(mine)] == mine
        assert ids[len(mine):] == [699] * (longest - len(mine))
        assert mask == [1] * len(mine) + [0] * (longest - len(mine))
    assert hf.decode(tok.encode(texts[0])) == texts[0]
    with pytest.raises(ValueError, match="pad_token='<pad>' is not a special token"):
        tok.save_pretrained(tmp_path / "bad", pad_token="<pad>")


def test_every_public_name_has_a_docstring():
    import inspect

    import bytebpe

    missing = [n for n in bytebpe.__all__ if n != "__version__"
               and not (getattr(bytebpe, n).__doc__ or "").strip()]
    for cls in (bytebpe.Tokenizer, bytebpe.StreamingDecoder, bytebpe.RunStore):
        for name, member in inspect.getmembers(cls):
            if not name.startswith("_") and not (getattr(member, "__doc__", "") or "").strip():
                missing.append(f"{cls.__name__}.{name}")
    assert missing == []


def test_train_phases_takes_explicit_keywords():
    import inspect

    from bytebpe import Phase

    params = inspect.signature(Tokenizer.train_phases).parameters
    for name in ("pattern", "special_tokens", "min_frequency", "num_threads", "base",
                 "seed_merges", "memory_limit", "progress", "store", "buffer_size"):
        assert params[name].kind is inspect.Parameter.KEYWORD_ONLY, name
    assert not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    with pytest.raises(TypeError, match="unexpected keyword argument 'vocab_size'"):
        Tokenizer.train_phases([Phase(DOCS[:10], 5)], vocab_size=300)  # type: ignore[call-arg]
    tok = Tokenizer.train_phases([Phase(DOCS[:50], 20)], special_tokens=["<|endoftext|>"],
                                 pattern="gpt2", progress=False)
    assert tok.vocab_size == 277 and tok.pattern_name == "gpt2"
