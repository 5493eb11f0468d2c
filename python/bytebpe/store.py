"""The run store: one training run in one SQLite file (WAL mode).

Tables:
    meta      key -> value: format, version, pattern, special tokens, min frequency, max
              token length, target vocab size, complete
    counting  one row: documents and bytes counted, input fingerprint, finished flag
    snapshot  the word-count table (serialized by the Rust counter) in chunks
    merges    the merge log: rank, left, right, token, token bytes, count, phase, time
    ledger    name -> JSON: the loss ledger, written with every checkpoint and commit
    blocks    the cluster path's counted blocks (`bytebpe.cluster`): key -> partial
              counts, so a driver that crashed while a cluster counted does not count
              them again; emptied once counting is finished

Merges are committed in small transactions, so after any crash (even SIGKILL) the file
holds a consistent prefix of the merge log, the snapshot it came from and a ledger that
matches. Only Python's `sqlite3` ever opens the file (one copy of SQLite per process,
see docs/design.md), and a lock (`<store>.lock`, held for the run and removed when it
ends) keeps two runs from writing one store.
"""

from __future__ import annotations

import builtins
import json
import os
import sqlite3
import time
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bytebpe import store_lock
from bytebpe._bytebpe import WordCounter
from bytebpe.errors import CorruptTokenizerError, StoreError

FORMAT = "bytebpe-run"
VERSION = 1
SQLITE_MAGIC = b"SQLite format 3\x00"
SNAPSHOT_CHUNK = 64 * 1024 * 1024

SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE counting (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    documents INTEGER NOT NULL, bytes INTEGER NOT NULL,
    fingerprint TEXT NOT NULL, finished INTEGER NOT NULL, updated REAL NOT NULL);
