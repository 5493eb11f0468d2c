"""The run store: resuming, refusing what does not match, and every bad file."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
import sys
import textwrap
import time

import pytest
from bytebpe import CorruptTokenizerError, RunStore, StoreError, Tokenizer, TrainingWarning
from bytebpe.sample import sample_documents
from bytebpe.store_rows import row_sum

DOCS = sample_documents()[:150]


def train(data=DOCS, vocab_size=700, **kw):
    return Tokenizer.train_from_iterator(data, vocab_size, progress=False, **kw)


@pytest.fixture(scope="module")
def reference():
    return train()


def test_store_gives_the_same_tokenizer_and_is_one(reference, tmp_path):
    path = tmp_path / "run.sqlite"
    tok = train(store=path)
    assert tok == reference
    loaded = Tokenizer.load(path)
    assert loaded == reference
    assert loaded.loss_report()["training"]["documents"] == len(DOCS)
    small = Tokenizer.load(path, vocab_size=300)
    assert small.vocab_size == 300
    assert small.merges() == reference.merges()[: len(small.merges())]


def test_second_call_does_not_read_a_one_shot_input(reference, tmp_path):
    path = tmp_path / "run.sqlite"
    train(store=path)

    def exploding():
        raise AssertionError("the corpus was read again")
        yield  # pragma: no cover

    # A one-shot input cannot be checked against the finished run: not read, but a warning
    # (a re-readable one is read and compared: tests/test_strict_inputs.py).
    with pytest.warns(TrainingWarning, match="one-shot iterator and cannot be checked"):
        assert train(exploding(), store=path) == reference


def test_resume_extends_to_a_larger_vocabulary(tmp_path):
    path = tmp_path / "run.sqlite"
    train(vocab_size=400, store=path)
    assert train(vocab_size=700, store=path) == train(vocab_size=700)
    assert train(vocab_size=350, store=path) == train(vocab_size=350)


def test_special_tokens_follow_in_stored_tokenizers(tmp_path):
    path = tmp_path / "run.sqlite"
    tok = train(store=path, special_tokens=["<|eot|>"])
    loaded = Tokenizer.load(path)
    assert loaded.special_tokens == tok.special_tokens == {"<|eot|>": 699}
    assert Tokenizer.load(path, vocab_size=300).special_tokens == {"<|eot|>": 299}


@pytest.mark.parametrize(
    ("changed", "key"),
    [
        ({"pattern": "gpt2"}, "pattern"),
        ({"special_tokens": ["<x>"]}, "special_tokens"),
        ({"min_frequency": 3}, "min_frequency"),
        ({"max_token_length": 8}, "max_token_length"),
    ],
)
def test_other_settings_are_refused(tmp_path, changed, key):
    path = tmp_path / "run.sqlite"
    train(store=path, vocab_size=300)
    with pytest.raises(StoreError, match=rf"made with {key}=.*this call has {key}="):
        train(store=path, vocab_size=300, **changed)


def _interrupted_while_counting(path, docs):
    """Counts part of `docs` into a store, as a crash after a few checkpoints would."""
    store = RunStore(path, checkpoint_every=0)

    class Stop(Exception):
        pass

    def stop_midway():
        for i, doc in enumerate(docs):
            if i == len(docs) // 2:
                raise Stop
            yield doc

    with pytest.raises(Stop):
        train(stop_midway(), store=store, buffer_size=10)


def test_counting_resumes_for_rereadable_input(reference, tmp_path):
    path = tmp_path / "run.sqlite"
    _interrupted_while_counting(path, DOCS)
    assert train(DOCS, store=RunStore(path, checkpoint_every=0), buffer_size=7) == reference


def test_one_shot_iterator_cannot_resume_counting(reference, tmp_path):
    path = tmp_path / "run.sqlite"
    _interrupted_while_counting(path, DOCS)
    with pytest.raises(StoreError, match=r"interrupted while counting, after 70 documents.*one-shot"):
        train(iter(DOCS), store=path)
    assert train(iter(DOCS), store=path, restart_counting=True) == reference


def test_other_input_is_refused_when_resuming_counting(tmp_path):
    path = tmp_path / "run.sqlite"
    _interrupted_while_counting(path, DOCS)
    with pytest.raises(StoreError, match="the input differs"):
        train(DOCS[::-1], store=path)
    with pytest.raises(StoreError, match="the input differs"):
        train(DOCS[:20], store=path)


def test_train_from_counts_with_store(tmp_path):
    words = {"hello": 10, " world": 7, "help": 3}
    path = tmp_path / "run.sqlite"
    a = Tokenizer.train_from_counts(words, 265, store=path, progress=False)
    b = Tokenizer.train_from_counts(words, 265, store=path, progress=False)
    assert a == b == Tokenizer.train_from_counts(words, 265, progress=False)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"SQLite format 3\x00" + b"\x00" * 200, "not a readable run store|is damaged"),
        (b"SQLite format 3\x00garbage" * 50, "not a readable run store|is damaged"),
    ],
)
def test_damaged_files(tmp_path, content, message):
    path = tmp_path / "run.sqlite"
    path.write_bytes(content)
    with pytest.raises(CorruptTokenizerError, match=message):
        Tokenizer.load(path)
    with pytest.raises(CorruptTokenizerError, match=message):
        train(store=path, vocab_size=300)


def test_foreign_sqlite_file(tmp_path):
    path = tmp_path / "other.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE people (name TEXT)")
    conn.commit()
    conn.close()
    with pytest.raises(CorruptTokenizerError, match="SQLite file but not a bytebpe run store"):
        Tokenizer.load(path)
    with pytest.raises(CorruptTokenizerError, match="not a bytebpe run store"):
        train(store=path, vocab_size=300)
    assert sqlite3.connect(path).execute("SELECT count(*) FROM people").fetchone() == (0,)


def test_truncated_store(tmp_path):
    path = tmp_path / "run.sqlite"
    train(store=path, vocab_size=500)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])
    for suffix in ("-wal", "-shm"):
        if os.path.exists(f"{path}{suffix}"):
            os.remove(f"{path}{suffix}")
    with pytest.raises(CorruptTokenizerError):
        Tokenizer.load(path)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ("DELETE FROM merges WHERE rank = 10", "merges rank 10: it is missing"),
        ("UPDATE merges SET token_id = 999 WHERE rank = 3", "merges rank 3: token_id 999"),
    ],
)
def test_edited_merge_log_is_detected(tmp_path, edit, message):
    path = tmp_path / "run.sqlite"
    train(store=path, vocab_size=300)
    conn = sqlite3.connect(path)
    conn.execute(edit)
    conn.commit()
    conn.close()
    with pytest.raises(CorruptTokenizerError, match=message):
        Tokenizer.load(path)


def test_locked_store(tmp_path):
    path = tmp_path / "run.sqlite"
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import fcntl, sys, time
            f = open({str(path) + '.lock'!r}, "a+")
            fcntl.flock(f, fcntl.LOCK_EX)
            f.write("pid 4242"); f.flush()
            print("locked", flush=True)
            time.sleep(30)
        """)],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(StoreError, match=r"in use by another training run \(pid 4242\)"):
            train(store=path, vocab_size=300)
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()
    assert train(store=path, vocab_size=300).vocab_size == 300


