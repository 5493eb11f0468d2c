"""Damage to a run store is refused, never loaded or resumed as another tokenizer.

Every row carries a checksum (the merge log's and the snapshot's chained), and every
value read is checked: each field of each table is damaged on purpose below, checking
the message; then random single-bit and single-byte damage, to the file and to row
values through SQL (which keeps SQLite's own structure valid), must give either a refusal
naming the store or exactly the undamaged result.
"""

from __future__ import annotations

import dataclasses
import functools
import random
import sqlite3
import struct

import pytest
from bytebpe import CorruptTokenizerError, RunStore, StoreError, Tokenizer, store
from bytebpe.sample import sample_documents
from bytebpe.store_rows import row_sum

DOCS = sample_documents()[:40]
VOCAB = 350
MERGES_BEFORE_STOP = 30
STATES = ("finished", "created", "counting", "counted", "merging", "warm")


class Stop(Exception):
    """Stands for a crash or Ctrl-C at a chosen point."""


def train(store_=None, data=DOCS, vocab_size=VOCAB, **kw):
    return Tokenizer.train_from_iterator(data, vocab_size, progress=False, store=store_, **kw)


@functools.cache
def warm_base():
    """The tokenizer the "warm" state extends: its special token's id (300) is reserved,
    so the new ids skip it."""
    return train(vocab_size=301, special_tokens=["<|s|>"])


def options(state: str) -> dict:
    return {"base": warm_base()} if state == "warm" else {}


def make_store(path, state: str) -> None:
    """A store as a run leaves it: finished, stopped right after creating it, while
    counting, after counting (no merge yet), or after some merges."""
    if state in ("finished", "warm"):
        train(RunStore(path), **options(state))
        return
    if state == "created":
        def stop(*args, **kwargs):
            raise Stop

        with pytest.MonkeyPatch.context() as mp, pytest.raises(Stop):
            mp.setattr(store.OpenRun, "checkpoint_counting", stop)
            train(RunStore(path))
        return
    if state == "counting":
        def stop_midway():
            for i, doc in enumerate(DOCS):
                if i == len(DOCS) // 2:
                    raise Stop
                yield doc

        with pytest.raises(Stop):
            train(RunStore(path, checkpoint_every=0), stop_midway(), buffer_size=5)
        return
    keep = 0 if state == "counted" else MERGES_BEFORE_STOP
    add_merges = store.OpenRun.add_merges

    def stop_after_some(self, merges):
        if self._rank + len(merges) >= keep:
            add_merges(self, merges[: keep - self._rank])
            self.commit()
            raise Stop
        add_merges(self, merges)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(store.OpenRun, "add_merges", stop_after_some)
        with pytest.raises(Stop):
            train(RunStore(path))


def resume(path, state="finished"):
    return train(RunStore(path, checkpoint_every=0), buffer_size=5, **options(state))


def loaded(path):
    """What loading gives: the tokenizer, its report, and everything the store read."""
    tok = Tokenizer.load(path)
    run = store.read(path, with_snapshot=False)
    run = dataclasses.asdict(dataclasses.replace(run, where="", tokens=None))
    return tok, tok.loss_report(), run


def sql(path, statement, *args):
    conn = sqlite3.connect(path)
    try:
        conn.execute(statement, args)
        conn.commit()
    finally:
        conn.close()


def value(path, query):
    conn = sqlite3.connect(path)
    try:
        return conn.execute(query).fetchone()[0]
    finally:
        conn.close()


@pytest.fixture(scope="module")
def reference():
    """What an undamaged run gives, by state (each resumes to the plain or warm run)."""
    plain, warm = train(), train(**options("warm"))
    return {state: (tok, tok.loss_report()) for state in STATES
            for tok in [warm if state == "warm" else plain]}


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    """Each state's store file, as bytes (copied for each case)."""
    out = {}
    for state in STATES:
        path = tmp_path_factory.mktemp(state) / "run.sqlite"
        make_store(path, state)
        out[state] = path.read_bytes()
    return out


