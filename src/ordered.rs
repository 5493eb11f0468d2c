//! Work shared by a pool and the calling thread, its results taken in order.
//!
//! [`run`] hands out items `0..n` in order, from one counter, to the calling thread and
//! to `threads - 1` jobs on a Rayon pool of `threads` threads. Only the calling thread
//! takes the results, in item order, as they are ready (the binding builds Python lists
//! there, which only the thread holding the GIL can do); when the next result is not
//! ready it works on the next item itself instead of waiting, and waits only once every
//! item is handed out. So `threads` threads are busy, never more (a third thread that
//! only takes results would share two cores with the two that encode), the caller's
//! share of the work shrinks as taking grows, and a result is held only until the caller
//! reaches it (after at most [`TAKE_AT_ONCE`] have piled up: taking runs of them is
//! cheaper).
//!
//! Preparing: an item may need the calling thread before anyone works on it (the binding
//! reads each text of a chunk as UTF-8, which needs the GIL). The caller prepares item 0,
//! starts the jobs, then prepares the others in order while the jobs work on the first
//! ones; a job that reaches an item not yet prepared waits for it. So only the first
//! item's preparation comes before any parallel work, not the whole batch's.
//!
//! Stopping: an error from `prepare` or `take` (the binding's: the first failing item, in
//! order) or from the interrupt check while waiting (Ctrl-C, see `interrupt`) makes the
//! jobs take no further item; `run` returns it once they have finished the item in hand.
//! A panic in a job ends the waiting and is raised again by `run`.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use rayon::ThreadPool;

use crate::error::Result;
use crate::interrupt;

/// How long the caller sleeps between interrupt checks while it waits for a job's item.
const WAIT_CHECK: Duration = Duration::from_millis(50);

/// The largest share of work (e.g. bytes of text) [`ranges`] puts in one item: big
/// enough that handing it out costs nothing next to doing it (about a millisecond of
/// encoding), small enough that the threads finish close together.
pub const MAX_ITEM_WEIGHT: usize = 64 * 1024;

/// Ready results the caller lets pile up before it takes them while items are left to
/// claim. Taking is the binding building lists: a longer run of it keeps what it touches
/// (the shared int objects) in the cache, where one item at a time, between encodings
/// that evict them, cost about 10% more per id; once every item is handed out it takes
/// whatever is ready, so at the end this many items at most are left to take alone.
const TAKE_AT_ONCE: usize = 8;

/// Items per thread [`ranges`] aims for at least, so a small batch still spreads out.
const ITEMS_PER_THREAD: usize = 16;

/// Cuts consecutive elements with these weights (e.g. documents by bytes) into ranges,
/// the items for [`run`] on `threads` threads: a range ends at the element that brings
/// it to `total / (threads * 16)` in weight, at most [`MAX_ITEM_WEIGHT`] (so a heavy
/// element ends one). Every element is in exactly one range, in order, and every range
/// holds one at least; an empty input gives no range.
pub fn ranges(weights: impl IntoIterator<Item = usize>, threads: usize) -> Vec<Range<usize>> {
    let weights: Vec<usize> = weights.into_iter().collect();
    let total = weights.iter().fold(0usize, |a, &w| a.saturating_add(w));
    let target = (total / (threads.max(1) * ITEMS_PER_THREAD)).clamp(1, MAX_ITEM_WEIGHT);
    let mut out = Vec::new();
    let (mut start, mut held) = (0, 0usize);
    for (i, &w) in weights.iter().enumerate() {
        held = held.saturating_add(w);
        if held >= target {
            out.push(start..i + 1);
            (start, held) = (i + 1, 0);
        }
    }
    if start < weights.len() {
        out.push(start..weights.len());
    }
    out
}

struct Shared<T> {
    n: usize,
    /// The next item to hand out (past `n`: none left).
    next: AtomicUsize,
    /// Items below this one are prepared (changed under the `slots` lock).
    prepared: AtomicUsize,
    /// Set when the caller is done or stops early: jobs take no further item.
    stop: AtomicBool,
    slots: Mutex<Slots<T>>,
    /// Signalled when a result arrives while the caller waits, or a job panics.
    ready: Condvar,
    /// Signalled when an item is prepared or the caller stops, while a job waits for it.
    more_prepared: Condvar,
}

