"""The run store's lock: one `<store>.lock` file beside the store's real path, held
exclusively by the run writing the store and removed when it ends. POSIX: `flock` (tied
to the open file, so no other descriptor of the process can drop it, unlike `fcntl`
locks); Windows: `msvcrt.locking`. A lock file left by a killed run holds no lock and is
reused."""

from __future__ import annotations

import contextlib
import os
import sys
from typing import IO

from bytebpe.errors import StoreError


def is_held(path: str) -> bool:
    """True when a training run may be writing the store at `path` (its lock is held, or
    cannot be checked: on Windows, or when the lock file cannot be opened)."""
    try:
        f = open(_lock_path(path))  # noqa: SIM115 -- closed below
    except FileNotFoundError:
        return False  # runs create the lock file before anything else
    except OSError:
        return True
    try:
        if sys.platform == "win32":
            return True  # a lock file there may be held; read through SQLite's locking
        return not _try_lock(f, shared=True)
    finally:
        f.close()


class StoreLock:
    """An exclusive lock on `<store>.lock`, held while a run writes the store, removed
    when it ends. POSIX: `flock` (tied to the open file, so no other descriptor of the
    process can drop it, unlike `fcntl` locks); Windows: `msvcrt.locking`. A lock file
    left by a killed run holds no lock and is reused."""

    def __init__(self, f: IO[str], path: str) -> None:
        self.f = f
        self.path = path

    def close(self) -> None:
        # Removed while still held, so a run that opened the file in the meantime sees it
        # is no longer the lock file (see `acquire`) and takes a new one.
        if sys.platform != "win32":
            with contextlib.suppress(OSError):
                os.remove(self.path)
        self.f.close()
        if sys.platform == "win32":  # an open file cannot be removed there; another run may hold it
            with contextlib.suppress(OSError):
                os.remove(self.path)


def _try_lock(f: IO[str], *, shared: bool = False) -> bool:
    """Takes the lock without waiting (shared: only to see whether a run holds it, POSIX
    only); False when another process holds it."""
    if sys.platform == "win32":
        import msvcrt

        f.seek(0)
        try:
            msvcrt.locking(f.fileno(), msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(f, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def _lock_path(path: str) -> str:
    """The lock file of the store at `path`, beside the file it names after symlinks are
    resolved: every path to one store (a symlink to it, or through a linked directory)
    finds the same lock."""
    return os.path.realpath(path) + ".lock"


def acquire(path: str) -> StoreLock:
    """The run's exclusive lock on the store at `path`; StoreError when another run holds it."""
    lock_path = _lock_path(path)
    while True:
        try:
            f = open(lock_path, "a+")  # noqa: SIM115 -- held open for the run, closed by StoreLock
        except OSError as e:
            raise StoreError(f"cannot create the run store {path!r}: {e}") from None
        if not _try_lock(f):
            try:
                f.seek(0)
                holder = f.read().strip() or "another process"
            except OSError:  # Windows: the holder's lock covers what it wrote
                holder = "another process"
            f.close()
            raise StoreError(
                f"the run store {path!r} is in use by another training run ({holder}); "
                "wait for it to finish, or use another path"
            ) from None
        # The run before may have removed the file between our open and our lock: then
        # this lock is on a file nobody else will see; start again with the path's file.
        try:
            same = os.path.samestat(os.fstat(f.fileno()), os.stat(lock_path))
        except OSError:
            same = False
        if same:
            break
        f.close()
    f.seek(0)
    f.truncate()
    f.write(f"pid {os.getpid()}")
    f.flush()
    return StoreLock(f, lock_path)