def test_unwritable_location():
    with pytest.raises(StoreError, match="cannot create the run store"):
        train(store="/proc/bytebpe-run.sqlite", vocab_size=300)


def test_disk_full_keeps_the_store_readable(tmp_path):
    path = tmp_path / "run.sqlite"
    train(store=path, vocab_size=300)
    conn = sqlite3.connect(path)
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.close()
    # Make the database "full" at its current size (SQLite reports SQLITE_FULL, as on a
    # full disk), then ask for more merges.
    from bytebpe import store as store_module

    original = store_module.OpenRun._open

    def full_open(self, *args):
        stored = original(self, *args)
        self.conn.execute(f"PRAGMA max_page_count = {pages}")
        return stored

    store_module.OpenRun._open = full_open
    try:
        with pytest.raises(StoreError, match=r"full.*intact and readable"):
            train(store=RunStore(path, commit_every=0), vocab_size=5000)
    finally:
        store_module.OpenRun._open = original
    assert Tokenizer.load(path).vocab_size >= 300


def test_load_while_a_run_writes(tmp_path):
    path = tmp_path / "run.sqlite"
    script = textwrap.dedent(f"""
        from bytebpe import RunStore, Tokenizer
        from bytebpe.sample import sample_documents
        Tokenizer.train_from_iterator(sample_documents(), 6000, progress=False,
                                      store=RunStore({str(path)!r}, commit_every=0.05))
    """)
    proc = subprocess.Popen([sys.executable, "-c", script])
    sizes = []
    deadline = time.monotonic() + 120
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            if path.exists():
                try:
                    sizes.append(Tokenizer.load(path).vocab_size)
                except CorruptTokenizerError as e:
                    # Only before the run's first transaction commits.
                    assert "is empty" in str(e) or "not a bytebpe run store" in str(e)
            time.sleep(0.02)
    finally:
        proc.kill() if proc.poll() is None else None
    assert proc.wait() == 0
    assert sizes == sorted(sizes) and len(set(sizes)) > 1
    assert Tokenizer.load(path).vocab_size == 6000