struct Slots<T> {
    /// Results by item, until the caller takes them.
    done: Vec<Option<T>>,
    /// The caller sleeps on `ready`: a job that stores a result wakes it.
    waiting: bool,
    /// Jobs sleeping on `more_prepared`, for an item not yet prepared.
    jobs_waiting: usize,
    /// A job panicked: its item never arrives.
    lost: bool,
}

impl<T> Shared<T> {
    fn slots(&self) -> MutexGuard<'_, Slots<T>> {
        // Nothing panics while holding the lock; a poisoned one is still consistent.
        self.slots.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The next item, if any is left and nobody stopped, once it is prepared.
    fn claim(&self) -> Option<usize> {
        if self.stop.load(Ordering::Relaxed) {
            return None;
        }
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        if i >= self.n {
            return None;
        }
        if self.prepared.load(Ordering::Acquire) <= i {
            let mut slots = self.slots();
            while self.prepared.load(Ordering::Acquire) <= i {
                if self.stop.load(Ordering::Relaxed) {
                    return None;
                }
                slots.jobs_waiting += 1;
                slots = self.more_prepared.wait(slots).unwrap_or_else(PoisonError::into_inner);
                slots.jobs_waiting -= 1;
            }
        }
        Some(i)
    }

    /// Items below `end` may be worked on.
    fn publish(&self, end: usize) {
        let slots = self.slots();
        self.prepared.store(end, Ordering::Release);
        if slots.jobs_waiting > 0 {
            self.more_prepared.notify_all();
        }
    }

    fn store(&self, i: usize, result: T) {
        let mut slots = self.slots();
        slots.done[i] = Some(result);
        if slots.waiting {
            self.ready.notify_one();
        }
    }
}

/// Marks the batch lost if a job unwinds, so the caller stops waiting for its item.
struct LoseOnPanic<'a, T>(&'a Shared<T>);

impl<T> Drop for LoseOnPanic<'_, T> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.stop.store(true, Ordering::Relaxed);
            self.0.slots().lost = true;
            self.0.ready.notify_one();
        }
    }
}

/// Stops the jobs when the caller leaves, normally, by an error or by a panic (waking
/// any that wait for an item to be prepared).
struct StopOnLeave<'a, T>(&'a Shared<T>);

impl<T> Drop for StopOnLeave<'_, T> {
    fn drop(&mut self) {
        self.0.stop.store(true, Ordering::Relaxed);
        let _slots = self.0.slots();
        self.0.more_prepared.notify_all();
    }
}

/// Runs `prepare(i)` on the calling thread and then `work(i)` for every item `i` in
/// `0..n`, `work` on up to the pool's thread count of threads, the calling thread
/// included, and hands the results to `take` on the calling thread, in item order, in
/// runs of ready results (never an empty run; see the module doc). An error from
/// `prepare` or `take` stops the work and is returned, as is an interrupt while waiting;
/// results after a stop are dropped untaken.
pub fn run<T, P, W, K>(
    pool: &ThreadPool,
    n: usize,
    mut prepare: P,
    work: W,
    mut take: K,
) -> Result<()>
where
    T: Send,
    P: FnMut(usize) -> Result<()>,
    W: Fn(usize) -> T + Sync,
    K: FnMut(Vec<T>) -> Result<()>,
{
    if n == 0 {
        return Ok(());
    }
    prepare(0)?;
    let shared = Shared {
        n,
        next: AtomicUsize::new(0),
        prepared: AtomicUsize::new(1),
        stop: AtomicBool::new(false),
        slots: Mutex::new(Slots {
            done: (0..n).map(|_| None).collect(),
            waiting: false,
            jobs_waiting: 0,
            lost: false,
        }),
        ready: Condvar::new(),
        more_prepared: Condvar::new(),
    };
    let helpers = pool.current_num_threads().saturating_sub(1).min(n.saturating_sub(1));
    let (shared, work) = (&shared, &work);
    pool.in_place_scope(|scope| {
        let _stop = StopOnLeave(shared);
        for _ in 0..helpers {
            scope.spawn(move |_| {
                let _lose = LoseOnPanic(shared);
                while let Some(i) = shared.claim() {
                    shared.store(i, work(i));
                }
            });
        }
        for i in 1..n {
            prepare(i)?;
            shared.publish(i + 1);
        }
        let mut taken = 0;
        while taken < n {
            let ready: Vec<T> = {
                let mut slots = shared.slots();
                if slots.lost {
                    // A job panicked; the scope raises its panic once this returns.
                    return Ok(());
                }
                let count = slots.done[taken..].iter().take_while(|r| r.is_some()).count();
                if count >= TAKE_AT_ONCE || shared.next.load(Ordering::Relaxed) >= n {
                    slots.done[taken..taken + count].iter_mut().map_while(Option::take).collect()
                } else {
                    Vec::new() // more to claim: work on, and take a longer run later
                }
            };
            if !ready.is_empty() {
                taken += ready.len();
                take(ready)?;
                continue;
            }
            // A forced look: the check runs if its interval has passed since the last.
            interrupt::step(usize::MAX)?;
            if let Some(i) = shared.claim() {
                // Nothing to take: work instead of waiting.
                shared.store(i, work(i));
                continue;
            }
            wait(shared, taken)?;
        }
        Ok(())
    })
}

