"""The run store: one training run in one SQLite file (WAL mode).

Tables (every row carries a checksum, `sum`: see `store_rows`):
    meta      key -> value: format, version, pattern, special tokens, min frequency, max
              token length, target vocab size, complete (and, once complete, the
              number of merges)
    counting  one row: documents and bytes counted, input fingerprint, finished flag,
              the sum that ends the snapshot's chain
    snapshot  the word-count table (serialized by the Rust counter) in chained chunks
    merges    the merge log: rank, left, right, token, token bytes, count, phase, time,
              each row's sum chained to the row before
    ledger    name -> JSON: the loss ledger, written with every checkpoint and commit
    blocks    the cluster path's counted blocks (`bytebpe.cluster`): key -> partial
              counts, so a driver that crashed while a cluster counted does not count
              them again; emptied once counting is finished

Merges are committed in small transactions, so after any crash (even SIGKILL) the file
holds a consistent prefix of the merge log, the snapshot it came from and a ledger that
matches. Reading checks every row it uses and refuses damage (CorruptTokenizerError
naming the row). Only Python's `sqlite3` ever opens the file (one copy of SQLite per
process, see docs/design.md), and a lock (`<store>.lock`, held for the run and removed
when it ends) keeps two runs from writing one store.
"""

from __future__ import annotations

import builtins
import json
import os
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bytebpe import store_lock
from bytebpe._bytebpe import WordCounter
from bytebpe.errors import CorruptTokenizerError, StoreError
from bytebpe.store_read import (
    SQLITE_ERRORS,
    StoredRun,
    is_damage,
    read,
    read_only_uri,
    sqlite_message,
)
from bytebpe.store_rows import (
    FORMAT,
    SCHEMA,
    VERSION,
    RowChecker,
    TokenTable,
    chunk_sum,
    count_value,
    damaged,
    merge_sum,
    row_sum,
    shown,
)

__all__ = [
    "SQLITE_ERRORS", "SQLITE_MAGIC", "OpenRun", "RunConfig", "RunStore", "StoredRun",
    "is_store_file", "read",
]

SQLITE_MAGIC = b"SQLite format 3\x00"
SNAPSHOT_CHUNK = 64 * 1024 * 1024


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


def is_store_file(path: str | os.PathLike[str]) -> bool:
    with open(path, "rb") as f:
        return f.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC


