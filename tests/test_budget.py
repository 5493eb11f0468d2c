"""The memory budget: peak RSS under the limit (measured in a subprocess), exact merges
below it, deterministic pruning above it (the words kept are the oracle's, by the rule in
docs/design.md, and the merges are exact BPE on them), the ledger, resuming, and bad
limits."""

from __future__ import annotations

import json
import os
import random
import resource
import subprocess
import sys

import pytest
import reference as R
from budget_child import documents
from bytebpe import RunStore, StoreError, Tokenizer, TrainingWarning
from bytebpe.cli import main
from bytebpe.ledger import format_report, is_clean
from bytebpe.options import parse_memory_limit
from bytebpe.sample import sample_documents

HERE = os.path.dirname(os.path.abspath(__file__))
MIB = 2**20
# What the process may use above the limit: allocator slack the estimates do not see
# (docs/design.md, "Memory budget").
OVERHEAD = 16 * MIB

# 200,000 distinct 8-letter words (and as many common ones): an exact table of ~22 MB
# of estimate against the 10 MiB the smallest limit gives the table, so it is pruned.
LIMIT = "64MiB"
DOCS = list(documents(200_000, 500, seed=1))


def train(data=DOCS, vocab_size=400, **kw):
    return Tokenizer.train_from_iterator(data, vocab_size, progress=False, **kw)


@pytest.fixture(scope="module")
def pruned():
    return train(memory_limit=LIMIT)


# The children's address space is capped, so a run whose memory ran away fails alone
# instead of taking the machine down (address space, not RSS: thread stacks and malloc
# arenas reserve far more than they touch).
CHILD_ADDRESS_SPACE = 6 << 30


def _cap_address_space() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (CHILD_ADDRESS_SPACE, CHILD_ADDRESS_SPACE))


