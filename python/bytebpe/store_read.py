"""Reading a run store: read-only (it never writes, not even `-shm`/`-wal` files where it
can avoid them), in one read transaction (a consistent state while a run writes), and
every row it uses checked (values, checksums, chains, and the merge log's token bytes)
before anything is built from it. See `store_rows` for the rows and their sums.
"""

from __future__ import annotations

import builtins
import hashlib
import json
import math
import os
import sqlite3
import urllib.parse
import zlib
from dataclasses import dataclass, field
from typing import Any

from bytebpe import store_lock
from bytebpe.errors import CorruptTokenizerError, StoreError
from bytebpe.store_rows import (
    FORMAT,
    I64,
    MERGE_ROW,
    META_KEYS,
    TABLES,
    U32,
    VERSION,
    RowChecker,
    TokenTable,
    chunk_sum,
    damaged,
    row_sum,
    shown,
)

MergeEntry = tuple[int, int, int, int]


@dataclass
class StoredRun:
    """What a store holds (every value checked)."""

    meta: dict[str, str]
    where: str = ""
    documents: int = 0
    bytes: int = 0
    fingerprint: int | None = None
    counting_finished: bool = False
    counting_updated: float | None = None
    snapshot: builtins.bytes | None = None
    ledger: dict[str, Any] = field(default_factory=dict)
    merges: list[MergeEntry] = field(default_factory=list)
    # When the first and last merges were committed (seconds since the epoch).
    merge_times: tuple[float, float] | None = None
    # The sum of the last merge (the chain's head: the next merge's sum covers it).
    merges_sum: int = 0
    # Token bytes by id after the merge log (the start's tokens, then each merge's).
    tokens: TokenTable | None = None

    @property
    def special_tokens(self) -> list[str]:
        specials: list[str] = json.loads(self.meta["special_tokens"])
        return specials


def read(path: str | os.PathLike[str], *, with_snapshot: bool = True) -> StoredRun:
    """Reads a store (also while another process writes it). Foreign, truncated or
    damaged files raise CorruptTokenizerError naming the file (and the row)."""
    where = repr(os.fspath(path))
    if not os.path.exists(path):
        raise FileNotFoundError(f"no run store at {where}")
    try:
        conn = _connect_read_only(os.fspath(path))
    except SQLITE_ERRORS as e:
        raise CorruptTokenizerError(
            f"{where} cannot be opened as a run store: {sqlite_message(e)}"
        ) from None
    try:
        conn.text_factory = builtins.bytes  # text is decoded by the checks, naming the row
        conn.execute("BEGIN")  # one consistent state, also while a run commits
        return _read(conn, where, with_snapshot)
    except SQLITE_ERRORS as e:
        if "readonly" in sqlite_message(e):
            raise StoreError(
                f"{where} cannot be read without writing beside it, which loading never "
                f"does: a run is writing it from a read-only directory, or one was killed "
                f"mid-transaction ({e}). Training with this store again, once no run "
                f"writes it, recovers it."
            ) from None
        raise CorruptTokenizerError(
            f"{where} is not a readable run store: {sqlite_message(e)}"
        ) from None
    finally:
        conn.close()


# Python's sqlite3 decodes SQLite's messages as UTF-8; one that quotes a damaged schema
# is not, and comes as a UnicodeDecodeError instead of an sqlite3.Error.
SQLITE_ERRORS = (sqlite3.Error, UnicodeDecodeError)


def is_damage(e: Exception) -> bool:
    """True when SQLite found the file damaged (SQLITE_CORRUPT, SQLITE_NOTADB)."""
    code = getattr(e, "sqlite_errorcode", None)  # Python 3.11+
    if code is not None:
        return code & 0xFF in (11, 26)
    message = sqlite_message(e)
    return isinstance(e, UnicodeDecodeError) or "malformed" in message or "not a database" in message


def sqlite_message(e: Exception) -> str:
    if isinstance(e, UnicodeDecodeError) and isinstance(e.object, builtins.bytes):
        return e.object.decode("utf-8", "replace")
    return str(e)