CREATE TABLE snapshot (chunk INTEGER PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE merges (
    rank INTEGER PRIMARY KEY, left_id INTEGER NOT NULL, right_id INTEGER NOT NULL,
    token_id INTEGER NOT NULL, token BLOB NOT NULL, count NOT NULL,
    phase INTEGER NOT NULL, time REAL NOT NULL);
CREATE TABLE ledger (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
# Added with the cluster path; created in stores made before it when they are opened.
BLOCKS_SCHEMA = """
CREATE TABLE IF NOT EXISTS blocks (
    key TEXT PRIMARY KEY, documents INTEGER NOT NULL, bytes INTEGER NOT NULL,
    partial TEXT NOT NULL, snapshot BLOB NOT NULL)
"""


class RunStore:
    """Where and how often a training run is made durable.

    `commit_every` (seconds) bounds how many merges a crash can lose; `checkpoint_every`
    (seconds) how much counting. Pass a path instead when the defaults suit.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        commit_every: float = 1.0,
        checkpoint_every: float = 60.0,
    ) -> None:
        for name, value in (("commit_every", commit_every), ("checkpoint_every", checkpoint_every)):
            if not isinstance(value, (int, float)) or value < 0:
                raise ValueError(f"{name}={value!r}; it is a number of seconds >= 0")
        self.path = os.fspath(path)
        self.commit_every = float(commit_every)
        self.checkpoint_every = float(checkpoint_every)

    def __repr__(self) -> str:
        return f"RunStore({self.path!r}, commit_every={self.commit_every}, " \
               f"checkpoint_every={self.checkpoint_every})"


@dataclass
class RunConfig:
    """What must match for a run to be resumed."""

    pattern: str
    special_tokens: list[str]
    min_frequency: int
    max_token_length: int | None
    # The sha256 of the tokenizer a warm start extends ("" for a run from the bytes).
    start: str = ""
    # A memory limit decides which rare words are pruned, so it must match too.
    memory_limit: int | None = None

    def as_meta(self) -> dict[str, str]:
        return {
            "pattern": self.pattern,
            "special_tokens": json.dumps(self.special_tokens),
            "min_frequency": str(self.min_frequency),
            "max_token_length": json.dumps(self.max_token_length),
            "start": self.start,
            "memory_limit": json.dumps(self.memory_limit),
        }


@dataclass
class StoredRun:
    """What a store holds."""

    meta: dict[str, str]
    documents: int = 0
    bytes: int = 0
    fingerprint: int | None = None
    counting_finished: bool = False
    snapshot: builtins.bytes | None = None
    ledger: dict[str, Any] = field(default_factory=dict)
    merges: list[tuple[int, int, int, int]] = field(default_factory=list)

    @property
    def special_tokens(self) -> list[str]:
        specials: list[str] = json.loads(self.meta["special_tokens"])
        return specials


def is_store_file(path: str | os.PathLike[str]) -> bool:
    with open(path, "rb") as f:
        return f.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC


def _count_value(count: int) -> int | str:
    # SQLite integers are signed 64-bit; larger u64 counts are kept exactly as text.
    return count if count < 2**63 else str(count)


def read(path: str | os.PathLike[str], *, with_snapshot: bool = True) -> StoredRun:
    """Reads a store (also while another process writes it). Foreign, truncated or
    damaged files raise CorruptTokenizerError naming the file."""
    where = repr(os.fspath(path))
    if not os.path.exists(path):
        raise FileNotFoundError(f"no run store at {where}")
    try:
        conn = _connect_read_only(os.fspath(path))
    except sqlite3.Error as e:
        raise CorruptTokenizerError(f"{where} cannot be opened as a run store: {e}") from None
    try:
        return _read(conn, where, with_snapshot)
    except sqlite3.DatabaseError as e:
        if "readonly" in str(e):
            raise StoreError(
                f"{where} is being written (or was left with an uncheckpointed log by a "
                f"killed run) and its directory is not writable, so it cannot be read: {e}"
            ) from None
        raise CorruptTokenizerError(f"{where} is not a readable run store: {e}") from None
    finally:
        conn.close()


def _connect_read_only(path: str) -> sqlite3.Connection:
    """A connection that never writes: not the store, and no `-wal`/`-shm` files beside it.

    When no run can be writing the store (its lock is not held) and no write-ahead log is
    pending, the file is opened `immutable` (no locking, no shared-memory file, so a
    read-only directory works too). Otherwise (a run writes it now, or a killed run left a
    log whose commits only SQLite's WAL reader sees) it is opened `mode=ro`, which must
    share the writer's `-shm` file and reads every committed transaction."""
    uri = "file:" + urllib.parse.quote(os.path.abspath(path))
    if _no_writer(path):
        return sqlite3.connect(uri + "?mode=ro&immutable=1", uri=True)
    return sqlite3.connect(uri + "?mode=ro", uri=True)


def _no_writer(path: str) -> bool:
    """True when no training run holds the store's lock and no write-ahead log is pending.
    A run takes the lock before it opens SQLite, so this holds for the whole read unless a
    run starts meanwhile; such a run appends to the log and leaves the main file alone
    until a checkpoint, and a damaged read is refused by `quick_check`."""
    try:
        if os.path.getsize(path + "-wal") > 0:
            return False
    except OSError:
        pass  # no log
    return not store_lock.is_held(path)


def _read(conn: sqlite3.Connection, where: str, with_snapshot: bool) -> StoredRun:
    check = conn.execute("PRAGMA quick_check").fetchone()[0]
    if check != "ok":
        raise CorruptTokenizerError(f"{where} is damaged: {check}")
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if not {"meta", "counting", "snapshot", "merges", "ledger"} <= tables:
        raise CorruptTokenizerError(f"{where} is an SQLite file but not a bytebpe run store")
    meta = dict(conn.execute("SELECT key, value FROM meta"))
    if meta.get("format") != FORMAT:
        raise CorruptTokenizerError(f"{where} is an SQLite file but not a bytebpe run store")
    if meta.get("version") != str(VERSION):
        raise CorruptTokenizerError(
            f"{where} has store version {meta.get('version')}; this bytebpe reads {VERSION}"
        )
    run = StoredRun(meta=meta)
    row = conn.execute("SELECT documents, bytes, fingerprint, finished FROM counting").fetchone()
    if row is not None:
        run.documents, run.bytes = row[0], row[1]
        run.fingerprint, run.counting_finished = int(row[2]), bool(row[3])
        if with_snapshot:
            chunks = conn.execute("SELECT data FROM snapshot ORDER BY chunk").fetchall()
            run.snapshot = b"".join(c[0] for c in chunks) if chunks else None
    run.ledger = {name: json.loads(value) for name, value in conn.execute("SELECT * FROM ledger")}
    merges = conn.execute("SELECT rank, left_id, right_id, token_id, count FROM merges ORDER BY rank")
    for expected, (rank, left, right, token, count) in enumerate(merges):
        if rank != expected:
            raise CorruptTokenizerError(f"{where}: the merge log has a gap at rank {expected}")
        run.merges.append((left, right, token, int(count)))
    return run


class OpenRun:
    """A store opened for writing by one training run (holds the lock)."""

    def __init__(
        self,
        store: RunStore,
        config: RunConfig,
        vocab_size: int,
        start: tuple[str, list[bytes]] | None = None,
    ) -> None:
        """`start` is a warm start's tokenizer: (its file state as JSON, its tokens)."""
        self.store = store
        self.where = repr(store.path)
        self._lock = store_lock.acquire(store.path)
        try:
            existed = os.path.exists(store.path) and not _is_blank(store.path)
            self.stored = self._open(config, vocab_size, existed, start)
            self._pending: list[tuple[Any, ...]] = []
            self._last_commit = time.monotonic()
            # Token bytes by id, to store each merge's bytes (the log is readable on its own).
            self._tokens = list(start[1]) if start else [bytes([b]) for b in range(256)]
            self._append_tokens(self.stored.merges)
            self._rank = len(self.stored.merges)
            self._ledger: dict[str, Any] = dict(self.stored.ledger)
        except BaseException:
            # Whatever failed, a retry in this process must find neither open.
            self.close()
            raise

    def _open(
        self,
        config: RunConfig,
        vocab_size: int,
        existed: bool,
        start: tuple[str, list[bytes]] | None,
    ) -> StoredRun:
        if existed:
            stored = read(self.store.path)
            _check_same_config(stored.meta, config, self.where)
        try:
            self.conn = sqlite3.connect(self.store.path, isolation_level=None, timeout=5.0)
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
            if not existed:
                with self._transaction():
                    for statement in SCHEMA.split(";"):
                        if statement.strip():
                            self.conn.execute(statement)
                    meta = {"format": FORMAT, "version": str(VERSION), **config.as_meta()}
                    if start:
                        meta["start_state"] = start[0]
                    self.conn.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
                stored = StoredRun(meta=meta)
            with self._transaction():
                self.conn.execute(BLOCKS_SCHEMA)
                self.conn.execute(
                    "INSERT OR REPLACE INTO meta VALUES ('vocab_size', ?), ('complete', '0')",
                    (str(vocab_size),),
                )
        except sqlite3.Error as e:
            raise self._write_error(e) from None
        return stored

    # ---- counting

    def checkpoint_counting(self, counter: WordCounter, finished: bool) -> None:
        """Saves the word table, progress and ledger in one transaction."""
        # Chunks are views, not copies: under a memory limit the snapshot is already the
        # largest transient of a checkpoint.
        snapshot = memoryview(counter.snapshot())
        self._ledger["counting"] = counter.ledger()
        try:
            with self._transaction():
                self.conn.execute("DELETE FROM snapshot")
                self.conn.executemany(
                    "INSERT INTO snapshot VALUES (?, ?)",
                    (
                        (i, snapshot[start : start + SNAPSHOT_CHUNK])
                        for i, start in enumerate(range(0, len(snapshot), SNAPSHOT_CHUNK))
                    ),
                )
                self.conn.execute(
                    "INSERT OR REPLACE INTO counting VALUES (1, ?, ?, ?, ?, ?)",
                    (counter.documents, counter.bytes, str(counter.fingerprint), int(finished),
                     time.time()),
                )
                self._write_ledger()
        except sqlite3.Error as e:
            raise self._write_error(e) from None

    def set_ledger(self, name: str, value: Any) -> None:
        self._ledger[name] = value

    # ---- blocks counted by a cluster

    def counted_blocks(self) -> dict[str, tuple[dict[str, Any], builtins.bytes]]:
        """The blocks a cluster counted so far: key -> (partial as JSON, snapshot)."""
        try:
            rows = self.conn.execute("SELECT key, partial, snapshot FROM blocks").fetchall()
        except sqlite3.Error as e:
            raise self._write_error(e) from None
        return {key: (json.loads(partial), bytes(snapshot)) for key, partial, snapshot in rows}

    def add_block(self, key: str, partial: dict[str, Any], snapshot: builtins.bytes) -> None:
        """Records one counted block (committed at once: it cost a cluster task)."""
        try:
            with self._transaction():
                self.conn.execute(
                    "INSERT OR REPLACE INTO blocks VALUES (?, ?, ?, ?, ?)",
                    (key, partial["documents"], partial["bytes"], json.dumps(partial), snapshot),
                )
        except sqlite3.Error as e:
            raise self._write_error(e) from None

    def drop_blocks(self) -> None:
        """Forgets the counted blocks (once their sum is the counting checkpoint)."""
        try:
            with self._transaction():
                self.conn.execute("DELETE FROM blocks")
        except sqlite3.Error as e:
            raise self._write_error(e) from None

    # ---- merging

    def add_merges(self, merges: Sequence[tuple[int, int, int, int]]) -> None:
        """Queues new merges and commits when due."""
        now = time.time()
        for (left, right, token, count), data in zip(merges, self._append_tokens(merges)):
            self._pending.append((self._rank, left, right, token, data, _count_value(count), 0, now))
            self._rank += 1
        if time.monotonic() - self._last_commit >= self.store.commit_every:
            self.commit()

    def _append_tokens(self, merges: Sequence[tuple[int, int, int, int]]) -> list[bytes]:
        out = []
        for rank, (left, right, token, _) in enumerate(merges):
            if not (0 <= left < len(self._tokens) and 0 <= right < len(self._tokens)):
                raise CorruptTokenizerError(
                    f"{self.where}: merge {rank} joins ids {left} and {right}, but only "
                    f"{len(self._tokens)} tokens exist before it"
                )
            data = self._tokens[left] + self._tokens[right]
            if token >= len(self._tokens):
                # New ids skip those of special tokens (empty here).
                self._tokens.extend([b""] * (token - len(self._tokens)))
                self._tokens.append(data)
            out.append(data)
        return out

    def commit(self) -> None:
        try:
            with self._transaction():
                self.conn.executemany("INSERT INTO merges VALUES (?, ?, ?, ?, ?, ?, ?, ?)", self._pending)
                self._write_ledger()
        except sqlite3.Error as e:
            raise self._write_error(e) from None
        self._pending.clear()
        self._last_commit = time.monotonic()

    def finish(self) -> None:
        self.commit()
        try:
            with self._transaction():
                self.conn.execute("INSERT OR REPLACE INTO meta VALUES ('complete', '1')")
        except sqlite3.Error as e:
            raise self._write_error(e) from None

    def close(self) -> None:
        try:
            conn: sqlite3.Connection | None = getattr(self, "conn", None)  # None if never connected
            if conn is not None:
                conn.close()
        finally:
            self._lock.close()

    # ---- helpers

    def _write_ledger(self) -> None:
        self.conn.executemany(
            "INSERT OR REPLACE INTO ledger VALUES (?, ?)",
            ((name, json.dumps(value, sort_keys=True)) for name, value in self._ledger.items()),
        )

    def _transaction(self) -> _Transaction:
        return _Transaction(self.conn)

    def _write_error(self, e: sqlite3.Error) -> StoreError:
        done = self._rank - len(self._pending) if hasattr(self, "_rank") else 0
        return StoreError(
            f"cannot write the run store {self.where}: {e}. What was committed before "
            f"({done} merges) is intact and readable; free space or pick a writable "
            "location, then run the same call again to resume"
        )


class _Transaction:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *rest: object) -> None:
        if exc_type is None:
            self.conn.execute("COMMIT")
        else:
            self.conn.execute("ROLLBACK")


def _is_blank(path: str) -> bool:
    """True for a file a crash left before the schema was committed (empty, or an SQLite
    database without tables), which is safe to initialize."""
    if os.path.getsize(path) == 0:
        return True
    if not is_store_file(path):
        return False
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return bool(conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0)
        finally:
            conn.close()
    except sqlite3.Error:
        return False


def _check_same_config(meta: dict[str, str], config: RunConfig, where: str) -> None:
    for key, wanted in config.as_meta().items():
        # Stores from before memory limits have no key for it: they had none.
        if meta.get(key, "null" if key == "memory_limit" else None) != wanted:
            raise StoreError(
                f"the run store {where} was made with {key}={meta.get(key)}, but this call "
                f"has {key}={wanted}; use another store path (or delete it) to start a new "
                "run with these settings"
            )
