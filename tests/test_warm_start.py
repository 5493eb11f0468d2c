"""Warm start (base=), seed merges and multi-phase training: ids never move, the new
merges are the oracle's, and every export keeps the ids."""

from __future__ import annotations

import base64
import functools
import os
import pickle
import textwrap

import pytest
import reference as R
from bytebpe import SEED_PRESETS, Phase, StoreError, Tokenizer, TrainingWarning, store_read
from bytebpe._bytebpe import WordCounter
from bytebpe.sample import sample_documents
from ctrl_c import interrupt_child

SPECIAL = "<|end|>"
TEXT = "def f(x):\n    return x ** 2  # 12345 <|end|> naïve 😀 \r\n\tdone"


@functools.cache
def corpus(kind: str, n: int = 150) -> tuple[str, ...]:
    return tuple(sample_documents(kind=kind))[:n]


def train(docs, vocab_size, **kw) -> Tokenizer:
    return Tokenizer.train_from_iterator(list(docs), vocab_size, progress=False, **kw)


def merged_tokens(tok: Tokenizer) -> list[bytes]:
    """Merged token bytes in id order (special-token ids left out)."""
    ranks = sorted(tok.mergeable_ranks().items(), key=lambda kv: kv[1])
    return [token for token, i in ranks if i >= 256]


def test_extending_continues_exactly_where_a_longer_run_goes() -> None:
    docs = corpus("code")
    short = train(docs, 600)
    extended = train(docs, 900, base=short)
    assert extended.merges() == train(docs, 900).merges()


def test_extending_keeps_every_id_including_special_ones() -> None:
    docs = corpus("english")
    short = train(docs, 600, special_tokens=[SPECIAL])
    assert short.special_tokens == {SPECIAL: 599}
    extended = train(docs, 901, base=short, special_tokens=["<|pad|>"])
    assert extended.vocab_size == 901
    assert extended.special_tokens == {SPECIAL: 599, "<|pad|>": 900}
    for i in range(599):
        assert extended.token_bytes(i) == short.token_bytes(i)
    # The same tokens, in order, as one longer run; new ids go around id 599.
    assert merged_tokens(extended) == merged_tokens(train(docs, 899))[: 899 - 256]
    ids = extended.encode(TEXT, allowed_special="all")
    assert 599 in ids and extended.decode(ids) == TEXT


def test_new_merges_match_the_oracle_on_other_data() -> None:
    base = train(corpus("english"), 500, special_tokens=[SPECIAL])
    docs = corpus("code", 60)
    extended = train(docs, 700, base=base, min_frequency=2)
    words = R.count_words(docs, "cl100k", [SPECIAL])
    start = [base.token_bytes(i) if i != 499 else b"" for i in range(500)]
    expected = R.train_counts(
        words, 700, special_tokens=[SPECIAL], min_frequency=2, start=start, reserved=[499]
    )
    new = extended.merges()[len(base.merges()) :]
    assert [tuple(m) for m in new] == expected
    ranks = extended.mergeable_ranks()
    for doc in docs[:20]:
        assert extended.encode_ordinary(doc) == R.encode_ordinary(ranks, "cl100k", doc)


def test_an_extended_tokenizer_saves_loads_and_exports_with_identical_ids(tmp_path) -> None:
    docs = corpus("english")
    extended = train(docs, 801, base=train(docs, 600, special_tokens=[SPECIAL]),
                     special_tokens=["<|pad|>"])
    ids = extended.encode(TEXT, allowed_special="all")
    path = tmp_path / "tok.json"
    extended.save(path)
    loaded = Tokenizer.load(path)
    assert loaded.merges() == extended.merges() and loaded.special_tokens == extended.special_tokens
    assert extended.to_tiktoken().encode(TEXT, allowed_special="all") == ids
    assert extended.to_huggingface().encode(TEXT).ids == ids
    extended.save_tiktoken(tmp_path / "ranks.tiktoken")
    imported = Tokenizer.from_tiktoken(tmp_path / "ranks.tiktoken")
    assert imported.encode(TEXT, allowed_special="all") == ids
    with pytest.raises(ValueError, match="cannot be cut"):
        Tokenizer.load(path, vocab_size=700)