@pytest.fixture(scope="module")
def undamaged(stores, tmp_path_factory):
    out = {}
    for state, data in stores.items():
        path = tmp_path_factory.mktemp(f"{state}-load") / "run.sqlite"
        path.write_bytes(data)
        out[state] = loaded(path)
    return out


def test_states_are_what_they_say(undamaged, reference):
    tok, _, run = undamaged["finished"]
    assert tok == reference["finished"][0] and run["meta"]["complete"] == "1"
    tok, _, run = undamaged["warm"]
    assert tok == reference["warm"][0] and "start_state" in run["meta"]
    assert tok.special_tokens == {"<|s|>": 300} and 300 not in {m.token for m in tok.merges()}
    assert undamaged["created"][2]["fingerprint"] is None
    assert undamaged["created"][0].vocab_size == 256
    assert undamaged["counting"][2]["counting_finished"] is False
    assert undamaged["counted"][2]["counting_finished"] is True
    assert undamaged["counted"][2]["merges"] == []
    assert len(undamaged["merging"][2]["merges"]) == MERGES_BEFORE_STOP


# ==================== Each field, damaged on purpose


def refused(path, message, *, load=True, resume_too=True):
    """Loading (and resuming) `path` is refused with `message`, and a refused resume
    leaves the file as it was."""
    if load:
        with pytest.raises(CorruptTokenizerError, match=message) as e:
            Tokenizer.load(path)
        assert str(path) in str(e.value)
    if resume_too:
        before = path.read_bytes()
        with pytest.raises(CorruptTokenizerError, match=message) as e:
            resume(path)
        assert str(path) in str(e.value)
        assert path.read_bytes() == before