def _connect_read_only(path: str) -> sqlite3.Connection:
    """A connection that never writes: not the store, and no `-wal`/`-shm` files beside it.

    When no run can be writing the store (its lock is not held) and no write-ahead log is
    pending, the file is opened `immutable` (no locking, no shared-memory file, so a
    read-only directory works too). Otherwise (a run writes it now, or a killed run left a
    log whose commits only SQLite's WAL reader sees) it is opened `mode=ro`, which must
    share the writer's `-shm` file and reads every committed transaction."""
    if _no_writer(path):
        return sqlite3.connect(read_only_uri(path, immutable=True), uri=True)
    return sqlite3.connect(read_only_uri(path), uri=True)


def read_only_uri(path: str | os.PathLike[str], *, immutable: bool = False) -> str:
    """An SQLite URI that opens `path` read-only. The name is percent-encoded from its
    bytes, so `?`, `#`, `%` and names that are not UTF-8 open the file they name."""
    name = urllib.parse.quote(os.fsencode(os.path.abspath(path)))
    return f"file:{name}?mode=ro" + ("&immutable=1" if immutable else "")


def _no_writer(path: str) -> bool:
    """True when no training run holds the store's lock, no write-ahead log is pending and
    no rollback journal is left (a run killed in its first transaction, before the store
    took the log: `immutable` would read its half-written pages). A run takes the lock
    before it opens SQLite, so this holds for the whole read unless a run starts
    meanwhile; such a run appends to the log and leaves the main file alone until a
    checkpoint, and a damaged read is refused by `integrity_check`."""
    if os.path.exists(path + "-journal"):
        return False
    try:
        if os.path.getsize(path + "-wal") > 0:
            return False
    except OSError:
        pass  # no log
    return not store_lock.is_held(path)


def _read(conn: sqlite3.Connection, where: str, with_snapshot: bool) -> StoredRun:
    # integrity_check, not quick_check: it also compares the key indexes with their tables,
    # which a resumed run writes through (quick_check passed a store whose first write
    # then failed as malformed). The big tables have no index, so it costs about the same.
    check = conn.execute("PRAGMA integrity_check(1)").fetchone()[0]
    if check != b"ok":
        raise CorruptTokenizerError(f"{where} is damaged: {check.decode(errors='replace')}")
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if b"meta" not in tables:
        raise CorruptTokenizerError(f"{where} is an SQLite file but not a bytebpe run store")
    meta = _read_meta(conn, where)
    for table in TABLES:
        if table.encode() not in tables:
            raise damaged(where, f"table {table}", "it is missing")
    run = StoredRun(meta=meta, where=where)
    _read_counting(conn, run, with_snapshot)
    _read_ledger(conn, run)
    _read_merges(conn, run)
    _check_whole(run)
    return run


def _read_meta(conn: sqlite3.Connection, where: str) -> dict[str, str]:
    """The meta rows, their sums checked once the header says the store has them."""
    columns = {r[1] for r in conn.execute("PRAGMA table_info(meta)")}
    summed = b"sum" in columns
    query = "SELECT key, value, sum FROM meta" if summed else "SELECT key, value, 0 FROM meta"
    meta: dict[str, str] = {}
    rows = []
    for key, value, stored in conn.execute(query):
        check = RowChecker(where, f"meta row {shown(key)}")
        name, text = check.text("key", key), check.text("value", value)
        meta[name] = text
        rows.append((check, name, text, stored))
    ours = meta.get("format") == FORMAT
    for check, name, text, stored in rows if summed else ():
        if stored != row_sum("meta", name, text) and (ours or name == "format"):
            check.sum(stored, row_sum("meta", name, text), "key, value")
    if not ours:
        raise CorruptTokenizerError(f"{where} is an SQLite file but not a bytebpe run store")
    _check_header(meta.get("version"), summed, where)
    for key in META_KEYS:
        if key not in meta:
            raise damaged(where, f"meta row {shown(key)}", "it is missing")
    return meta