@pytest.mark.parametrize("source", ["tiktoken", "huggingface"])
def test_extending_an_imported_tokenizer(tmp_path, source) -> None:
    docs = corpus("code")
    trained = train(docs, 700, special_tokens=[SPECIAL])
    if source == "tiktoken":
        trained.save_tiktoken(tmp_path / "ranks.tiktoken")
        base = Tokenizer.from_tiktoken(tmp_path / "ranks.tiktoken")
    else:
        trained.save_huggingface(tmp_path / "tokenizer.json")
        base = Tokenizer.from_huggingface(tmp_path / "tokenizer.json")
    assert base.merges() == []  # an imported vocabulary has no merge log
    extended = train(docs, 1000, base=base)
    direct = train(docs, 1000, base=trained)
    assert merged_tokens(extended) == merged_tokens(direct)
    assert extended.encode(TEXT, allowed_special="all") == direct.encode(TEXT, allowed_special="all")
    extended.save(tmp_path / "tok.json")
    assert Tokenizer.load(tmp_path / "tok.json").encode_ordinary(TEXT) == extended.encode_ordinary(TEXT)
    assert extended.to_tiktoken().encode_ordinary(TEXT) == extended.encode_ordinary(TEXT)


def test_a_warm_start_resumes_from_its_store(tmp_path, capsys) -> None:
    from bytebpe.cli import main

    docs = corpus("english")
    base = train(docs, 600, special_tokens=[SPECIAL])
    store = tmp_path / "run.sqlite"
    first = train(docs, 700, base=base, store=store)
    # A larger vocab_size continues the stored run; loading the store gives the same.
    more = train(docs, 800, base=base, store=store)
    assert more.merges()[: len(first.merges())] == first.merges()
    assert more.merges() == train(docs, 800, base=base).merges()
    loaded = Tokenizer.load(store)
    assert loaded.merges() == more.merges() and loaded.special_tokens == more.special_tokens
    assert Tokenizer.load(store, vocab_size=650).merges() == more.merges()[: 650 - 256 - 1]
    assert main(["inspect", str(store)]) == 0
    assert "warm start: extends a tokenizer of 600 tokens" in capsys.readouterr().out
    other = train(docs, 601, special_tokens=[SPECIAL])
    with pytest.raises(StoreError, match="start"):
        train(docs, 800, base=other, store=store)


def test_warm_start_errors_are_clear() -> None:
    docs = corpus("english", 30)
    base = train(docs, 400)
    with pytest.raises(TypeError, match="base must be a bytebpe Tokenizer"):
        train(docs, 500, base="tokenizer.json")
    with pytest.raises(ValueError, match="differs from the pattern"):
        train(docs, 500, base=base, pattern="gpt2")
    with pytest.raises(ValueError, match="smaller than the tokenizer to extend"):
        train(docs, 399, base=base)
    with pytest.warns(UserWarning, match="no tokens were added"):
        train([], 500, base=base)
    assert train(docs, 400, base=base).merges() == base.merges()  # nothing to add


def test_seed_presets_and_lists_become_tokens_first() -> None:
    docs = corpus("code")
    tok = train(docs, 2000, seed_merges="digits,whitespace")
    n_seeded = sum(1 for m in tok.merges() if m.count == 0)
    assert n_seeded == len(SEED_PRESETS["digits"]) + len(SEED_PRESETS["whitespace"])
    assert all(m.count == 0 for m in tok.merges()[:n_seeded])
    assert all(m.count > 0 for m in tok.merges()[n_seeded:])
    ranks = tok.mergeable_ranks()
    for seed in SEED_PRESETS["digits"] + SEED_PRESETS["whitespace"]:
        assert seed.encode() in ranks, seed
    assert [tok.token_bytes(t) for t in tok.encode("x = 1234567")] == [
        b"x", b" =", b" ", b"123", b"456", b"7"
    ]
    mine = train(docs, 600, seed_merges=["::", "->", " =>"])
    assert all(s in mine.mergeable_ranks() for s in (b"::", b"->", b" =>"))
    # Training without seeds on the same data, then seeds: different first tokens.
    assert mine.merges()[0].count == 0 and train(docs, 600).merges()[0].count > 0