SUMMED = "it does not match its checksum"
FIELD_CASES = [
    # meta
    ("finished", "UPDATE meta SET value = 'gpt2' WHERE key = 'pattern'", (),
     rf"meta row 'pattern': {SUMMED}"),
    ("finished", "UPDATE meta SET sum = (sum | 1) - (sum & 1) WHERE key = 'vocab_size'", (),
     rf"meta row 'vocab_size': {SUMMED}"),
    ("finished", "UPDATE meta SET value = 'bytebpe-rum' WHERE key = 'format'", (),
     rf"meta row 'format': {SUMMED}"),
    ("finished", "DELETE FROM meta WHERE key = 'min_frequency'", (),
     "meta row 'min_frequency': it is missing"),
    ("finished", "UPDATE meta SET value = '2', sum = ? WHERE key = 'complete'",
     (row_sum("meta", "complete", "2"),), "meta row 'complete': it is '2'"),
    ("finished", "UPDATE meta SET value = '9', sum = ? WHERE key = 'version'",
     (row_sum("meta", "version", "9"),), "has store version 9; this bytebpe reads version 2"),
    ("finished", "UPDATE meta SET value = '[1]', sum = ? WHERE key = 'special_tokens'",
     (row_sum("meta", "special_tokens", "[1]"),),
     "meta row 'special_tokens': it is not a list of strings"),
    ("finished", "UPDATE meta SET value = '{', sum = ? WHERE key = 'special_tokens'",
     (row_sum("meta", "special_tokens", "{"),),
     "meta row 'special_tokens': value is not valid JSON"),
    ("finished", "UPDATE meta SET value = CAST(x'ff' AS TEXT) WHERE key = 'pattern'", (),
     r"meta row 'pattern': value is b'\\xff', not UTF-8 text"),
    # counting
    ("counted", "UPDATE counting SET documents = documents + 1", (), f"counting row: {SUMMED}"),
    ("counted", "UPDATE counting SET documents = -1", (),
     r"counting row: documents is -1, not an integer in \[0, "),
    ("counted", "UPDATE counting SET bytes = 'many'", (), "counting row: bytes is b?'many'"),
    ("counted", "UPDATE counting SET fingerprint = '-12'", (),
     "counting row: fingerprint is '-12', not a number"),
    ("counted", "UPDATE counting SET fingerprint = '18446744073709551616'", (),
     "counting row: fingerprint is '18446744073709551616', not a number in"),
    ("counted", "UPDATE counting SET finished = 2", (), "counting row: finished is 2"),
    ("counted", "UPDATE counting SET updated = updated + 1", (), f"counting row: {SUMMED}"),
    ("counted", "UPDATE counting SET updated = 'soon'", (), "counting row: updated is b?'soon'"),
    ("counted", "UPDATE counting SET snapshot_sum = (snapshot_sum | 1) - (snapshot_sum & 1)", (),
     f"counting row: {SUMMED}"),
    # ledger
    ("finished", "UPDATE ledger SET value = '{' WHERE name = 'training'", (),
     r"ledger row 'training': value is not valid JSON \(Expecting"),
    ("finished", "UPDATE ledger SET value = ? WHERE name = 'training'", ("[" * 100_000,),
     r"ledger row 'training': value is not valid JSON \(nested too deeply\)"),
    ("finished", "UPDATE ledger SET value = replace(value, '40', '41') WHERE name = 'training'",
     (), f"ledger row 'training': {SUMMED}"),
    ("counted", "DELETE FROM ledger WHERE name = 'counting'", (),
     "ledger row 'counting': it is missing or does not match the counting row"),
    # merges
    ("finished", "UPDATE merges SET left_id = -1 WHERE rank = 7", (),
     r"merges rank 7: left_id is -1, not an integer in \[0, 4294967296\)"),
    ("finished", "UPDATE merges SET right_id = 1 << 40 WHERE rank = 7", (),
     "merges rank 7: right_id is 1099511627776, not an integer"),
    ("finished", "UPDATE merges SET token_id = 'x' WHERE rank = 7", (),
     "merges rank 7: token_id is b?'x'"),
    # The example: bit 0 of right_id in the last merge.
    ("finished", "UPDATE merges SET right_id = (right_id | 1) - (right_id & 1) "
     "WHERE rank = (SELECT max(rank) FROM merges)", (),
     rf"merges rank {VOCAB - 257}: (its token bytes are not|it joins ids)"),
    ("finished", "UPDATE merges SET token = x'00' || token WHERE rank = 3", (),
     "merges rank 3: its token bytes are not the bytes of left_id and right_id joined"),
    ("finished", "UPDATE merges SET count = count + 1 WHERE rank = 3", (),
     f"merges rank 3: {SUMMED}"),
    ("finished", "UPDATE merges SET count = -5 WHERE rank = 3", (),
     r"merges rank 3: count is -5, not a count in \[0, 2\*\*64\)"),
    ("finished", "UPDATE merges SET count = '18446744073709551616' WHERE rank = 3", (),
     "merges rank 3: count is b?'18446744073709551616', not a count"),
    ("finished", "UPDATE merges SET count = 'abc' WHERE rank = 3", (),
     "merges rank 3: count is b?'abc'"),
    ("finished", "UPDATE merges SET phase = 1 WHERE rank = 3", (), f"merges rank 3: {SUMMED}"),
    ("finished", "UPDATE merges SET time = time + 0.5 WHERE rank = 3", (),
     f"merges rank 3: {SUMMED}"),
    ("finished", "UPDATE merges SET sum = (sum | 4) - (sum & 4) WHERE rank = 3", (),
     f"merges rank 3: {SUMMED}"),
    ("finished", "DELETE FROM merges WHERE rank = 10", (), "merges rank 10: it is missing"),
    ("finished", "DELETE FROM merges WHERE rank = (SELECT max(rank) FROM merges)", (),
     f"merges: the log has {VOCAB - 257} merges, but the finished run wrote {VOCAB - 256}"),
    ("merging", "UPDATE merges SET token_id = 999 WHERE rank = 3", (),
     "merges rank 3: token_id 999 skips ids; the next new id is 259"),
    # tables
    ("finished", "DROP TABLE blocks", (), "table blocks: it is missing"),
]


@pytest.mark.parametrize(("state", "edit", "args", "message"), FIELD_CASES)
def test_each_damaged_field_is_named(stores, tmp_path, state, edit, args, message):
    path = tmp_path / "run.sqlite"
    path.write_bytes(stores[state])
    sql(path, edit, *args)
    refused(path, message)