def run_child(*args: str) -> dict:
    proc = subprocess.run(
        [sys.executable, os.path.join(HERE, "budget_child.py"), *args],
        capture_output=True, text=True, timeout=240, preexec_fn=_cap_address_space,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_peak_rss_stays_under_the_limit():
    # 3M distinct words: the exact run peaks near 330-345 MB (test_exact_run_needs_
    # several_times_the_limit; 600 MB before the merge loop's structures shrank), about
    # 2.5x this limit.
    limit = 128 * MIB
    r = run_child("--words", "3000000", "--limit", "128MiB", "--vocab-size", "400")
    assert r["peak_rss_bytes"] <= limit + OVERHEAD, r
    assert r["dropped_word_mass"] > 0 and r["dropped_bytes"] >= 9 * r["dropped_word_mass"], r


def test_peak_rss_stays_under_the_limit_with_a_store(tmp_path):
    # Counting checkpoints (every second here) serialize the table on top of it.
    limit = 128 * MIB
    r = run_child("--words", "2000000", "--limit", "128MiB", "--vocab-size", "300",
                  "--store", str(tmp_path / "run.sqlite"))
    assert r["peak_rss_bytes"] <= limit + OVERHEAD, r
    assert r["dropped_word_mass"] > 0, r


def test_an_input_that_fits_trains_exactly_and_one_that_does_not_stays_under():
    # 180,000 distinct 9-byte words: the merge loop's estimate (~350 bytes a word, 63 MB)
    # fits the 75 MiB the loop gets under 128 MiB, and the exact run peaks well under the
    # limit, so nothing may be pruned: the merges are the unlimited run's. (The estimates
    # before they were recalibrated, ~530 bytes a word, pruned this input.) Six times as
    # many words do not fit: pruned, and still under the limit.
    limit = 128 * MIB
    exact = run_child("--words", "180000", "--vocab-size", "400")
    assert exact["peak_rss_bytes"] <= 0.75 * limit, exact
    limited = run_child("--words", "180000", "--limit", "128MiB", "--vocab-size", "400")
    assert limited["dropped_word_mass"] == 0, limited
    assert limited["merges_sha256"] == exact["merges_sha256"]
    assert limited["peak_rss_bytes"] <= limit + OVERHEAD, limited
    pruned = run_child("--words", "1080000", "--limit", "128MiB", "--vocab-size", "400")
    assert pruned["dropped_word_mass"] > 0, pruned
    assert pruned["peak_rss_bytes"] <= limit + OVERHEAD, pruned


@pytest.mark.slow
def test_exact_run_needs_several_times_the_limit():
    # What makes the test above meaningful: without a limit the same input needs far more
    # than 128 MiB (373 MB measured on 2026-12-01; 327-345 MB on 2026-12-05, after the
    # merge loop's structures shrank again, so 2.5x the limit was on the line).
    r = run_child("--words", "3000000", "--vocab-size", "400")
    assert r["peak_rss_bytes"] >= 2 * 128 * MIB, r
    assert r["dropped_word_mass"] == 0


def test_pruning_is_booked_in_the_ledger(pruned):
    training = pruned.loss_report()["training"]
    assert training["dropped_word_mass"] > 0
    # Every dropped word here is 9 bytes (a space and 8 letters) or a common word.
    assert training["dropped_bytes"] >= 3 * training["dropped_word_mass"]
    assert not is_clean(pruned.loss_report())
    assert f"{training['dropped_word_mass']:,}" in format_report(pruned.loss_report())
    assert pruned != train()  # pruning did change what was learned


@pytest.mark.parametrize(("threads", "buffer_size"), [(1, 1000), (2, 7), (None, 3)])
def test_pruning_does_not_depend_on_batching_or_threads(pruned, threads, buffer_size):
    tok = train(memory_limit=LIMIT, num_threads=threads, buffer_size=buffer_size)
    assert tok == pruned
    assert tok.loss_report() == pruned.loss_report()


# Words of 5-7 letters over an 8-letter alphabet: 64 pairs, so each of the few merges
# compared below sums the counts of thousands of kept words (one word kept or dropped
# wrongly changes a count), and the oracle trains on the ~30,000 kept words in seconds.
EIGHT_LETTERS = bytes(97 + b % 8 for b in range(256))
ORACLE_VOCAB = 262


def _random_word(rng: random.Random) -> bytes:
    return rng.randbytes(rng.choice([5, 6, 6, 7])).translate(EIGHT_LETTERS)


def _assert_kept_as_the_oracle(tok: Tokenizer, run: R.BudgetRun) -> None:
    """Both kinds of pruning happened, one of them split the words at its threshold count
    by tie bucket; the ledger books what the oracle dropped, and the merges are exact BPE
    on the words it kept."""
    assert any(not merging for _, merging in run.prunings), "no pruning while counting"
    assert run.prunings[-1][1], "no pruning before the merge loop"
    assert any(0 < p.kept_buckets < 256 for p, _ in run.prunings), "no tie split"
    training = tok.loss_report()["training"]
    assert training["dropped_word_mass"] == run.dropped_mass
    assert training["dropped_bytes"] == run.dropped_bytes
    want = R.train_counts(run.table, ORACLE_VOCAB)
    assert len(want) == ORACLE_VOCAB - 256
    assert [tuple(m) for m in tok.merges()] == want


def test_pruned_counts_keep_the_oracles_words():
    # 250,000 distinct words, mostly rare: the table (46 bytes a word) passes its high
    # mark at a counting checkpoint, and the merge loop's estimate (~6x the table's) needs
    # a second pruning.
    rng = random.Random(5)
    words: dict[bytes, int] = {}
    while len(words) < 250_000:
        words[_random_word(rng)] = rng.choice([1] * 6 + [2] * 3 + [3, 4, 7, 40])
    run = R.budget_counts(words, 64 * MIB)
    # The rarest go: every word dropped is counted at most as often as any word kept.
    dropped = [count for word, count in words.items() if word not in run.table]
    assert max(dropped) <= min(run.table.values())
    tok = Tokenizer.train_from_counts(words, ORACLE_VOCAB, memory_limit=LIMIT, progress=False)
    _assert_kept_as_the_oracle(tok, run)


def common_and_fresh_words(rng: random.Random, *, words_per_doc: int, docs: int) -> list[str]:
    """Documents where 2 in 5 words are one of 3,000 common ones and the rest are drawn
    afresh (5-letter words recur now and then: there are 32,768 of them)."""
    common = [b" " + _random_word(rng) for _ in range(3000)]

    def word() -> bytes:
        return rng.choice(common) if rng.random() < 0.4 else b" " + _random_word(rng)

    return [b"".join(word() for _ in range(words_per_doc)).decode() for _ in range(docs)]


def test_pruned_documents_keep_the_oracles_words():
    # Checkpoints fall at document ends; words dropped there come back with fresh counts.
    docs = common_and_fresh_words(random.Random(9), words_per_doc=300, docs=2400)
    run = R.budget_documents(docs, 64 * MIB)
    _assert_kept_as_the_oracle(train(docs, ORACLE_VOCAB, memory_limit=LIMIT, buffer_size=7), run)


def test_pruning_does_not_depend_on_how_items_are_grouped(pruned):
    grouped = [DOCS[i : i + 13] for i in range(0, len(DOCS), 13)]
    assert train(grouped, memory_limit=LIMIT) == pruned


def test_below_the_limit_the_merges_are_exact():
    docs = sample_documents()[:300]
    exact = train(docs, 800)
    limited = train(docs, 800, memory_limit="1GB")
    assert limited.merges() == exact.merges()
    assert limited.loss_report() == exact.loss_report()
    assert limited.loss_report()["training"]["dropped_word_mass"] == 0
    counts = {"hello": 10, " world": 7, "help": 3}
    assert (Tokenizer.train_from_counts(counts, 265, memory_limit=2**30, progress=False)
            == Tokenizer.train_from_counts(counts, 265, progress=False))


def test_pre_counted_words_are_pruned_too():
    words = {f" w{i:07d}x": 1 for i in range(300_000)}
    words.update({" the": 10**6, " and": 10**5})
    tok = Tokenizer.train_from_counts(words, 300, memory_limit=LIMIT, progress=False)
    training = tok.loss_report()["training"]
    assert training["dropped_word_mass"] > 0
    assert training["dropped_bytes"] == 10 * training["dropped_word_mass"]
    assert any(tok.token_bytes(m.token) == b" the" for m in tok.merges())
    with pytest.warns(TrainingWarning, match=r"short of the requested .*memory_limit dropped rare words"):
        Tokenizer.train_from_counts(words, 100_000, memory_limit=LIMIT, progress=False)


def test_resume_after_pruning_gives_the_same_merges(pruned, tmp_path):
    path = tmp_path / "run.sqlite"
    # Merging resumed (a larger vocab_size continues the stored run): the snapshot from
    # before the merge-loop pruning is pruned again the same way, and the replay matches.
    train(vocab_size=330, memory_limit=LIMIT, store=path)
    resumed = train(memory_limit=LIMIT, store=path)
    assert resumed == pruned
    assert resumed.loss_report() == pruned.loss_report()
    assert Tokenizer.load(path).loss_report()["training"] == pruned.loss_report()["training"]


def test_counting_resumes_after_pruning(pruned, tmp_path):
    path = tmp_path / "run.sqlite"
    store = RunStore(path, checkpoint_every=0)

    class Stop(Exception):
        pass

    def stop_midway():
        for i, doc in enumerate(DOCS):
            if i == 300:
                raise Stop
            yield doc

    with pytest.raises(Stop):
        train(stop_midway(), memory_limit=LIMIT, store=store, buffer_size=5)
    resumed = train(memory_limit=LIMIT, store=store, buffer_size=11)
    assert resumed == pruned
    assert resumed.loss_report() == pruned.loss_report()


def test_a_store_refuses_another_limit(tmp_path):
    path = tmp_path / "run.sqlite"
    docs = sample_documents()[:50]
    train(docs, 300, memory_limit=LIMIT, store=path)
    with pytest.raises(StoreError, match=r"made with memory_limit=67108864.*this call has memory_limit=null"):
        train(docs, 300, store=path)
    with pytest.raises(StoreError, match="made with memory_limit="):
        train(docs, 300, memory_limit="1GB", store=path)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2GB", 2 * 10**9), ("1.5GiB", 3 * 2**29), ("500MB", 500 * 10**6), (" 2 gb ", 2 * 10**9),
        ("64MiB", 64 * MIB), (".5TiB", 2**39), (2**30, 2**30), (None, None), ("67108864", 64 * MIB),
        ("0.1GB", 10**8),
    ],
)
def test_memory_limit_values(value, expected):
    assert parse_memory_limit(value) == expected


