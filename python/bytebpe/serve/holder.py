"""The vocabulary being served, and how it is replaced without failing a request.

`VocabularyHolder` keeps one reference to an immutable `Served` snapshot. A poller thread
watches the source: a run store by the number of merges it has committed (one indexed
query on a short-lived read-only connection; see `_store_key` for why not a long-lived
one), any file by its stat (device, inode, mtime, size), so a file replaced atomically
(`os.replace`) is seen. A change is
loaded and verified on that thread, off the request path, and swapped in by assigning
one attribute; a request holds the snapshot it started with until it ends. A reload that
fails (corrupt or half-written file, failed verification) keeps the old snapshot serving
and is reported to the `on_reload` callback (metrics and logs).

Earlier versions: the last few snapshots are kept; an earlier prefix of a run store is
loaded from the store itself (`Tokenizer.load(store, vocab_size=...)`) and checked
against the version asked for.
"""

from __future__ import annotations

import collections
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bytebpe import Tokenizer, loading
from bytebpe.errors import CorruptTokenizerError
from bytebpe.serve import version as versions
from bytebpe.store import SQLITE_ERRORS, is_store_file
from bytebpe.store_read import read_only_uri

KINDS = ("store", "bytebpe", "huggingface", "tiktoken")


class VersionUnavailable(Exception):
    """A pinned version that this service cannot serve any more (or never could)."""


@dataclass(frozen=True)
class Served:
    """One loaded vocabulary and what requests need to know about it. Immutable."""

    tokenizer: Tokenizer
    version: versions.Version
    kind: str
    loaded_at: float
    special_ids: dict[int, str]
    valid_end: int
    """Every id below this is a token, except those in `gaps`."""
    gaps: frozenset[int]
    name: str = ""
    """The version's name (set from `version`)."""
    _bytes_table: list[bytes | None] = field(default_factory=list, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", self.version.name)

    @property
    def special_texts(self) -> frozenset[str]:
        # Made on each use: callers keep it for a request, and the rules' regex is cached
        # by the set's value (`special_policy.first_in`).
        return frozenset(self.special_ids.values())

    @property
    def vocab_size(self) -> int:
        return self.tokenizer.vocab_size

    def is_valid_id(self, token: int) -> bool:
        return 0 <= token < self.valid_end and token not in self.gaps

    def token_bytes_table(self) -> list[bytes | None]:
        """id -> bytes (special tokens give their text), built on first use."""
        if not self._bytes_table:
            table: list[bytes | None] = [None] * self.valid_end
            for token, token_id in self.tokenizer.mergeable_ranks().items():
                table[token_id] = token
            for token_id, text in self.special_ids.items():
                table[token_id] = text.encode("utf-8", "surrogatepass")
            self._bytes_table.extend(table)  # a racing second build writes the same table
            del self._bytes_table[len(table):]
        return self._bytes_table


def make_served(tok: Tokenizer, kind: str) -> Served:
    ranks = tok.mergeable_ranks()
    special_ids = {token_id: text for text, token_id in tok.special_tokens.items()}
    ids = set(ranks.values()) | set(special_ids)
    valid_end = max(ids) + 1 if ids else 0
    gaps = frozenset(set(range(valid_end)) - ids) if len(ids) != valid_end else frozenset()
    return Served(tok, versions.vocabulary_version(tok), kind, time.time(), special_ids,
                  valid_end, gaps)


def load(path: str, kind: str | None = None) -> tuple[Tokenizer, str]:
    """Reads `path` (once) with the loader its kind needs; returns (tokenizer, kind).
    `kind` insists on one kind: another is refused."""
    if kind is not None and kind not in KINDS:
        raise ValueError(f"kind={kind!r}; choose one of {', '.join(KINDS)}")
    file = loading.read(path)
    if kind is not None and file.kind != kind:
        raise CorruptTokenizerError(f"{path!r} is a {file.kind} file, not {kind}")
    return Tokenizer(*loading.build(file)), file.kind


def load_verified(path: str, kind: str | None = None) -> Served:
    """Loads and verifies; a vocabulary with problems raises ValueError listing them."""
    tok, kind = load(path, kind)
    problems = tok.verify()
    if problems:
        shown = "; ".join(problems[:3])
        raise ValueError(f"{path}: verification found {len(problems)} problem(s): {shown}")
    return make_served(tok, kind)


@dataclass(frozen=True)
class ReloadResult:
    result: str
    """"success" (a new version is serving), "unchanged" or "failure"."""
    version: str
    """The version serving after the reload."""
    previous: str
    seconds: float
    reason: str
    error: str | None = None


def _stat_key(path: str) -> tuple[int, ...] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size)