def test_seed_merges_errors_are_clear() -> None:
    docs = corpus("english", 20)
    with pytest.raises(ValueError, match="names no preset"):
        train(docs, 500, seed_merges="digitz")
    with pytest.raises(ValueError, match="split by the pattern"):
        train(docs, 500, seed_merges=["1234"])
    with pytest.raises(ValueError, match="shorter than two bytes"):
        train(docs, 500, seed_merges=["x"])
    with pytest.raises(TypeError, match=r"seed_merges\[1\] is int"):
        train(docs, 500, seed_merges=["ab", 3])
    with pytest.raises(TypeError, match="preset name or a list"):
        train(docs, 500, seed_merges=42)


def test_phases_split_the_vocabulary_between_corpora() -> None:
    en, code = corpus("english"), corpus("code")
    tok = Tokenizer.train_phases(
        [Phase(list(en), 300), Phase(list(code), 200)],
        special_tokens=[SPECIAL], seed_merges=["    "], progress=False,
    )
    # The seed makes three tokens (2, 3 and 4 spaces, joined left to right).
    first = train(en, 256 + 3 + 1 + 300, special_tokens=[SPECIAL], seed_merges=["    "])
    second = train(code, first.vocab_size + 200, base=first)
    assert tok.merges() == second.merges()
    assert tok.special_tokens == {SPECIAL: first.special_tokens[SPECIAL]}
    assert tok.vocab_size == 256 + 3 + 1 + 300 + 200


def test_phases_resume_from_their_store_without_reading_finished_phases(tmp_path) -> None:
    en, code = list(corpus("english")), list(corpus("code"))
    store = tmp_path / "phases"

    def failing():
        yield from code[:50]
        raise OSError("the disk went away")

    with pytest.raises(OSError, match="went away"):
        Tokenizer.train_phases([Phase(en, 300), Phase(failing(), 200)], store=store,
                               progress=False)
    assert {"phase-1.sqlite", "phase-2.sqlite"} <= set(os.listdir(store))

    def must_not_be_read():
        raise AssertionError("a finished phase was read again")
        yield ""

    # A one-shot input of a finished phase cannot be checked: not read, and a warning.
    with pytest.warns(TrainingWarning, match="one-shot iterator and cannot be checked"):
        tok = Tokenizer.train_phases([Phase(must_not_be_read(), 300), Phase(code, 200)],
                                     store=store, progress=False)
    expected = Tokenizer.train_phases([Phase(en, 300), Phase(code, 200)], progress=False)
    assert tok.merges() == expected.merges()
    # A re-readable one is read (not counted) and must be the data the phase counted.
    with pytest.raises(StoreError, match="phase-1.sqlite' holds a finished run on other data"):
        Tokenizer.train_phases([Phase(code, 300), Phase(code, 200)], store=store,
                               progress=False)


def test_phases_errors_are_clear(tmp_path) -> None:
    with pytest.raises(TypeError, match="non-empty list"):
        Tokenizer.train_phases([], progress=False)
    with pytest.raises(TypeError, match=r"phases\[0\] is tuple"):
        Tokenizer.train_phases([(["a b"], 10)], progress=False)
    with pytest.raises(ValueError, match=r"phases\[0\].merges=0"):
        Tokenizer.train_phases([Phase(["a b"], 0)], progress=False)
    (tmp_path / "file").write_text("")
    with pytest.raises(ValueError, match="must be a directory"):
        Tokenizer.train_phases([Phase(["a b"], 1)], store=tmp_path / "file", progress=False)