class OpenRun:
    """A store opened for writing by one training run (holds the lock)."""

    def __init__(
        self, store: RunStore, config: RunConfig, vocab_size: int, start: str | None = None
    ) -> None:
        """`start` is a warm start's tokenizer: its file state as JSON."""
        self.store = store
        self.where = repr(store.path)
        self._lock = store_lock.acquire(store.path)
        try:
            # A run killed in its first transaction leaves a journal that only a writer
            # can roll back, and every read here is read-only: roll it back first (the
            # lock is held, so no live run is writing), then the store reads as it was.
            _recover(store.path)
            existed = os.path.exists(store.path) and not _is_blank(store.path)
            self.stored = self._open(config, vocab_size, existed, start)
            self._pending: list[tuple[Any, ...]] = []
            self._last_commit = time.monotonic()
            # Token bytes by id, to store each merge's bytes (the log is readable on its
            # own), and the merge log's chained sum.
            self._tokens = (
                self.stored.tokens if self.stored.tokens is not None
                else TokenTable.of_start(start, RowChecker(self.where, "the start tokenizer"))
            )
            self._sum = self.stored.merges_sum
            self._rank = len(self.stored.merges)
            self._ledger: dict[str, Any] = dict(self.stored.ledger)
        except BaseException:
            # Whatever failed, a retry in this process must find neither open.
            self.close()
            raise

    def _open(
        self, config: RunConfig, vocab_size: int, existed: bool, start: str | None
    ) -> StoredRun:
        if existed:
            stored = read(self.store.path)
            _check_same_config(stored.meta, config, self.where)
        try:
            self.conn = sqlite3.connect(self.store.path, isolation_level=None, timeout=5.0)
            self.conn.text_factory = builtins.bytes  # as the reader's: checks decode text
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
            # One transaction each way, so a kill never leaves a store without a meta key.
            progress = {"vocab_size": str(vocab_size), "complete": "0"}
            with self._transaction():
                if existed:
                    self.conn.execute("DELETE FROM meta WHERE key = 'merges'")
                else:
                    for statement in SCHEMA.split(";"):
                        if statement.strip():
                            self.conn.execute(statement)
                    meta = {"format": FORMAT, "version": str(VERSION), **config.as_meta()}
                    if start:
                        meta["start_state"] = start
                    stored = StoredRun(meta={**meta, **progress}, where=self.where)
                    self._put_meta(meta)
                self._put_meta(progress)
        except SQLITE_ERRORS as e:
            raise self._write_error(e) from None
        return stored

    # ---- counting

    def checkpoint_counting(self, counter: WordCounter, finished: bool) -> None:
        """Saves the word table, progress and ledger in one transaction."""
        # Chunks are views, not copies: under a memory limit the snapshot is already the
        # largest transient of a checkpoint.
        snapshot = memoryview(counter.snapshot())
        chunks = []
        chain = 0
        for i, start in enumerate(range(0, len(snapshot), SNAPSHOT_CHUNK)):
            data = snapshot[start : start + SNAPSHOT_CHUNK]
            chain = chunk_sum(chain, i, data)
            chunks.append((i, data, chain))
        row = (counter.documents, counter.bytes, str(counter.fingerprint), int(finished),
               time.time(), chain)
        self._ledger["counting"] = counter.ledger()
        try:
            with self._transaction():
                self.conn.execute("DELETE FROM snapshot")
                self.conn.executemany("INSERT INTO snapshot VALUES (?, ?, ?)", chunks)
                self.conn.execute(
                    "INSERT OR REPLACE INTO counting VALUES (1, ?, ?, ?, ?, ?, ?, ?)",
                    (*row, row_sum("counting", *row)),
                )
                self._write_ledger()
        except SQLITE_ERRORS as e:
            raise self._write_error(e) from None

    def set_ledger(self, name: str, value: Any) -> None:
        self._ledger[name] = value

    # ---- blocks counted by a cluster

    def counted_blocks(self) -> dict[str, tuple[dict[str, Any], builtins.bytes]]:
        """The blocks a cluster counted so far: key -> (partial as JSON, snapshot), each
        row checked."""
        try:
            rows = self.conn.execute(
                "SELECT key, documents, bytes, partial, snapshot, sum FROM blocks"
            ).fetchall()
        except SQLITE_ERRORS as e:
            raise self._write_error(e) from None
        blocks = {}
        for key, documents, nbytes, partial, snapshot, stored in rows:
            check = RowChecker(self.where, f"blocks row {shown(key)}")
            name, text = check.text("key", key), check.text("partial", partial)
            fields = (name, check.integer("documents", documents), check.integer("bytes", nbytes),
                      text, check.blob("snapshot", snapshot))
            parsed = check.parsed("partial", text)
            if not isinstance(parsed, dict) or (
                parsed.get("documents"), parsed.get("bytes")) != fields[1:3]:
                raise check.fail("its partial does not match its documents and bytes")
            check.sum(stored, row_sum("blocks", *fields),
                      "key, documents, bytes, partial, snapshot")
            blocks[name] = (parsed, fields[4])
        return blocks

    def add_block(self, key: str, partial: dict[str, Any], snapshot: builtins.bytes) -> None:
        """Records one counted block (committed at once: it cost a cluster task)."""
        row = (key, partial["documents"], partial["bytes"], json.dumps(partial), snapshot)
        try:
            with self._transaction():
                self.conn.execute(
                    "INSERT OR REPLACE INTO blocks VALUES (?, ?, ?, ?, ?, ?)",
                    (*row, row_sum("blocks", *row)),
                )
        except SQLITE_ERRORS as e:
            raise self._write_error(e) from None

    def drop_blocks(self) -> None:
        """Forgets the counted blocks (once their sum is the counting checkpoint)."""
        try:
            with self._transaction():
                self.conn.execute("DELETE FROM blocks")
        except SQLITE_ERRORS as e:
            raise self._write_error(e) from None

    # ---- merging

    def add_merges(self, merges: Sequence[tuple[int, int, int, int]]) -> None:
        """Queues new merges (each row's sum chained to the one before) and commits when
        due."""
        now = time.time()
        join, rank, chain, pending = self._tokens.join, self._rank, self._sum, self._pending
        for left, right, token, count in merges:
            data = join(left, right, token)
            if isinstance(data, str):
                raise RuntimeError(f"training made merge {rank}, which is invalid: {data}")
            chain = merge_sum(chain, rank, left, right, token, data, count, 0, now)
            pending.append((rank, left, right, token, data, count_value(count), 0, now, chain))
            rank += 1
            self._rank, self._sum = rank, chain
        if time.monotonic() - self._last_commit >= self.store.commit_every:
            self.commit()

    def commit(self) -> None:
        try:
            with self._transaction():
                self._write_merges()
        except SQLITE_ERRORS as e:
            raise self._write_error(e) from None
        self._pending.clear()
        self._last_commit = time.monotonic()

    def finish(self) -> None:
        """Commits the last merges and marks the run complete with the log's length (a
        finished log that lost merges is damage, not a prefix)."""
        try:
            with self._transaction():
                self._write_merges()
                self._put_meta({"complete": "1", "merges": str(self._rank)})
        except SQLITE_ERRORS as e:
            raise self._write_error(e) from None
        self._pending.clear()

    def close(self) -> None:
        try:
            conn: sqlite3.Connection | None = getattr(self, "conn", None)  # None if never connected
            if conn is not None:
                conn.close()
        finally:
            self._lock.close()

    # ---- helpers

    def _write_merges(self) -> None:
        self.conn.executemany("INSERT INTO merges VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", self._pending)
        self._write_ledger()

    def _write_ledger(self) -> None:
        rows = []
        for name, value in self._ledger.items():
            text = json.dumps(value, sort_keys=True)
            rows.append((name, text, row_sum("ledger", name, text)))
        self.conn.executemany("INSERT OR REPLACE INTO ledger VALUES (?, ?, ?)", rows)

    def _put_meta(self, items: dict[str, str]) -> None:
        self.conn.executemany(
            "INSERT OR REPLACE INTO meta VALUES (?, ?, ?)",
            [(key, value, row_sum("meta", key, value)) for key, value in items.items()],
        )

    def _transaction(self) -> _Transaction:
        return _Transaction(self.conn)

    def _write_error(self, e: Exception) -> StoreError | CorruptTokenizerError:
        done = self._rank - len(self._pending) if hasattr(self, "_rank") else 0
        if is_damage(e):
            return damaged(self.where, "SQLite, while writing", sqlite_message(e))
        return StoreError(
            f"cannot write the run store {self.where}: {sqlite_message(e)}. What was "
            f"committed before ({done} merges) is intact and readable; free space or pick "
            "a writable location, then run the same call again to resume"
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


def _recover(path: str) -> None:
    """Lets SQLite recover what a writer killed mid-transaction left beside the store (it
    rolls back a hot journal, or rebuilds a log's index), which needs a connection that
    may write: readers here never write. Only for a caller that holds the store's lock,
    so no live run is writing it. A file SQLite cannot read is left as it is, for the
    read after to name what is wrong."""
    if not os.path.exists(path):
        return
    try:
        conn = sqlite3.connect(path, timeout=5.0)
    except SQLITE_ERRORS:
        return
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except SQLITE_ERRORS:
        pass
    finally:
        conn.close()


def _is_blank(path: str) -> bool:
    """True for a file a crash left before the schema was committed (empty, or an SQLite
    database without tables), which is safe to initialize."""
    if os.path.getsize(path) == 0:
        return True
    if not is_store_file(path):
        return False
    try:
        conn = sqlite3.connect(read_only_uri(path), uri=True)
        try:
            return bool(conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0)
        finally:
            conn.close()
    except SQLITE_ERRORS:
        return False


def _check_same_config(meta: dict[str, str], config: RunConfig, where: str) -> None:
    for key, wanted in config.as_meta().items():
        if meta[key] != wanted:
            raise StoreError(
                f"the run store {where} was made with {key}={meta[key]}, but this call "
                f"has {key}={wanted}; use another store path (or delete it) to start a new "
                "run with these settings"
            )