def _store_key(path: str) -> Any:
    """What a run store holds that decides its ids: the number of merges committed, read
    through a short-lived read-only connection.

    Not `PRAGMA data_version` on a long-lived connection: SQLite shares one wal-index
    mapping between all connections of a process to the same file, and a connection kept
    open across a writer's close (which deletes the -wal and -shm files) and reopen made
    every later connection of this process read a stale index ("database disk image is
    malformed"). A connection that lives for one query does not outlive the files.
    """
    try:
        conn = sqlite3.connect(read_only_uri(path), uri=True, isolation_level=None)
    except SQLITE_ERRORS as e:
        return ("unopenable", str(e))
    try:
        (merges,) = conn.execute("SELECT coalesce(max(rank) + 1, 0) FROM merges").fetchone()
        return ("merges", merges)
    except SQLITE_ERRORS as e:  # a damaged store is reloaded, and refused, by the loader
        return ("unreadable", str(e))
    finally:
        conn.close()


class VocabularyHolder:
    """The current vocabulary of one source path, reloaded when the path changes.

    `current` is read without a lock (one attribute); reloads are serialized by a lock.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        kind: str | None = None,
        poll_interval: float = 0.1,
        keep_versions: int = 8,
        trigger_file: str | None = None,
        watch_source: bool = True,
        on_reload: Callable[[ReloadResult], None] | None = None,
    ) -> None:
        """`poll_interval` 0 starts no poller. With `watch_source=False` the poller
        watches only `trigger_file` (reloads on demand, in every worker)."""
        self.path = os.fspath(path)
        self.watch_source = watch_source
        self.kind = kind
        self.poll_interval = poll_interval
        self.trigger_file = trigger_file
        self.on_reload = on_reload
        self._reload_lock = threading.Lock()
        self._pin_lock = threading.Lock()
        self._keep = keep_versions
        self._recent: collections.OrderedDict[str, Served] = collections.OrderedDict()
        self._prefix_hashes: collections.OrderedDict[tuple[str, int], str] = (
            collections.OrderedDict())
        self._missing: collections.OrderedDict[str, str] = collections.OrderedDict()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._retry_delay = 0.0
        self._retry_at = 0.0
        self._seen_key = self._source_key()
        self._seen_trigger = self._trigger_key()
        self.current: Served = load_verified(self.path, kind)
        self._remember(self.current)

    # ---------------------------------------------------------------- watching

    def _source_key(self) -> Any:
        keys: list[Any] = [_stat_key(self.path)]
        if self.kind == "store" or (self.kind is None and _is_store(self.path)):
            keys.append(_store_key(self.path))
        if self.path.endswith(".tiktoken"):
            keys.append(_stat_key(self.path + ".json"))  # the sidecar: pattern, specials
        return tuple(keys)

    def _trigger_key(self) -> Any:
        return _stat_key(self.trigger_file) if self.trigger_file else None

    def note_trigger(self) -> None:
        """This worker changed the trigger file itself (it has reloaded already)."""
        self._seen_trigger = self._trigger_key()

    def start(self) -> None:
        """Starts the poller thread (idempotent)."""
        if self._thread is None and self.poll_interval > 0:
            self._stop.clear()
            self._thread = threading.Thread(target=self._poll, name="bytebpe-reload",
                                             daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def _poll(self) -> None:
        while not self._stop.wait(self.poll_interval):
            trigger = self._trigger_key()
            if trigger != self._seen_trigger:  # another worker's admin reload
                self._seen_trigger = trigger
                self.reload("admin (another worker)")
                continue
            if not self.watch_source:
                continue
            try:
                key = self._source_key()
            except Exception:  # a watch error must not end the poller
                continue
            if key != self._seen_key:
                self.reload("changed", key=key)
            elif self._retry_at and time.monotonic() >= self._retry_at:
                self.reload("retry", key=key)

    # ---------------------------------------------------------------- reloading

    def reload(self, reason: str = "admin", *, key: Any = None) -> ReloadResult:
        """Loads and verifies the source, then swaps it in. Never raises: a failure keeps
        the current vocabulary and is returned (and reported) as such."""
        with self._reload_lock:
            if key is None:
                key = self._source_key()
            self._seen_key = key
            old = self.current
            start = time.perf_counter()
            try:
                new = load_verified(self.path, self.kind)
            except Exception as e:  # any load error keeps the old one serving
                result = ReloadResult("failure", old.name, old.name,
                                      time.perf_counter() - start, reason,
                                      f"{type(e).__name__}: {e}")
                # Retried without a change too (a read can fail transiently), backing off
                # from 0.5 s to a minute so a broken file is not reloaded in a loop.
                self._retry_delay = min(max(self._retry_delay * 2, 0.5), 60.0)
                self._retry_at = time.monotonic() + self._retry_delay
            else:
                self._retry_delay = self._retry_at = 0.0
                if new.version == old.version:
                    result = ReloadResult("unchanged", old.name, old.name,
                                          time.perf_counter() - start, reason)
                else:
                    self.current = new  # the swap: one reference
                    self._remember(new)
                    result = ReloadResult("success", new.name, old.name,
                                          time.perf_counter() - start, reason)
        if self.on_reload is not None:
            try:
                self.on_reload(result)
            except Exception:  # reporting must not break reloading
                pass
        return result

    def _remember(self, served: Served) -> None:
        with self._pin_lock:
            self._recent[served.name] = served
            self._recent.move_to_end(served.name)
            while len(self._recent) > self._keep:
                self._recent.popitem(last=False)

    # ---------------------------------------------------------------- pinning

    def cached(self, name: str) -> Served | None:
        """The snapshot of version `name` if it is at hand without loading."""
        current = self.current
        if name == current.name:
            return current
        with self._pin_lock:
            return self._recent.get(name)

    def resolve(self, name: str) -> Served:
        """The snapshot serving version `name` exactly. May read the store (blocking: call
        it off the event loop). Raises ValueError for a malformed name, VersionUnavailable
        for one that cannot be served."""
        merges, digest = versions.parse(name)
        served = self.cached(name)
        if served is not None:
            return served
        current = self.current
        later = merges >= current.version.merges
        if later and current.kind != "store":
            raise VersionUnavailable(
                f"version {name} is not a prefix of the vocabulary serving now "
                f"({current.name}); it may be a later or a replaced vocabulary"
            )
        if not later and self._prefix_hash(current, merges) != digest:
            raise VersionUnavailable(
                f"version {name} is not a prefix of the vocabulary serving now "
                f"({current.name}): the source was replaced by a different vocabulary"
            )
        if current.kind != "store":
            raise VersionUnavailable(
                f"version {name} is an earlier prefix of {current.name}, but only a run store "
                f"keeps earlier prefixes and this source is a {current.kind} file"
            )
        # A prefix of the store: an earlier one, or one that another worker (or the
        # store) already has and this worker has not reloaded yet.
        with self._pin_lock:  # one store read at a time; the second caller finds it cached
            served = self._recent.get(name)
            if served is not None:
                return served
            if name in self._missing:
                raise VersionUnavailable(self._missing[name])
            stored = _store_key(self.path)
            if stored[0] == "merges" and merges > stored[1]:
                raise VersionUnavailable(f"version {name} is not in the store (it has "
                                         f"{stored[1]} merges)")
            vocab_size = versions.vocab_size_for(current.tokenizer, merges)
            try:
                tok = Tokenizer.load(self.path, vocab_size=vocab_size)
            except Exception as e:  # a replaced or damaged store
                raise VersionUnavailable(f"version {name}: reading the store failed: {e}") from None
            served = make_served(tok, "store")
            if served.name != name:
                message = (f"version {name} is not in the store (its first {merges} merges "
                           f"are {served.name})" if served.version.merges == merges else
                           f"version {name} is not in the store (it has "
                           f"{served.version.merges} merges)")
                if served.version.merges == merges:  # a different prefix: final
                    self._missing[name] = message
                    while len(self._missing) > 256:
                        self._missing.popitem(last=False)
                raise VersionUnavailable(message)
            self._recent[name] = served
            while len(self._recent) > self._keep:
                self._recent.popitem(last=False)
            return served

    def _prefix_hash(self, current: Served, merges: int) -> str:
        key = (current.name, merges)
        with self._pin_lock:
            digest = self._prefix_hashes.get(key)
        if digest is None:
            digest = versions.prefix_version(current.tokenizer, merges).sha256[
                : versions.HASH_DIGITS]
            with self._pin_lock:
                self._prefix_hashes[key] = digest
                while len(self._prefix_hashes) > 64:
                    self._prefix_hashes.popitem(last=False)
        return digest


def _is_store(path: str) -> bool:
    try:
        return is_store_file(path)
    except OSError:
        return False
