//! Helper threads that take a share of a loop's parallel work without the caller ever
//! waiting for them to start.
//!
//! The merge loop hands out parallel work hundreds of times a second (a large merge's
//! words, 0.1-10 ms each), from the thread Python called in on. A Rayon pool's idle
//! workers sleep, and `install` puts the caller to sleep too: on the 2-core VM of
//! benches/RESULTS.md ("the helper thread") a sleeping worker started 1-3.5 ms late in
//! many merges, or not before the other had done every chunk, so the rewrites ran at
//! 1.36x one thread's speed on two. Here the caller works through the items itself while
//! helpers, which spin for [`SPIN`] after each job before they park, take items as they
//! come: the caller waits only for items a helper has already taken, never for a helper
//! to wake up.
//!
//! Items are claimed from one counter tagged with the job's number, so a helper that
//! wakes after its job ended claims nothing; the caller returns only when every claimed
//! item is done. That is what makes lending the job (which borrows the caller's stack)
//! to the helper threads sound: see [`Helpers::run`].

use std::any::Any;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::*};
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How long a helper stays awake after a job, looking for the next one. A large merge
/// follows the last within about a millisecond early in training; later ones are rarer
/// and the helper parks (a bounded spin: at most this much CPU per job that it misses).
pub const SPIN: Duration = Duration::from_micros(500);

/// A job lent to the helpers: runs item `i` (`i < len`).
type Job = &'static (dyn Fn(usize) + Sync);

/// What the caller posts to the helpers, under the lock.
#[derive(Default)]
struct Posted {
    /// The number of the latest job (0: none yet).
    epoch: u32,
    /// The latest job and its item count, while the caller runs it.
    job: Option<(Job, usize)>,
    /// Set when the helpers should exit.
    stop: bool,
}

/// State shared by the caller and its helpers.
#[derive(Default)]
struct Shared {
    posted: Mutex<Posted>,
    wake: Condvar,
    /// `Posted::epoch`, read while spinning without the lock.
    latest: AtomicU64,
    /// `epoch << 32 | next item`: an item is taken by raising it, and only by a thread
    /// that read the job's own epoch there.
    claim: AtomicU64,
    /// Items of the current job finished (by anyone).
    done: AtomicUsize,
    /// The first panic of a helper's item, re-raised on the caller.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
}

impl Shared {
    /// Takes the next item of job `epoch` (of `len` items), if any is left.
    fn take(&self, epoch: u32, len: usize) -> Option<usize> {
        let mut seen = self.claim.load(Acquire);
        loop {
            let next = (seen & u64::from(u32::MAX)) as usize;
            if (seen >> 32) as u32 != epoch || next >= len {
                return None;
            }
            match self.claim.compare_exchange_weak(seen, seen + 1, AcqRel, Acquire) {
                Ok(_) => return Some(next),
                Err(now) => seen = now,
            }
        }
    }

    /// A helper's life: wait for a job, take its items until none is left, repeat.
    fn serve(&self) {
        let mut served = 0u32;
        loop {
            let spun = Instant::now();
            'spin: while spun.elapsed() < SPIN {
                // The clock is read once per 64 looks at the job number.
                for _ in 0..64 {
                    if self.latest.load(Acquire) != u64::from(served) {
                        break 'spin;
                    }
                    std::hint::spin_loop();
                }
            }
            let (epoch, job, len) = {
                let mut posted = self.posted.lock().unwrap_or_else(PoisonError::into_inner);
                while posted.epoch == served && !posted.stop {
                    posted = self.wake.wait(posted).unwrap_or_else(PoisonError::into_inner);
                }
                if posted.stop {
                    return;
                }
                served = posted.epoch;
                match posted.job {
                    Some((job, len)) => (served, job, len),
                    None => continue, // over before this helper looked
                }
            };
            while let Some(i) = self.take(epoch, len) {
                if let Err(panic) = catch_unwind(AssertUnwindSafe(|| job(i))) {
                    let mut first = self.panic.lock().unwrap_or_else(PoisonError::into_inner);
                    first.get_or_insert(panic);
                }
                self.done.fetch_add(1, Release);
            }
        }
    }
}

/// Helper threads for one loop ([`with_helpers`]).
pub struct Helpers<'a> {
    /// None: no helpers (one thread), every job runs on the caller alone.
    shared: Option<&'a Shared>,
    /// The number of the last job posted.
    epoch: std::cell::Cell<u32>,
    /// Helper threads running.
    count: usize,
}

/// Runs `body` with `count` helper threads (none for 0), which exit when it returns.
pub fn with_helpers<R>(count: usize, body: impl FnOnce(&Helpers<'_>) -> R) -> R {
    if count == 0 {
        return body(&Helpers { shared: None, epoch: Default::default(), count: 0 });
    }
    let shared = Shared::default();
    std::thread::scope(|scope| {
        let mut started = 0;
        for i in 0..count {
            let shared = &shared;
            let spawned = std::thread::Builder::new()
                .name(format!("bytebpe-helper-{i}"))
                .spawn_scoped(scope, move || shared.serve());
            if spawned.is_err() {
                break; // fewer helpers (a thread limit): the caller takes their share
            }
            started += 1;
        }
        // Told to stop even when `body` panics, so the scope's join does not hang.
        struct Stop<'a>(&'a Shared);
        impl Drop for Stop<'_> {
            fn drop(&mut self) {
                self.0.posted.lock().unwrap_or_else(PoisonError::into_inner).stop = true;
                self.0.wake.notify_all();
            }
        }
        let _stop = Stop(&shared);
        body(&Helpers { shared: Some(&shared), epoch: Default::default(), count: started })
    })
}