/// Sleeps until item `at`'s result is ready or a job panicked, checking for interrupts.
fn wait<T>(shared: &Shared<T>, at: usize) -> Result<()> {
    let mut slots = shared.slots();
    while slots.done[at].is_none() && !slots.lost {
        slots.waiting = true;
        let (back, timeout) =
            shared.ready.wait_timeout(slots, WAIT_CHECK).unwrap_or_else(PoisonError::into_inner);
        slots = back;
        slots.waiting = false;
        if timeout.timed_out() {
            drop(slots);
            interrupt::step(usize::MAX)?;
            slots = shared.slots();
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use std::sync::atomic::AtomicUsize;

    fn pool(threads: usize) -> std::sync::Arc<ThreadPool> {
        crate::parallel::checked(Some(threads)).unwrap()
    }

    #[test]
    fn ranges_cover_every_element_once_in_order() {
        assert!(ranges([], 2).is_empty());
        // Weightless elements pile into one range (they cost next to nothing).
        assert_eq!(ranges([0, 0, 0], 2), vec![Range { start: 0, end: 3 }]);
        let sizes = [5, 0, 200_000, 7, 7, 7, 0, 70_000, 1];
        for threads in [1, 2, 8] {
            let got = ranges(sizes, threads);
            let flat: Vec<usize> = got.iter().flat_map(Clone::clone).collect();
            assert_eq!(flat, (0..sizes.len()).collect::<Vec<_>>());
            assert!(got.iter().all(|r| !r.is_empty()));
            // The heavy element ends a range; none holds past the cap but by its last element.
            assert!(got.iter().any(|r| r.end == 3));
            for r in &got {
                let held: usize = sizes[r.clone()].iter().sum();
                let last = sizes[r.end - 1];
                assert!(held - last < MAX_ITEM_WEIGHT, "{r:?}");
            }
        }
        // A big batch of small elements is cut near the cap.
        let many = vec![1_000; 10_000];
        let got = ranges(many.iter().copied(), 2);
        assert!(got.iter().all(|r| r.len() <= MAX_ITEM_WEIGHT / 1_000 + 1));
        assert!(got.len() >= 2 * ITEMS_PER_THREAD);
    }

    #[test]
    fn results_arrive_in_order_on_any_thread_count() {
        for threads in [1, 2, 4] {
            for n in [0, 1, 2, 3, 100, 1_000] {
                let mut got = Vec::new();
                let mut batches = 0;
                run(
                    &pool(threads),
                    n,
                    |_| Ok(()),
                    |i| i * 3,
                    |ready| {
                        assert!(!ready.is_empty());
                        batches += 1;
                        got.extend(ready);
                        Ok(())
                    },
                )
                .unwrap();
                assert_eq!(got, (0..n).map(|i| i * 3).collect::<Vec<_>>(), "{threads} {n}");
                assert!(batches <= n);
            }
        }
    }

    #[test]
    fn uneven_items_still_come_in_order() {
        // Items that take very different times finish out of order on the jobs.
        let mut got = Vec::new();
        run(
            &pool(3),
            60,
            |_| Ok(()),
            |i| {
                std::thread::sleep(Duration::from_micros(if i % 7 == 0 { 3_000 } else { 10 }));
                i
            },
            |ready| {
                got.extend(ready);
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(got, (0..60).collect::<Vec<_>>());
    }

    #[test]
    fn an_error_from_take_stops_the_work_and_is_returned() {
        let started = AtomicUsize::new(0);
        let mut taken = Vec::new();
        let result = run(
            &pool(2),
            10_000,
            |_| Ok(()),
            |i| {
                started.fetch_add(1, Ordering::Relaxed);
                std::thread::sleep(Duration::from_micros(20));
                i
            },
            |ready| {
                for i in ready {
                    if i == 5 {
                        return Err(Error::InvalidConfig(format!("item {i}")));
                    }
                    taken.push(i);
                }
                Ok(())
            },
        );
        assert_eq!(result, Err(Error::InvalidConfig("item 5".into())));
        assert_eq!(taken, [0, 1, 2, 3, 4]);
        // The jobs stopped early instead of working through every item.
        assert!(started.load(Ordering::Relaxed) < 10_000);
    }

    #[test]
    fn an_interrupt_stops_the_work() {
        fn stop() -> Result<()> {
            Err(Error::Interrupted)
        }
        let started = AtomicUsize::new(0);
        let result = interrupt::with_check(stop, || {
            run(
                &pool(2),
                10_000,
                |_| Ok(()),
                |i| {
                    started.fetch_add(1, Ordering::Relaxed);
                    std::thread::sleep(Duration::from_micros(20));
                    i
                },
                |_| Ok(()),
            )
        });
        assert_eq!(result, Err(Error::Interrupted));
        assert!(started.load(Ordering::Relaxed) < 10_000);
    }

    #[test]
    fn the_caller_checks_for_interrupts_while_it_waits() {
        // The job's item ends only once the caller's check has stopped it, and the
        // caller's item only once the job has started: so the caller must be waiting
        // for the job's item when its second check (the first one passes) stops it.
        static CALLS: AtomicUsize = AtomicUsize::new(0);
        static JOB_STARTED: AtomicBool = AtomicBool::new(false);
        fn second_call_stops() -> Result<()> {
            match CALLS.fetch_add(1, Ordering::SeqCst) {
                0 => Ok(()),
                _ => Err(Error::Interrupted),
            }
        }
        let result = interrupt::with_check(second_call_stops, || {
            run(
                &pool(2),
                2,
                |_| Ok(()),
                |i| {
                    let on_job = rayon::current_thread_index().is_some();
                    if on_job {
                        JOB_STARTED.store(true, Ordering::SeqCst);
                    }
                    while if on_job {
                        CALLS.load(Ordering::SeqCst) < 2
                    } else {
                        !JOB_STARTED.load(Ordering::SeqCst)
                    } {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    i
                },
                |_| Ok(()),
            )
        });
        assert_eq!(result, Err(Error::Interrupted));
        assert_eq!(CALLS.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn a_panicking_job_is_raised_not_waited_for() {
        let result = std::panic::catch_unwind(|| {
            run(
                &pool(2),
                200,
                |_| Ok(()),
                |i| {
                    if i == 150 {
                        panic!("item {i}");
                    }
                    std::thread::sleep(Duration::from_micros(50));
                    i
                },
                |_| Ok(()),
            )
        });
        assert!(result.is_err());
    }

    #[test]
    fn every_item_is_prepared_before_any_thread_works_on_it() {
        for threads in [1, 2, 4] {
            let prepared: Vec<AtomicBool> = (0..300).map(|_| AtomicBool::new(false)).collect();
            let mut order = Vec::new();
            let mut got = Vec::new();
            run(
                &pool(threads),
                300,
                |i| {
                    order.push(i);
                    prepared[i].store(true, Ordering::Release);
                    Ok(())
                },
                |i| {
                    assert!(prepared[i].load(Ordering::Acquire), "item {i} not prepared");
                    i
                },
                |ready| {
                    got.extend(ready);
                    Ok(())
                },
            )
            .unwrap();
            assert_eq!(order, (0..300).collect::<Vec<_>>());
            assert_eq!(got, order);
        }
    }

    #[test]
    fn an_error_from_prepare_stops_the_work_and_is_returned() {
        for threads in [1, 2, 4] {
            for bad in [0, 1, 150] {
                let worked = Mutex::new(Vec::new());
                let mut taken = 0;
                let result = run(
                    &pool(threads),
                    300,
                    |i| {
                        if i == bad {
                            return Err(Error::InvalidConfig(format!("item {i}")));
                        }
                        Ok(())
                    },
                    |i| worked.lock().unwrap().push(i),
                    |ready| {
                        taken += ready.len();
                        Ok(())
                    },
                );
                assert_eq!(result, Err(Error::InvalidConfig(format!("item {bad}"))));
                // Nothing is taken before every item is prepared, and no item from the
                // failing one on was worked on.
                assert_eq!(taken, 0);
                assert!(worked.lock().unwrap().iter().all(|&i| i < bad), "{threads} {bad}");
            }
        }
    }
}