def test_counting_over_files_resumes_after_a_missing_file_is_fixed(tmp_path):
    from bytebpe import read_files

    paths = [tmp_path / f"part{i}.txt" for i in range(4)]
    for i, path in enumerate(paths):
        if i != 2:
            path.write_text("".join(f"{d}\n" for d in DOCS[i::4]).replace("\n\n", "\n"))
    files = read_files([str(p) for p in paths])
    store = RunStore(tmp_path / "run.sqlite", checkpoint_every=0)
    with pytest.raises(FileNotFoundError, match="part2.txt"):
        train(files, store=store, buffer_size=5)
    assert store_documents(tmp_path / "run.sqlite") > 0  # counting was checkpointed
    paths[2].write_text("".join(f"{d}\n" for d in DOCS[2::4]).replace("\n\n", "\n"))
    assert train(files, store=store, buffer_size=5) == train(files)


def store_documents(path) -> int:
    from bytebpe import store

    return store.read(path).documents


def _finished_store(tmp_path):
    path = tmp_path / "d" / "run.sqlite"
    path.parent.mkdir()
    train(store=RunStore(path), vocab_size=400)
    assert sorted(p.name for p in path.parent.iterdir()) == ["run.sqlite"]
    return path


def test_loading_a_store_never_writes(tmp_path):
    path = _finished_store(tmp_path)
    before = path.read_bytes(), path.stat().st_mtime_ns
    os.chmod(path, 0o444)
    assert Tokenizer.load(path).vocab_size == 400
    # No -shm or -wal file: a WAL reader in mode=ro would leave both behind.
    assert sorted(p.name for p in path.parent.iterdir()) == ["run.sqlite"]
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before


def test_loading_a_store_in_a_read_only_directory(tmp_path):
    # As root, 0o555 does not stop writes, so this alone proves nothing there; what makes
    # it hold for other users is that loading creates no file at all (the test above).
    path = _finished_store(tmp_path)
    os.chmod(path.parent, 0o555)
    try:
        assert Tokenizer.load(path).vocab_size == 400
        assert sorted(p.name for p in path.parent.iterdir()) == ["run.sqlite"]
    finally:
        os.chmod(path.parent, 0o755)