@pytest.mark.parametrize("fmt", ["bytebpe", "store", "tiktoken", "huggingface"])
def test_the_command_line_extends_any_saved_tokenizer(tmp_path, capsys, fmt) -> None:
    from bytebpe.cli import main

    base = train(corpus("english"), 500, special_tokens=[SPECIAL])
    path = {
        "bytebpe": tmp_path / "base.json",
        "store": tmp_path / "base.sqlite",
        "tiktoken": tmp_path / "base.tiktoken",
        "huggingface": tmp_path / "tokenizer.json",
    }[fmt]
    if fmt == "bytebpe":
        base.save(path)
    elif fmt == "store":
        base = train(corpus("english"), 500, special_tokens=[SPECIAL], store=path)
    elif fmt == "tiktoken":
        base.save_tiktoken(path)
    else:
        base.save_huggingface(path)
    out = tmp_path / "out.json"
    args = ["train", "--sample", "--vocab-size", "700", "--base", str(path),
            "--seed-merges", "code", "-o", str(out), "--no-progress"]
    assert main(args) == 0, capsys.readouterr().err
    tok = Tokenizer.load(out)
    assert tok.vocab_size == 700 and tok.special_tokens == base.special_tokens
    assert all(tok.token_bytes(i) == base.token_bytes(i) for i in range(499))
    assert b"->" in tok.mergeable_ranks()
    assert main([*args, "--pattern", "gpt2"]) == 1
    assert "differs from the pattern" in capsys.readouterr().err


def test_special_ids_above_the_vocabulary_with_gaps_stay_put() -> None:
    # As in cl100k: specials at n + 1 and n + 5, ids n, n + 2.. unused.
    from bytebpe._bytebpe import CoreTokenizer

    docs = corpus("code")
    trained = train(docs, 500)
    ranks = sorted(trained.mergeable_ranks().items(), key=lambda kv: kv[1])
    base = Tokenizer(CoreTokenizer.from_ranks(
        trained.pattern, ranks, [("<|a|>", 501), ("<|b|>", 505)]
    ))
    extended = train(docs, base.vocab_size + 20, base=base)
    assert extended.special_tokens == {"<|a|>": 501, "<|b|>": 505}
    new_ids = sorted(set(extended.mergeable_ranks().values()) - set(dict(ranks).values()))
    assert new_ids[:5] == [500, 502, 503, 504, 506]
    assert merged_tokens(extended)[: 500 - 256 + 20] == merged_tokens(train(docs, 520))
    text = "x <|a|> y <|b|>"
    assert extended.to_tiktoken().encode(text, allowed_special="all") == extended.encode(
        text, allowed_special="all"
    )


def test_files_and_streams_extend_a_base_too(tmp_path) -> None:
    docs = corpus("code")
    base = train(docs[:50], 500, special_tokens=[SPECIAL])
    path = tmp_path / "docs.txt"
    path.write_text("".join(d if d.endswith("\n") else d + "\n" for d in docs[50:]))
    lines = path.read_text().splitlines(keepends=True)
    expected = train(lines, 700, base=base, seed_merges="code").merges()
    from_files = Tokenizer.train_from_files(path, 700, base=base, seed_merges="code",
                                           progress=False)
    assert from_files.merges() == expected
    with open(path, "rb") as f:
        from_stream = Tokenizer.train_from_stream(f, 700, base=base, seed_merges="code",
                                                  progress=False)
    assert from_stream.merges() == expected


