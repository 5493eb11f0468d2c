"""The loss ledger: exact counts on inputs with known damage, zeros on clean ones."""

from __future__ import annotations

import warnings

import pytest
from bytebpe import Tokenizer
from bytebpe.ledger import format_report, is_clean
from bytebpe.sample import sample_documents


def train(data, vocab_size=300, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tiny corpora may stop short of vocab_size
        return Tokenizer.train_from_iterator(data, vocab_size, progress=False, **kw)


def test_clean_corpus_shows_zeros():
    docs = sample_documents()[:100]
    report = train(docs).loss_report()
    assert is_clean(report)
    t = report["training"]
    assert t["documents"] == 100
    assert t["bytes"] == sum(len(d.encode()) for d in docs)
    assert sum(t["invalid_utf8_bytes"].values()) == 0
    assert t["invalid_utf8_examples"] == []
    assert "clean: yes" in format_report(report)


def test_invalid_bytes_by_kind_with_offsets():
    docs = [
        b"fine text",
        b"stray \x80\x81 and never \xc0\xff",  # 2 stray continuation, 2 never valid
        b"cut \xe2\x82",  # truncated: 2 bytes at offset 4
        b"over \xe0\x80\x80 big \xf4\x90\x80\x80",  # overlong 3 at 5; too large 4 at 13
        b"ok",
    ]
    tok = train(docs * 3)  # the same damage three times
    t = tok.loss_report()["training"]
    assert t["invalid_utf8_bytes"] == {
        "stray_continuation": 6, "never_valid": 6, "truncated": 6,
        "overlong": 9, "surrogate": 0, "too_large": 12,
    }
    examples = {(e["kind"], e["document"], e["offset"]) for e in t["invalid_utf8_examples"]}
    assert ("stray_continuation", 1, 6) in examples
    assert ("never_valid", 1, 20) in examples
    assert ("truncated", 2, 4) in examples
    assert ("overlong", 3, 5) in examples
    assert ("too_large", 3, 13) in examples
    for doc in docs:
        assert tok.decode_bytes(tok.encode_bytes(doc)) == doc  # kept byte by byte


def test_examples_are_the_first_five_whatever_the_threads():
    docs = [b"x\xff"] * 50
    a = train(docs, num_threads=1, buffer_size=7).loss_report()["training"]
    b = train(docs, num_threads=2, buffer_size=50).loss_report()["training"]
    assert a == b
    assert [e["document"] for e in a["invalid_utf8_examples"]] == [0, 1, 2, 3, 4]
    assert a["invalid_utf8_bytes"]["never_valid"] == 50


def test_lone_surrogates_are_counted():
    docs = ["a\ud800b", "\udfff\udc00 c", "clean"]
    t = train(docs, surrogates="surrogatepass").loss_report()["training"]
    assert t["lone_surrogates"] == 3
    assert t["invalid_utf8_bytes"]["surrogate"] == 9


def test_rejected_items_by_type():
    docs = ["a text", None, 3, [b"ok", 4.5], {"text": "row"}, {"other": 1}]
    t = train(docs, on_bad_item="skip").loss_report()["training"]
    assert t["rejected_items"] == {"NoneType": 1, "int": 1, "float": 1, "row without 'text'": 1}
    assert t["documents"] == 3


def test_pieces_cut_by_max_token_length():
    tok = train(["abcdefghij " * 20, "short " * 20], max_token_length=4)
    t = tok.loss_report()["training"]
    assert t["pieces_cut"] == 40  # "abcdefghij" and " abcdefghij" pieces, 20 of each
    assert max(len(b) for b in tok.mergeable_ranks()) <= 4


def test_decode_counts_replaced_ignored_and_unknown():
    tok = train(["hello world"] * 10)
    tok.decode(tok.encode_bytes(b"ok\xff\xfe"), errors="replace")
    tok.decode(tok.encode_bytes(b"\xe2\x82"), errors="ignore")
    with pytest.raises(ValueError):
        tok.decode([1, 10**6])
    dec = tok.decoder(errors="replace")
    dec.feed(tok.encode_bytes(b"a\xffb"))
    dec.feed([0xE2])
    dec.flush()
    assert tok.loss_report()["decode"] == {
        "bytes_replaced": 4, "bytes_ignored": 2, "unknown_ids": 1,
    }


def test_ledger_survives_save_load_and_pickle(tmp_path):
    import pickle

    tok = train([b"a\xffb"] * 5)
    path = tmp_path / "t.json"
    tok.save(path)
    for other in (Tokenizer.load(path), pickle.loads(pickle.dumps(tok))):
        assert other.loss_report()["training"] == tok.loss_report()["training"]


def test_unmatched_bytes_of_a_custom_pattern():
    docs = ["ab--cd!!", "xyz", "  "]
    tok = train(docs * 4, pattern=r"[a-z]+")
    t = tok.loss_report()["training"]
    assert t["unmatched_bytes"] == 4 * (4 + 2)
    for doc in docs:
        assert tok.decode(tok.encode(doc)) == doc  # the gaps are still encoded
    assert train(docs).loss_report()["training"]["unmatched_bytes"] == 0  # built-ins cover all