@pytest.mark.skipif(sys.platform == "win32", reason="flock")
def test_loading_a_store_while_its_lock_is_held_reads_through_sqlite(tmp_path):
    import fcntl

    path = _finished_store(tmp_path)
    with open(str(path) + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        assert Tokenizer.load(path).vocab_size == 400  # mode=ro, not immutable


def test_loading_a_store_with_a_pending_log_sees_its_commits(tmp_path):
    # A killed run can leave commits only in the -wal file: immutable would not see them.
    path = _finished_store(tmp_path)
    keep = sqlite3.connect(path)  # holds the log open so closing `conn` keeps it
    keep.execute("PRAGMA wal_autocheckpoint=0")
    keep.execute("SELECT 1 FROM meta").fetchall()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_autocheckpoint=0")
    # As a run interrupted at 100 merges would leave it (a prefix, not complete).
    conn.execute("DELETE FROM merges WHERE rank >= 100")
    conn.execute("UPDATE meta SET value = '0', sum = ? WHERE key = 'complete'",
                 (row_sum("meta", "complete", "0"),))
    conn.commit()
    conn.close()
    assert os.path.getsize(str(path) + "-wal") > 0
    assert Tokenizer.load(path).vocab_size == 356
    keep.close()


def _open_files_under(directory) -> list[str]:
    fds = []
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            target = os.readlink(f"/proc/self/fd/{fd}")
            if target.startswith(str(directory)):
                fds.append(target)
    return fds


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc")
def test_a_store_that_fails_to_open_leaves_nothing_open(tmp_path):
    path = tmp_path / "run.sqlite"
    train(store=RunStore(path), vocab_size=300)
    conn = sqlite3.connect(path)
    conn.execute("UPDATE merges SET left_id = 99999 WHERE rank = 5")
    conn.commit()
    conn.close()
    for _ in range(2):  # the retry is refused for the same reason, not as "in use"
        with pytest.raises(CorruptTokenizerError, match="merges rank 5: it joins ids 99999"):
            train(store=RunStore(path), vocab_size=400)
        assert _open_files_under(tmp_path) == []
        assert not os.path.exists(str(path) + ".lock")


@pytest.mark.skipif(sys.platform == "win32", reason="flock; symlinks")
def test_the_lock_holds_for_every_path_to_a_store(tmp_path):
    import fcntl

    path = tmp_path / "real" / "run.sqlite"
    path.parent.mkdir()
    train(store=RunStore(path), vocab_size=300)
    (tmp_path / "link.sqlite").symlink_to(path)
    (tmp_path / "dirlink").symlink_to(path.parent)
    with open(str(path) + ".lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        lock.write("pid 4242")
        lock.flush()
        for other in (tmp_path / "link.sqlite", tmp_path / "dirlink" / "run.sqlite"):
            with pytest.raises(StoreError, match=r"in use by another training run \(pid 4242\)"):
                train(store=RunStore(other), vocab_size=400)
    assert train(store=RunStore(tmp_path / "link.sqlite"), vocab_size=400).vocab_size == 400


def test_a_store_left_mid_transaction_by_a_killed_first_run_is_started_afresh(tmp_path):
    # Killed before the schema's first commit, a run leaves the file and a hot rollback
    # journal; read-only connections cannot roll that back (SQLITE_READONLY_ROLLBACK), so
    # the next run rolls it back first and starts on the blank store.
    path = tmp_path / "run.sqlite"
    killed = textwrap.dedent(
        f"""
        import os, sqlite3
        conn = sqlite3.connect({str(path)!r}, isolation_level=None)
        conn.execute("PRAGMA user_version=0")  # the file's first page, with no table yet
        conn.execute("PRAGMA cache_size=1")  # pages spill to the file inside the transaction
        conn.execute("BEGIN")
        conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
        for i in range(3000):
            conn.execute("INSERT INTO meta VALUES (?, ?)", (str(i), "x" * 200))
        os._exit(9)
        """
    )
    subprocess.run([sys.executable, "-c", killed], check=False)
    assert os.path.getsize(path) > 0 and os.path.exists(str(path) + "-journal")
    with pytest.raises(StoreError, match="killed mid-transaction"):
        Tokenizer.load(path)  # loading never writes, so it cannot roll the journal back
    tok = train(store=RunStore(path), vocab_size=300)
    assert tok.merges() == train(vocab_size=300).merges()
    assert not os.path.exists(str(path) + "-journal")
    assert Tokenizer.load(path).merges() == tok.merges()