def _check_header(version: str | None, summed: bool, where: str) -> None:
    """Refuses another store version. Version 1 stores (bytebpe before row checksums)
    are not read: a damaged one could load or resume as another tokenizer without an
    error, which is what the checksums exist to prevent."""
    if version == "1" and not summed:
        raise CorruptTokenizerError(
            f"{where} is a run store of an earlier bytebpe (store version 1, whose rows "
            f"carry no checksums); this bytebpe reads version {VERSION} only, since damage "
            "to a version-1 store cannot be detected. To keep a finished run, load it with "
            "the bytebpe that wrote it and save the tokenizer as a file "
            "(Tokenizer.load(store).save('tokenizer.json')); to go on training, start again "
            "with a new store path"
        )
    if version != str(VERSION) or not summed:
        raise CorruptTokenizerError(
            f"{where} has store version {version}; this bytebpe reads version {VERSION} "
            "(a newer bytebpe wrote it? upgrade bytebpe)"
        )


def _read_counting(conn: sqlite3.Connection, run: StoredRun, with_snapshot: bool) -> None:
    row = conn.execute(
        "SELECT documents, bytes, fingerprint, finished, updated, snapshot_sum, sum FROM counting"
    ).fetchone()
    if row is None:
        return
    check = RowChecker(run.where, "counting row")
    documents, nbytes, fingerprint, finished, updated, snapshot_sum, stored = row
    run.documents = check.integer("documents", documents)
    run.bytes = check.integer("bytes", nbytes)
    fingerprint_text = check.text("fingerprint", fingerprint)
    run.fingerprint = check.u64_text("fingerprint", fingerprint_text)
    run.counting_finished = bool(check.integer("finished", finished, 2))
    run.counting_updated = check.real("updated", updated)
    check.integer("snapshot_sum", snapshot_sum, 2**32)
    fields = (run.documents, run.bytes, fingerprint_text, int(finished), updated, snapshot_sum)
    check.sum(stored, row_sum("counting", *fields),
              "documents, bytes, fingerprint, finished, updated, snapshot_sum")
    if with_snapshot:
        run.snapshot = _read_snapshot(conn, run.where, snapshot_sum)


def _read_snapshot(conn: sqlite3.Connection, where: str, head: int) -> builtins.bytes:
    """The snapshot's chunks, each checked against its chained sum; the chain must end
    at the counting row's `snapshot_sum` (no chunk missing, none from another one)."""
    chunks = []
    chain = 0
    for expected, (chunk, data, stored) in enumerate(
        conn.execute("SELECT chunk, data, sum FROM snapshot ORDER BY chunk")
    ):
        check = RowChecker(where, f"snapshot chunk {shown(chunk)}")
        if chunk != expected:
            raise damaged(where, f"snapshot chunk {expected}", "it is missing")
        chunks.append(check.blob("data", data))
        chain = chunk_sum(chain, chunk, chunks[-1])
        check.sum(stored, chain, "data")
    if chain != head or not chunks:
        raise damaged(
            where, "snapshot",
            f"its {len(chunks)} chunks are not the ones the counting row names (some are "
            "missing or from another checkpoint)",
        )
    return b"".join(chunks)


def _read_ledger(conn: sqlite3.Connection, run: StoredRun) -> None:
    for name, value, stored in conn.execute("SELECT name, value, sum FROM ledger"):
        check = RowChecker(run.where, f"ledger row {shown(name)}")
        key = check.text("name", name)
        text = check.text("value", value)
        run.ledger[key] = check.parsed("value", text)
        check.sum(stored, row_sum("ledger", key, text), "name, value")