impl Helpers<'_> {
    /// The threads a job runs on: the caller and the helpers that started.
    pub fn threads(&self) -> usize {
        self.count + 1
    }

    /// Runs `work` on every item, on this thread and on any helper that is free; items
    /// are taken in order, each exactly once. Returns when all are done. A panic in
    /// `work` on a helper is raised here once every item is done.
    pub fn run<T: Send>(&self, items: Vec<T>, work: impl Fn(T) + Sync) {
        let Some(shared) = self.shared.filter(|_| items.len() > 1) else {
            items.into_iter().for_each(work);
            return;
        };
        let len = items.len();
        let slots: Vec<Mutex<Option<T>>> = items.into_iter().map(|t| Mutex::new(Some(t))).collect();
        let one = |i: usize| {
            let item = slots[i].lock().unwrap_or_else(PoisonError::into_inner).take();
            work(item.expect("each item is taken once"));
        };
        let job: &(dyn Fn(usize) + Sync) = &one;
        // SAFETY: a helper calls the job only for an item it took with this job's epoch
        // (`Shared::take`), and this call returns only after every item is done (below):
        // by then no item is left to take with this epoch, and the next job's epoch
        // differs, so no helper calls `job` after `one` and `slots` are gone.
        let job: Job = unsafe { std::mem::transmute::<&(dyn Fn(usize) + Sync), Job>(job) };
        let epoch = self.epoch.get().checked_add(1).expect("fewer than 2^32 jobs");
        self.epoch.set(epoch);
        shared.done.store(0, Relaxed);
        shared.claim.store(u64::from(epoch) << 32, Release);
        {
            let mut posted = shared.posted.lock().unwrap_or_else(PoisonError::into_inner);
            posted.epoch = epoch;
            posted.job = Some((job, len));
        }
        shared.latest.store(u64::from(epoch), Release);
        shared.wake.notify_all();
        let mut mine = Ok(());
        while let Some(i) = shared.take(epoch, len) {
            // Caught so that the helpers' items are waited for before unwinding.
            if let Err(panic) = catch_unwind(AssertUnwindSafe(|| job(i))) {
                mine = mine.and(Err(panic));
            }
            shared.done.fetch_add(1, Release);
        }
        // Items a helper took are running: wait for them, not for a helper to start.
        while shared.done.load(Acquire) < len {
            std::hint::spin_loop();
        }
        shared.posted.lock().unwrap_or_else(PoisonError::into_inner).job = None;
        if let Err(panic) = mine {
            resume_unwind(panic);
        }
        if let Some(panic) = shared.panic.lock().unwrap_or_else(PoisonError::into_inner).take() {
            resume_unwind(panic);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every item runs once, whatever the helper count, and its writes are seen after.
    #[test]
    fn every_item_runs_once() {
        for helpers in [0, 1, 3] {
            with_helpers(helpers, |h| {
                assert_eq!(h.threads(), helpers + 1);
                for round in 0..200usize {
                    let n = round % 37;
                    let mut out = vec![0usize; n];
                    let items: Vec<(usize, &mut usize)> = out.iter_mut().enumerate().collect();
                    h.run(items, |(i, slot)| *slot += i * 3 + round);
                    let want: Vec<usize> = (0..n).map(|i| i * 3 + round).collect();
                    assert_eq!(out, want, "{helpers} helpers, round {round}");
                }
            });
        }
    }

    /// The caller does every item when the helpers are slow to come (parked), and jobs
    /// keep working after the helpers parked between them.
    #[test]
    fn jobs_after_the_helpers_parked() {
        with_helpers(1, |h| {
            for _ in 0..3 {
                std::thread::sleep(SPIN * 4);
                let sum = AtomicUsize::new(0);
                h.run((1..=100).collect(), |i: usize| {
                    sum.fetch_add(i, Relaxed);
                });
                assert_eq!(sum.into_inner(), 5050);
            }
        });
    }

    /// A panic in an item reaches the caller after the other items are done, and the
    /// helpers go on serving.
    #[test]
    fn a_panicking_item_reaches_the_caller() {
        with_helpers(2, |h| {
            let ran = AtomicUsize::new(0);
            let caught = catch_unwind(AssertUnwindSafe(|| {
                h.run((0..64).collect(), |i: usize| {
                    ran.fetch_add(1, Relaxed);
                    assert!(i != 40, "item 40");
                });
            }));
            assert!(caught.is_err());
            assert_eq!(ran.load(Relaxed), 64, "every item ran");
            let sum = AtomicUsize::new(0);
            h.run((0..10).collect(), |i: usize| {
                sum.fetch_add(i, Relaxed);
            });
            assert_eq!(sum.into_inner(), 45);
        });
    }
}
