"""memory_limit inside one long document: pruned at points fixed by the document (the
same from a file, a stream or one str, for any chunking), exact when nothing is pruned,
bounded in a child process under an address-space cap, and a document that cannot be cut
(or a word too long to hold) refused with an error instead of growing without bound."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest
from bytebpe import InputError, Tokenizer, _bytebpe
from hypothesis import given, settings
from long_document_child import EndlessStream, lines, write_corpus
from test_files import TRICKY

HERE = os.path.dirname(os.path.abspath(__file__))
MIB = 2**20
# What the process may use above the limit (docs/design.md, "Memory budget").
OVERHEAD = 16 * MIB
LIMIT = "64MiB"


def run_child(*args: str, cap: int = 1536 * MIB) -> dict:
    proc = subprocess.run(
        [sys.executable, os.path.join(HERE, "long_document_child.py"), "--limit", LIMIT,
         "--cap", str(cap), *args],
        capture_output=True, text=True, timeout=240,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def corpus_20mb(tmp_path_factory):
    # 20 MB as one document: ~2.2M distinct words, an exact table near 250 MB.
    path = tmp_path_factory.mktemp("long") / "one_document.txt"
    write_corpus(str(path), 20_000_000)
    return str(path)


def text_of(n_bytes: int, seed: int = 0) -> str:
    out, size = [], 0
    for line in lines(seed):
        out.append(line.decode())
        size += len(line)
        if size >= n_bytes:
            return "".join(out)
    raise AssertionError("unreachable")


# ==================== Peak memory, in a child process


def test_one_large_document_stays_under_the_limit(corpus_20mb):
    # Before: 292 MB peak under a 64 MiB limit (pruning only at document ends).
    got = run_child("--source", "file", "--path", corpus_20mb)
    assert got["peak_rss_bytes"] <= 64 * MIB + OVERHEAD, got
    assert got["documents"] == 1 and got["dropped_word_mass"] > 0, got
    # The same document as one str prunes at the same points (the str itself is the
    # caller's memory, 20 MB here).
    as_str = run_child("--source", "string", "--path", corpus_20mb)
    assert as_str["peak_rss_bytes"] <= 64 * MIB + OVERHEAD + 20_000_000, as_str
    assert {k: as_str[k] for k in ("merges_sha256", "dropped_word_mass", "dropped_bytes")} == {
        k: got[k] for k in ("merges_sha256", "dropped_word_mass", "dropped_bytes")}


def test_an_endless_document_with_cuts_streams_under_the_limit():
    got = run_child("--source", "stream", "--max-bytes", str(20_000_000))
    assert got["peak_rss_bytes"] <= 64 * MIB + OVERHEAD, got
    assert got["documents"] == 1 and got["bytes"] == 20_000_000, got


@pytest.mark.parametrize("documents", ["files", "lines"])
def test_dev_zero_is_refused_not_held(tmp_path, documents):
    # /dev/zero has no line break: no end, no safe cut. Before: an abort at 2.1 GB.
    code = (
        "import resource, sys\n"
        f"resource.setrlimit(resource.RLIMIT_AS, ({1536 * MIB}, {1536 * MIB}))\n"
        "from bytebpe import InputError, Tokenizer\n"
        "try:\n"
        f"    Tokenizer.train_from_files('/dev/zero', 300, documents={documents!r}, "
        f"memory_limit={LIMIT!r}, progress=False)\n"
        "except InputError as e:\n"
        "    print(e)\n"
        "print(int(open('/proc/self/status').read().split('VmHWM:')[1].split()[0]) * 1024)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    message, peak = proc.stdout.strip().splitlines()
    assert int(peak) <= 64 * MIB + OVERHEAD
    what = "line 1" if documents == "lines" else "document 0"
    assert message.startswith(f"/dev/zero: {what} (from byte 0) has no end and no point where "
                              "it can be cut (a line break or a space between printable ASCII "
                              "characters), and is longer than 524288 bytes"), message
    assert "the most of one document memory_limit lets a reader hold at once" in message


# ==================== Where pruning happens inside a document


@pytest.fixture(scope="module")
def pruned_text():
    # 4 MB, ~450k distinct words: pruned several times under 64 MiB.
    return text_of(4_000_000, seed=3)


def train(data, **kw):
    return Tokenizer.train_from_iterator(data, 300, progress=False, **kw)


def same(a: Tokenizer, b: Tokenizer) -> None:
    assert a.merges() == b.merges()
    assert a.loss_report()["training"] == b.loss_report()["training"]


@pytest.mark.parametrize("chunk_size", [4096, 65536, 1 << 20])
def test_pruning_points_do_not_depend_on_chunking(tmp_path, pruned_text, chunk_size):
    expected = train([pruned_text], memory_limit=LIMIT)
    assert expected.loss_report()["training"]["dropped_word_mass"] > 0
    path = tmp_path / "doc.txt"
    path.write_text(pruned_text, encoding="utf-8")
    same(Tokenizer.train_from_files(path, 300, documents="files", chunk_size=chunk_size,
                                    memory_limit=LIMIT, progress=False), expected)
    stream = io.BytesIO(pruned_text.encode())
    same(Tokenizer.train_from_stream(stream, 300, documents="files", chunk_size=chunk_size,
                                     memory_limit=LIMIT, progress=False), expected)


@pytest.mark.parametrize("threads", [1, 2])
def test_pruning_points_do_not_depend_on_threads(pruned_text, threads):
    same(train([pruned_text], memory_limit=LIMIT, num_threads=threads),
         train([pruned_text], memory_limit=LIMIT))


@pytest.mark.parametrize("pattern", ["gpt2", "cl100k", "o200k", r"\w+|\s+|[^\w\s]+"])
def test_without_pruning_a_long_document_counts_exactly(tmp_path, pattern):
    # 2 MB of a small vocabulary: many in-document checkpoints (every 128 KiB), none
    # prunes. Cut at its lines (each ends and starts with a letter: safe cuts), the
    # words are the same, so the merges equal those of the lines as documents.
    vocab = text_of(60_000, seed=5).split()
    rows = [" ".join(vocab[(i * 37 + j) % len(vocab)] for j in range(30)) + "\n"
            for i in range(7000)]
    text = "".join(rows)
    exact = train(rows, pattern=pattern)
    limited = train([text], pattern=pattern, memory_limit=LIMIT)
    assert limited.merges() == exact.merges()
    ledger = limited.loss_report()["training"]
    assert ledger["dropped_word_mass"] == 0 and ledger["bytes"] == len(text.encode())
    if pattern in ("gpt2", "cl100k", "o200k"):
        path = tmp_path / "doc.txt"
        path.write_text(text, encoding="utf-8")
        from_file = Tokenizer.train_from_files(path, 300, documents="files", chunk_size=5000,
                                               pattern=pattern, memory_limit=LIMIT,
                                               progress=False)
        same(from_file, limited)


# ==================== What cannot be held


def test_a_custom_pattern_long_document_from_a_file_is_refused(tmp_path):
    # Under a custom pattern documents are never cut, so a reader holds one whole: past
    # its bound that is an error naming the file, the document and where it starts.
    path = tmp_path / "doc.txt"
    path.write_text("short\x00" + text_of(1_500_000), encoding="utf-8")
    with pytest.raises(InputError, match=r"doc\.txt: document 1 \(from byte 6\) has no end, "
                                         r"and cannot be cut \(documents are cut only under "
                                         r"the built-in patterns"):
        Tokenizer.train_from_files(path, 300, documents="separator", separator="\x00",
                                   pattern=r"\w+|\s+", memory_limit=LIMIT, progress=False)


def test_a_word_longer_than_the_limit_allows_is_refused():
    text = "a few words " + "x" * 600_000
    with pytest.raises(InputError, match=r"document 2 has a piece of 600001 bytes \(at byte "
                                         r"11\), longer than one word may be.*max_token_length"):
        train(["one", "two", text], memory_limit=LIMIT)
    # Cut into pieces of at most max_token_length bytes, it is counted (and the ledger
    # says so).
    tok = Tokenizer.train_from_iterator(["one", "two", text], 258, memory_limit=LIMIT,
                                        max_token_length=16, progress=False)
    assert tok.loss_report()["training"]["pieces_cut"] == 1


def test_the_cut_bound_is_the_counters():
    counter = _bytebpe.WordCounter("cl100k", [], memory_limit=64 * MIB)
    assert counter.hold_bytes == (64 * MIB - _bytebpe.MEMORY_RESERVED) // 32
    assert _bytebpe.WordCounter("cl100k", []).hold_bytes is None


def test_an_endless_stream_without_a_limit_is_read_as_before():
    stream = EndlessStream(300_000)
    tok = Tokenizer.train_from_stream(stream, 300, documents="files", progress=False)
    assert tok.loss_report()["training"]["bytes"] == 300_000


# ==================== The cuts a reader makes are exact


@settings(derandomize=True, max_examples=300, deadline=None)
@given(TRICKY, TRICKY)
def test_a_reader_cutting_at_every_safe_point_counts_like_the_whole(left, right):
    # The reader's own cuts (src/read/cut.rs), at every safe point (chunk_size=1), give
    # the words of the whole document, under each built-in pattern.
    text = left + "a\nb" + right
    for pattern in ("gpt2", "cl100k", "o200k"):
        whole = _bytebpe.WordCounter(pattern, [])
        whole.add_batch([text], 0)
        parts = _bytebpe.WordCounter(pattern, [])
        reader = _bytebpe.DocumentReader(None, "s", "files", None, None, True, 1)
        for ch in text:
            reader.feed(ch.encode())
            parts.count_from(reader, 1 << 20)
        reader.finish()
        assert parts.count_from(reader, 1 << 20)
        assert parts.snapshot() == whole.snapshot(), (pattern, text)
        assert parts.documents == 1


# ==================== Against the oracle


def test_pruned_long_documents_keep_the_oracles_words():
    # Two documents of ~1.6 MB: the oracle (tests/reference.py) prunes at the documented
    # points inside them (every 128 KiB of a document under 64 MiB) and at document ends;
    # the run books exactly what it dropped and trains exactly BPE on the words it kept,
    # read as one str each and from a file cut into chunks alike.
    import random

    import reference as R
    from test_budget import ORACLE_VOCAB, _assert_kept_as_the_oracle, common_and_fresh_words

    docs = common_and_fresh_words(random.Random(11), words_per_doc=250_000, docs=2)
    run = R.budget_documents(docs, 64 * MIB)
    assert len(docs[0].encode()) > 5 * run.checkpoint_every
    tok = Tokenizer.train_from_iterator(docs, ORACLE_VOCAB, memory_limit=LIMIT, progress=False)
    _assert_kept_as_the_oracle(tok, run)