@pytest.mark.parametrize("state", ["counted", "merging"])
def test_damaged_snapshot_chunk_is_refused_on_resume(stores, undamaged, tmp_path, state):
    path = tmp_path / "run.sqlite"
    path.write_bytes(stores[state])
    data = bytearray(value(path, "SELECT data FROM snapshot WHERE chunk = 0"))
    data[len(data) // 2] ^= 0x10
    sql(path, "UPDATE snapshot SET data = ? WHERE chunk = 0", bytes(data))
    refused(path, f"snapshot chunk 0: {SUMMED}", load=False)
    # Loading does not use the snapshot: it gives the merge log, as undamaged.
    assert loaded(path) == undamaged[state]


def test_missing_snapshot_is_refused_on_resume(stores, tmp_path):
    path = tmp_path / "run.sqlite"
    path.write_bytes(stores["counted"])
    sql(path, "DELETE FROM snapshot")
    refused(path, "snapshot: its 0 chunks are not the ones the counting row names", load=False)


def test_a_changed_snapshot_with_its_sum_recomputed_is_caught_by_the_chain(stores, tmp_path):
    # A chunk rewritten with a valid sum of its own (an older checkpoint's, say) does not
    # end the chain the counting row names.
    from bytebpe.store_rows import chunk_sum

    path = tmp_path / "run.sqlite"
    path.write_bytes(stores["counted"])
    data = value(path, "SELECT data FROM snapshot WHERE chunk = 0")
    data = data[:-1] + bytes([data[-1] ^ 1])
    sql(path, "UPDATE snapshot SET data = ?, sum = ? WHERE chunk = 0", data, chunk_sum(0, 0, data))
    refused(path, "snapshot: its 1 chunks are not the ones the counting row names", load=False)


def test_a_schema_that_is_not_utf8_is_refused(stores, tmp_path):
    # Python's sqlite3 raises UnicodeDecodeError for SQLite's message quoting it.
    path = tmp_path / "run.sqlite"
    data = stores["finished"]
    at = data.index(b"CREATE TABLE meta") + len("CREATE T")
    path.write_bytes(data[:at] + b"\xcc" + data[at + 1 :])
    refused(path, r"not a readable run store: malformed database schema \(meta\)")


def test_a_damaged_key_index_is_refused_before_anything_is_written(stores, tmp_path):
    # The index of the ledger's names: reading scans the table, but a resumed run writes
    # through the index, and SQLite would find the damage only then.
    path = tmp_path / "run.sqlite"
    path.write_bytes(stores["finished"])
    root = value(path, "SELECT rootpage FROM sqlite_master WHERE name = 'sqlite_autoindex_ledger_1'")
    page = value(path, "PRAGMA page_size")
    data = bytearray(path.read_bytes())
    at = data.index(b"training", (root - 1) * page, root * page)
    data[at] ^= 0x20
    path.write_bytes(bytes(data))
    refused(path, r"is damaged: .*index sqlite_autoindex_ledger_1")


def test_sqlite_damage_while_writing_is_told_apart_from_a_full_disk(tmp_path):
    from bytebpe.store_read import is_damage

    path = tmp_path / "x.sqlite"
    path.write_bytes(b"not a database" * 100)
    with pytest.raises(sqlite3.DatabaseError) as damage:
        sqlite3.connect(path).execute("SELECT 1 FROM sqlite_master")
    assert is_damage(damage.value)
    conn = sqlite3.connect(tmp_path / "y.sqlite")
    conn.execute("CREATE TABLE t (x)")
    conn.execute("PRAGMA max_page_count = 2")
    with pytest.raises(sqlite3.DatabaseError) as full:
        conn.execute("INSERT INTO t VALUES (zeroblob(100000))")
    assert not is_damage(full.value)


def test_a_warm_start_state_is_checked(tmp_path):
    base = train(vocab_size=300)
    path = tmp_path / "run.sqlite"
    train(RunStore(path), base=base)
    state = value(path, "SELECT value FROM meta WHERE key = 'start_state'")
    sql(path, "UPDATE meta SET value = ? WHERE key = 'start_state'", state.replace("A", "B", 1))
    refused(path, f"meta row 'start_state': {SUMMED}", resume_too=False)
    other = state.replace("A", "B", 1)
    sql(path, "UPDATE meta SET value = ?, sum = ? WHERE key = 'start_state'",
        other, row_sum("meta", "start_state", other))
    refused(path, "meta row 'start_state': it is not the tokenizer 'start' names",
            resume_too=False)


def test_damaged_blocks_are_refused(tmp_path):
    path = tmp_path / "run.sqlite"
    config = store.RunConfig(pattern="x", special_tokens=[], min_frequency=2, max_token_length=None)
    partial = {"documents": 3, "bytes": 40, "ledger": "{}"}
    run = store.OpenRun(RunStore(path), config, 300)
    try:
        run.add_block("block-0", partial, b"snapshot bytes")
        assert run.counted_blocks() == {"block-0": (partial, b"snapshot bytes")}
    finally:
        run.close()
    cases = [
        ("UPDATE blocks SET snapshot = x'00' || snapshot", f"blocks row 'block-0': {SUMMED}"),
        ("UPDATE blocks SET documents = 4",
         "blocks row 'block-0': its partial does not match its documents and bytes"),
        ("UPDATE blocks SET partial = '{'", "blocks row 'block-0': partial is not valid JSON"),
        ("UPDATE blocks SET bytes = -1", "blocks row 'block-0': bytes is -1"),
    ]
    original = path.read_bytes()
    for edit, message in cases:
        path.write_bytes(original)
        sql(path, edit)
        run = store.OpenRun(RunStore(path), config, 300)
        try:
            with pytest.raises(CorruptTokenizerError, match=message):
                run.counted_blocks()
        finally:
            run.close()


# ==================== Stores of the earlier format

V1_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE counting (id INTEGER PRIMARY KEY CHECK (id = 1), documents INTEGER NOT NULL,
    bytes INTEGER NOT NULL, fingerprint TEXT NOT NULL, finished INTEGER NOT NULL,
    updated REAL NOT NULL);
CREATE TABLE snapshot (chunk INTEGER PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE merges (rank INTEGER PRIMARY KEY, left_id INTEGER NOT NULL,
    right_id INTEGER NOT NULL, token_id INTEGER NOT NULL, token BLOB NOT NULL, count NOT NULL,
    phase INTEGER NOT NULL, time REAL NOT NULL);
CREATE TABLE ledger (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


@pytest.mark.parametrize("complete", ["1", "0"])
def test_version_1_stores_are_refused_with_what_to_do(tmp_path, complete):
    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(V1_SCHEMA)
    meta = {"format": "bytebpe-run", "version": "1", "pattern": "x", "special_tokens": "[]",
            "min_frequency": "2", "max_token_length": "null", "start": "",
            "memory_limit": "null", "vocab_size": "257", "complete": complete}
    conn.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
    conn.execute("INSERT INTO merges VALUES (0, 97, 98, 256, x'6162', 5, 0, 1.0)")
    conn.commit()
    conn.close()
    message = (r"store version 1, whose rows carry no checksums\); this bytebpe reads version "
               r"2 only.*Tokenizer.load\(store\).save\('tokenizer.json'\).*new store path")
    refused(path, message)


# ==================== Random damage: refused, or identical


def _flip_file(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    i = rng.randrange(len(out))
    if rng.random() < 0.75:
        out[i] ^= 1 << rng.randrange(8)
    else:
        out[i] = (out[i] + rng.randrange(1, 256)) % 256
    return bytes(out)


TABLE_CELLS = {
    "meta": ("key", "value", "sum"),
    "counting": ("documents", "bytes", "fingerprint", "finished", "updated", "snapshot_sum", "sum"),
    "snapshot": ("chunk", "data", "sum"),
    "merges": ("rank", "left_id", "right_id", "token_id", "token", "count", "phase", "time",
               "sum"),
    "ledger": ("name", "value", "sum"),
}


def _flipped(old: object, rng: random.Random) -> object:
    """`old` with one bit (or one byte) changed, as SQLite would hold it after damage."""
    if isinstance(old, int):
        bits = old.to_bytes(8, "little", signed=True)
        return int.from_bytes(_flip_file(bits, rng), "little", signed=True)
    if isinstance(old, float):
        return struct.unpack("<d", _flip_file(struct.pack("<d", old), rng))[0]
    raw = old.encode("utf-8") if isinstance(old, str) else old
    assert isinstance(raw, bytes)
    new = _flip_file(raw, rng) if raw else b"\x00"
    try:
        return new.decode("utf-8") if isinstance(old, str) else new
    except UnicodeDecodeError:
        return new  # text that is no longer UTF-8 is stored as a blob


def _flip_row_value(path, rng: random.Random) -> bool:
    """Changes one bit or byte of one value of one row; False if SQLite refused the
    change (a duplicate key, a CHECK)."""
    conn = sqlite3.connect(path)
    conn.text_factory = bytes
    try:
        tables = [t for t in TABLE_CELLS
                  if conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]]
        table = rng.choice(tables)
        column = rng.choice(TABLE_CELLS[table])
        rowids = [r[0] for r in conn.execute(f"SELECT rowid FROM {table}")]
        rowid = rng.choice(rowids)
        old = conn.execute(f"SELECT {column} FROM {table} WHERE rowid = ?", (rowid,)).fetchone()[0]
        if isinstance(old, bytes) and column in ("key", "value", "fingerprint", "name"):
            old = old.decode("utf-8")
        conn.execute(f"UPDATE {table} SET {column} = ? WHERE rowid = ?",
                     (_flipped(old, rng), rowid))
        conn.commit()
        return True
    except sqlite3.IntegrityError:
        return False
    finally:
        conn.close()


def resumed(path, state):
    tok = resume(path, state)
    return tok, tok.loss_report()


def _outcome(action, path):
    try:
        return action(path)
    except (CorruptTokenizerError, StoreError) as e:
        assert str(path) in str(e), e
        return "refused"


def damage_trials(stores, undamaged, reference, tmp_path, state, mode, trials, seed):
    """Damages a copy of `state`'s store `trials` times; each load and resume must be
    refused or give exactly the undamaged result. Returns each trial's (load, resume)
    outcome, "refused" or "same"."""
    rng = random.Random(f"{seed}-{state}-{mode}")
    outcomes = []
    for trial in range(trials):
        path = tmp_path / f"{state}-{mode}-{trial}.sqlite"
        if mode == "file":
            path.write_bytes(_flip_file(stores[state], rng))
        else:
            path.write_bytes(stores[state])
            while not _flip_row_value(path, rng):
                path.write_bytes(stores[state])
        load = _outcome(loaded, path)
        assert load in ("refused", undamaged[state]), f"{path}: loaded as something else"
        before = path.read_bytes()
        again = _outcome(lambda p: resumed(p, state), path)
        assert again in ("refused", reference[state]), f"{path}: resumed as something else"
        if again == "refused":
            assert path.read_bytes() == before  # nothing written
        outcomes.append(tuple("refused" if o == "refused" else "same" for o in (load, again)))
    return outcomes


@pytest.mark.parametrize("state", STATES)
def test_random_row_damage_is_refused(stores, undamaged, reference, tmp_path, state):
    outcomes = damage_trials(stores, undamaged, reference, tmp_path, state, "rows", 12, 1)
    # Every value is covered by a checksum, so a change to any of them is refused, by
    # resuming at least (loading does not read the snapshot).
    assert all(again == "refused" for _, again in outcomes)


@pytest.mark.parametrize("state", STATES)
def test_random_file_damage_is_refused_or_harmless(stores, undamaged, reference, tmp_path, state):
    damage_trials(stores, undamaged, reference, tmp_path, state, "file", 12, 1)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["rows", "file"])
@pytest.mark.parametrize("state", STATES)
def test_random_damage_many(stores, undamaged, reference, tmp_path, state, mode):
    damage_trials(stores, undamaged, reference, tmp_path, state, mode, 150, 2)
