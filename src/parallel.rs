//! The one place that owns Rayon thread pools.
//!
//! Rayon's global pool does not survive `fork`: a forked child sees a pool whose threads
//! do not exist and would deadlock on first use. Pools here are keyed by process id and
//! rebuilt in a new process, so a tokenizer used in a parent still works in forked
//! `DataLoader` workers.

use std::sync::{Arc, Mutex};

use rayon::{ThreadPool, ThreadPoolBuilder};

struct Pools {
    /// The process the pools were built in.
    pid: u32,
    /// One pool per requested thread count, built on first use.
    by_threads: Vec<(usize, Arc<ThreadPool>)>,
}

static POOLS: Mutex<Option<Pools>> = Mutex::new(None);

/// The number of threads used when the caller does not say.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A pool with `threads` workers (default: all cores) that belongs to this process.
pub fn pool(threads: Option<usize>) -> Arc<ThreadPool> {
    let threads = threads.unwrap_or_else(default_threads).max(1);
    let pid = std::process::id();
    // A poisoned lock only means another thread panicked while holding it; the map is
    // still consistent (every write is a single push or replace).
    let mut guard = POOLS.lock().unwrap_or_else(|e| e.into_inner());
    if guard.as_ref().is_some_and(|p| p.pid != pid) {
        // Inherited from the parent: its worker threads do not exist here. Dropping the
        // pools would wait on them, so they are leaked on purpose (once per fork).
        std::mem::forget(guard.take());
    }
    let pools = guard.get_or_insert_with(|| Pools { pid, by_threads: Vec::new() });
    if let Some((_, pool)) = pools.by_threads.iter().find(|(n, _)| *n == threads) {
        return pool.clone();
    }
    let pool = Arc::new(
        ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("bytebpe-{i}"))
            .build()
            .expect("building a thread pool"),
    );
    pools.by_threads.push((threads, pool.clone()));
    pool
}