def _read_merges(conn: sqlite3.Connection, run: StoredRun) -> None:
    """The merge log: each row's values, its token bytes (the bytes of its parts joined)
    and its sum (chained). The ids' order rule is checked where the log is replayed
    (`Vocab::extend` when loading, the merge loop when resuming).

    This loop is most of a load, so the common row takes one path of local names: its
    values' types and ranges in one expression, its token a new id joined from two
    tokens in the table, its sum computed inline (what `merge_sum` computes). Any other
    row goes through the checks that name the field (`_checked_merge`,
    `TokenTable.join`); a row that fails is read again by them for the message."""
    table = TokenTable.of_start(
        run.meta.get("start_state"), RowChecker(run.where, "meta row 'start_state'")
    )
    tokens, join = table.tokens, table.join
    chain = 0
    earliest, latest = math.inf, -math.inf  # the merges' times, read in the same pass
    merges: list[MergeEntry] = []
    append, add_token = merges.append, tokens.append
    pack, crc32, u32, i64, blob = MERGE_ROW.pack, zlib.crc32, U32, I64, builtins.bytes
    rows = conn.execute(
        "SELECT rank, left_id, right_id, token_id, token, count, phase, time, sum "
        "FROM merges ORDER BY rank"
    )
    for expected, (rank, left, right, token, data, count, phase, when, stored) in enumerate(rows):
        if not (
            rank == expected and type(left) is int and 0 <= left < u32
            and type(right) is int and 0 <= right < u32 and type(token) is int
            and 0 <= token < u32 and type(data) is blob and type(count) is int
            and 0 <= count < i64 and type(phase) is int and 0 <= phase < i64
            and type(when) is float and when - when == 0.0  # finite
        ):
            left, right, token, count = _checked_merge(
                run.where, expected, (rank, left, right, token, data, count, phase, when))
        n = len(tokens)
        if token == n and left < n and right < n and tokens[left] and tokens[right]:
            new = tokens[left] + tokens[right]
            add_token(new)
            joined: builtins.bytes | str = new
        else:  # an existing token, ids skipped for special tokens, or a bad row
            joined = join(left, right, token)
        chain = crc32(data, crc32(pack(rank, left, right, token, count, phase, when,
                                       len(data)), chain))
        if joined != data or chain != stored:
            check = RowChecker(run.where, f"merges rank {rank}")
            if joined != data:
                raise check.fail(joined if isinstance(joined, str) else (
                    "its token bytes are not the bytes of left_id and right_id joined (one "
                    "of the three was changed)"
                ))
            check.sum(stored, chain, "left_id, right_id, token_id, token, count, phase, time")
        append((left, right, token, count))
        if when < earliest:
            earliest = when
        if when > latest:
            latest = when
    run.merges = merges
    run.merges_sum = chain
    run.tokens = table
    if merges:
        run.merge_times = (earliest, latest)


def _checked_merge(where: str, expected: int, row: tuple[Any, ...]) -> tuple[int, int, int, int]:
    """A merge row's values checked one by one: raises naming the first bad one, or
    returns (left, right, token, count) (a count from 2**63 is stored as text)."""
    rank, left, right, token, data, count, phase, when = row
    if rank != expected:
        raise damaged(where, f"merges rank {expected}", "it is missing")
    check = RowChecker(where, f"merges rank {rank}")
    ids = [check.integer(name, value, U32)
           for name, value in (("left_id", left), ("right_id", right), ("token_id", token))]
    check.blob("token", data)
    value = check.u64("count", count)
    check.integer("phase", phase)
    check.real("time", when)
    return ids[0], ids[1], ids[2], value


def _check_whole(run: StoredRun) -> None:
    """What rows say about each other: the settings, the finished log's length, the
    start's digest, the ledger the counting row needs."""
    meta, where = run.meta, run.where
    check = RowChecker(where, "meta row 'special_tokens'")
    specials = check.parsed("value", meta["special_tokens"])
    if not (isinstance(specials, list) and all(isinstance(t, str) for t in specials)):
        raise check.fail("it is not a list of strings")
    complete = meta["complete"]
    if complete not in ("0", "1"):
        raise damaged(where, "meta row 'complete'", f"it is {complete!r}, not '0' or '1'")
    if complete == "1" and meta.get("merges") != str(len(run.merges)):
        raise damaged(
            where, "merges",
            f"the log has {len(run.merges)} merges, but the finished run wrote "
            f"{meta.get('merges')}",
        )
    start = meta["start"]
    state = meta.get("start_state")
    if (state is None) != (start == "") or (
        state is not None and hashlib.sha256(state.encode()).hexdigest() != start
    ):
        raise damaged(where, "meta row 'start_state'", "it is not the tokenizer 'start' names")
    if run.fingerprint is not None:
        counted = run.ledger.get("counting")
        if not isinstance(counted, dict) or (
            counted.get("documents"), counted.get("bytes")) != (run.documents, run.bytes):
            raise damaged(
                where, "ledger row 'counting'",
                "it is missing or does not match the counting row",
            )