def test_a_merge_onto_an_imported_unreachable_token_reuses_its_id(tmp_path) -> None:
    # An imported vocabulary with "abc" at 256 but neither "ab" nor "bc": no merge makes
    # it. Training on words holding "abc" makes "bc", then (a, bc): its bytes are token
    # 256, so that merge reuses id 256 (contract item 3) and does not count toward
    # vocab_size. The merges are the oracle's, ids and counts.
    start = [bytes([i]) for i in range(256)] + [b"abc"]
    path = tmp_path / "base.tiktoken"
    path.write_text("".join(f"{base64.b64encode(t).decode()} {i}\n" for i, t in enumerate(start)))
    base = Tokenizer.from_tiktoken(path, pattern="cl100k", special_tokens={SPECIAL: 257})
    assert base.verify() == ['token 256 ("abc") is unreachable: its bytes encode as [97, 98, 99]']
    docs = (*corpus("code", 20), " ".join(["abcd", "xabc", "zabcq", "abc"] * 300))
    words = R.count_words(docs, "cl100k", [SPECIAL])
    want = R.train_counts(words, 340, special_tokens=[SPECIAL], start=[*start, b""],
                          reserved=[257])
    reuse = next(i for i, m in enumerate(want) if m[2] == 256)
    made = dict(enumerate(start))
    for left, right, token, _ in want:
        made.setdefault(token, made[left] + made[right])
    assert made[want[reuse][0]] + made[want[reuse][1]] == b"abc"

    tok = train(docs, 340, base=base)
    assert [tuple(m) for m in tok.merges()] == want
    assert tok.vocab_size == 340 and len(want) == 340 - 258 + 1
    assert tok.special_tokens == {SPECIAL: 257}
    ranks = tok.mergeable_ranks()
    for doc in docs[-3:]:
        assert tok.encode_ordinary(doc) == R.encode_ordinary(ranks, "cl100k", doc)
    # The vocabulary is full right before the reusing merge: training stops there, as
    # the oracle does; one more token takes the reuse and the next new token.
    assert [tuple(m) for m in train(docs, 258 + reuse, base=base).merges()] == want[:reuse]
    assert [tuple(m) for m in train(docs, 259 + reuse, base=base).merges()] == want[: reuse + 2]
    # Saved and loaded, pickled, kept in a run store, and through tiktoken: the same ids.
    tok.save(tmp_path / "tok.json")
    stored = train(docs, 340, base=base, store=tmp_path / "run.sqlite")
    for again in (Tokenizer.load(tmp_path / "tok.json"), pickle.loads(pickle.dumps(tok)),
                  stored, Tokenizer.load(tmp_path / "run.sqlite")):
        assert again.merges() == tok.merges() and again.mergeable_ranks() == ranks
        assert again.special_tokens == {SPECIAL: 257}
    assert tok.to_tiktoken().encode_ordinary(docs[-1]) == tok.encode_ordinary(docs[-1])


def test_ctrl_c_stops_segmenting_words_under_the_base(tmp_path) -> None:
    # Extending a tokenizer first encodes every counted word under it (`warm::segment`):
    # here 300 words of 200 KB that the base merges deeply, seconds of it. The child says
    # when counting is stored and the core call begins (the "merging" phase event), and
    # when KeyboardInterrupt reached Python (CLOCK_MONOTONIC is one clock for all
    # processes), so the bound measures segmenting noticing Ctrl-C. The store keeps the
    # counting.
    store = tmp_path / "run.sqlite"
    script = textwrap.dedent(
        f"""
        import logging, random, resource, time
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
        from bytebpe import Tokenizer
        rng = random.Random(0)
        docs = ["".join(rng.choices("ab", k=4000)) for _ in range(200)]
        base = Tokenizer.train_from_iterator(docs, 3000, pattern="[ab]+", progress=False)
        ab = str.maketrans("01", "ab")
        words = {{f"{{rng.getrandbits(200_000):0200000b}}".translate(ab): 1 for _ in range(300)}}

        class Phases(logging.Handler):
            def emit(self, record):  # "merging": counted and stored, the core call next
                if getattr(record, "phase", None) == "merging":
                    print("merging", flush=True)

        log = logging.getLogger("bytebpe.train")
        log.addHandler(Phases())
        log.setLevel(logging.INFO)
        try:
            Tokenizer.train_from_counts(words, base.vocab_size + 1, base=base,
                                        min_frequency=1, progress=False, store={str(store)!r})
        except KeyboardInterrupt:
            print("caught", time.monotonic(), flush=True)
            raise
        print("finished", flush=True)
        """
    )
    # 0.5 s after the cue is into segmenting, which the core call starts with.
    stopped = interrupt_child(script, cue="merging", wait=0.5)
    assert "finished" not in stopped.out, "segmenting ended before Ctrl-C: make the words longer"
    # Rounds of segmenting aim at 25 ms; the bound leaves room for a loaded machine and
    # is well below what is left of segmenting (seconds) when Ctrl-C is not seen.
    assert stopped.noticed_after < 1.0
    assert "KeyboardInterrupt" in stopped.err and stopped.returncode != 0
    # Nothing done is lost: the store holds the finished counting (all 300 words),
    # undamaged, for a resumed run to start merging from.
    stored = store_read.read(store)
    assert stored.counting_finished and stored.merges == [] and stored.meta["complete"] == "0"
    assert stored.snapshot is not None and stored.fingerprint is not None
    counter = WordCounter("[ab]+", [], None, False, None)
    counter.restore(stored.snapshot, stored.ledger["counting"], stored.fingerprint)
    assert counter.distinct_words == 300
