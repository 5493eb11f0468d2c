//! The one place that owns Rayon thread pools.
//!
//! Rayon's global pool does not survive `fork`: a forked child sees a pool whose threads
//! do not exist and would deadlock on first use. Pools here are keyed by process id and
//! rebuilt in a new process, so a tokenizer used in a parent still works in forked
//! `DataLoader` workers.
//!
//! Thread counts are bounded by [`MAX_THREADS`], and at most [`MAX_POOLS`] pools are kept
//! (the least recently used one is dropped, which ends its threads), so calls with many
//! different thread counts never pile up OS threads. A pool that cannot be built is an
//! error for the caller ([`checked`]), never a panic.

use std::sync::{Arc, Mutex};

use rayon::{ThreadPool, ThreadPoolBuilder};

use crate::error::{Error, Result};

/// The largest thread count accepted: far above any useful count on one machine.
pub const MAX_THREADS: usize = 1024;

/// Pools kept at once (one per recently used thread count).
pub const MAX_POOLS: usize = 4;

struct Pools {
    /// The process the pools were built in.
    pid: u32,
    /// Pools by thread count, the most recently used last.
    by_threads: Vec<(usize, Arc<ThreadPool>)>,
}

static POOLS: Mutex<Option<Pools>> = Mutex::new(None);

/// The number of threads used when the caller does not say.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get()).min(MAX_THREADS)
}

/// Refuses a thread count outside 1..=[`MAX_THREADS`].
pub fn check_threads(threads: Option<usize>) -> Result<usize> {
    match threads {
        None => Ok(default_threads()),
        Some(n) if (1..=MAX_THREADS).contains(&n) => Ok(n),
        Some(n) => Err(Error::InvalidConfig(format!(
            "num_threads={n} is out of range: use 1 to {MAX_THREADS}"
        ))),
    }
}

/// A pool with `threads` workers (default: all cores) that belongs to this process, or
/// an error if the count is out of range or the pool cannot be built (thread limits,
/// memory). Entry points call this first, so the [`pool`] calls inside cannot fail.
pub fn checked(threads: Option<usize>) -> Result<Arc<ThreadPool>> {
    let threads = check_threads(threads)?;
    let pid = std::process::id();
    // A poisoned lock only means another thread panicked while holding it; the list is
    // still consistent (every write is a single push, remove or replace).
    let mut guard = POOLS.lock().unwrap_or_else(|e| e.into_inner());
    if guard.as_ref().is_some_and(|p| p.pid != pid) {
        // Inherited from the parent: its worker threads do not exist here. Dropping the
        // pools would wait on them, so they are leaked on purpose (once per fork).
        std::mem::forget(guard.take());
    }
    let pools = guard.get_or_insert_with(|| Pools { pid, by_threads: Vec::new() });
    if let Some(at) = pools.by_threads.iter().position(|(n, _)| *n == threads) {
        let entry = pools.by_threads.remove(at);
        let pool = entry.1.clone();
        pools.by_threads.push(entry);
        return Ok(pool);
    }
    let pool = ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("bytebpe-{i}"))
        .build()
        .map_err(|e| {
            Error::InvalidConfig(format!("cannot start a pool of {threads} threads: {e}"))
        })?;
    let pool = Arc::new(pool);
    if pools.by_threads.len() >= MAX_POOLS {
        // Dropping the last reference ends the pool's threads once their work is done.
        pools.by_threads.remove(0);
    }
    pools.by_threads.push((threads, pool.clone()));
    Ok(pool)
}

/// The pool of [`checked`]; falls back to fewer threads if it cannot be built (the
/// result never depends on the thread count), panicking only if not even one thread
/// can be started.
pub fn pool(threads: Option<usize>) -> Arc<ThreadPool> {
    let threads = threads.unwrap_or_else(default_threads).clamp(1, MAX_THREADS);
    checked(Some(threads))
        .or_else(|_| checked(Some(1)))
        .expect("starting a thread pool of one thread")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_counts_are_bounded() {
        for n in [0, MAX_THREADS + 1, 10_000, usize::MAX] {
            assert!(matches!(checked(Some(n)), Err(Error::InvalidConfig(_))), "{n}");
        }
        assert_eq!(checked(Some(2)).unwrap().current_num_threads(), 2);
    }

    #[test]
    fn at_most_a_few_pools_are_kept() {
        for n in 1..=MAX_POOLS + 3 {
            checked(Some(n)).unwrap();
        }
        let guard = POOLS.lock().unwrap_or_else(|e| e.into_inner());
        assert!(guard.as_ref().unwrap().by_threads.len() <= MAX_POOLS);
    }
}