@pytest.mark.parametrize(
    ("value", "error", "message"),
    [
        ("2XB", ValueError, r"memory_limit='2XB' is not a size.*'1.5GiB'"),
        ("", ValueError, "is not a size"),
        ("-1GB", ValueError, "is not a size"),
        ("1e9", ValueError, "is not a size"),
        ("GB", ValueError, "is not a size"),
        ("2 G B", ValueError, "is not a size"),
        ("63MiB", ValueError, r"memory_limit='63MiB' \(66,060,288 bytes\) is too small: .*at least 67,108,864"),
        (10, ValueError, "too small"),
        (-5, ValueError, "too small"),
        (2**64, ValueError, "too large"),
        (1.5e9, TypeError, "memory_limit must be an int .* not float"),
        (True, TypeError, "not bool"),
        ([1], TypeError, "not list"),
    ],
)
def test_bad_memory_limits_are_refused(value, error, message):
    with pytest.raises(error, match=message):
        train(["hello world"], 300, memory_limit=value)
    with pytest.raises(error, match=message):
        Tokenizer.train_from_counts({"hi": 2}, 260, memory_limit=value, progress=False)


def test_cli_memory_limit(tmp_path, capsys):
    corpus = tmp_path / "a.txt"
    corpus.write_text("".join(d + "\n" for d in DOCS[:200]))
    out = tmp_path / "tok.json"
    args = ["train", str(corpus), "--vocab-size", "300", "-o", str(out), "--no-progress"]
    assert main([*args, "--memory-limit", "64MiB"]) == 0
    assert "dropped" in capsys.readouterr().out
    assert Tokenizer.load(out).loss_report()["training"]["dropped_word_mass"] > 0
    assert main([*args, "--memory-limit", "2XB"]) == 1
    assert "memory_limit='2XB' is not a size" in capsys.readouterr().err


@pytest.mark.parametrize("mode", ["lines", "files"])
def test_files_read_in_chunks_are_pruned_at_the_same_points(tmp_path, mode):
    # Checkpoints fall at document ends, however the reader cuts documents into parts.
    lines = [d.replace("\n", " ") + "\n" for d in DOCS]
    path = tmp_path / "corpus.txt"
    path.write_text("".join(lines), encoding="utf-8")
    expected = train(lines if mode == "lines" else ["".join(lines)], memory_limit=LIMIT)
    got = Tokenizer.train_from_files(path, 400, documents=mode, chunk_size=65536,
                                     memory_limit=LIMIT, progress=False)
    assert got.merges() == expected.merges()
    want, have = expected.loss_report()["training"], got.loss_report()["training"]
    assert have["dropped_word_mass"] == want["dropped_word_mass"] > 0
    assert have["documents"] == want["documents"]
