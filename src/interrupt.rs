//! Stopping long work when the caller asks (Ctrl-C from Python).
//!
//! Long loops call [`step`] with the work done since their last call (about the bytes
//! touched). When the thread has a check installed ([`with_check`]; the binding installs
//! one that delivers Python's pending signals), `step` runs it at most every
//! `CHECK_EVERY`, looking at the clock only once per `WORK_PER_LOOK` units, so the cost in
//! a hot loop is a thread-local add. An error from the check (`Error::Interrupted`) is
//! returned by `step` and stops the loop. Without a check (plain Rust, Rayon workers),
//! `step` never fails.
//!
//! Only the installing thread checks: Python delivers signals on its main thread, the
//! one that called in, so work it hands to a pool is bounded per call instead.

use std::cell::Cell;
use std::time::{Duration, Instant};

use crate::error::Result;

/// How often the check runs at most.
const CHECK_EVERY: Duration = Duration::from_millis(50);
/// Work units between two looks at the clock (about 10-100 µs of work).
const WORK_PER_LOOK: usize = 1 << 16;

/// A check: `Err` (usually `Error::Interrupted`) asks the work to stop.
pub type Check = fn() -> Result<()>;

thread_local! {
    static CHECK: Cell<Option<Check>> = const { Cell::new(None) };
    static WORK: Cell<usize> = const { Cell::new(0) };
    /// When the check last ran (None: not yet).
    static LAST: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// Runs `work` with `check` installed on this thread, then restores the check before it
/// (so calls nest).
pub fn with_check<T>(check: Check, work: impl FnOnce() -> T) -> T {
    struct Restore(Option<Check>, Option<Instant>);
    impl Drop for Restore {
        fn drop(&mut self) {
            CHECK.with(|c| c.set(self.0));
            LAST.with(|l| l.set(self.1));
        }
    }
    // No clock read here (short calls pay nothing): the first look runs the check.
    let _restore = Restore(CHECK.with(|c| c.replace(Some(check))), LAST.with(|l| l.replace(None)));
    work()
}

/// Records `work` units done; now and then runs the installed check, whose error stops
/// the caller.
#[inline]
pub fn step(work: usize) -> Result<()> {
    let total = WORK.with(|w| {
        let total = w.get().saturating_add(work);
        w.set(total);
        total
    });
    if total < WORK_PER_LOOK {
        return Ok(());
    }
    look()
}

#[cold]
fn look() -> Result<()> {
    WORK.with(|w| w.set(0));
    let Some(check) = CHECK.with(Cell::get) else {
        return Ok(());
    };
    let due = LAST.with(|l| match l.get() {
        Some(t) => t.elapsed() >= CHECK_EVERY,
        None => true,
    });
    if !due {
        return Ok(());
    }
    // Taken out while it runs: a check that calls back into long work (a Python signal
    // handler can) installs and restores its own.
    CHECK.with(|c| c.set(None));
    let result = check();
    CHECK.with(|c| c.set(Some(check)));
    LAST.with(|l| l.set(Some(Instant::now())));
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    fn stop() -> Result<()> {
        Err(Error::Interrupted)
    }

    fn spin(until: Duration) -> Result<()> {
        let start = Instant::now();
        while start.elapsed() < until {
            step(1024)?;
        }
        Ok(())
    }

    #[test]
    fn without_a_check_nothing_stops() {
        assert_eq!(spin(Duration::from_millis(120)), Ok(()));
    }

    #[test]
    fn an_installed_check_stops_the_work_and_is_removed_after() {
        assert_eq!(with_check(stop, || spin(Duration::from_secs(30))), Err(Error::Interrupted));
        assert_eq!(spin(Duration::from_millis(120)), Ok(()));
    }

    #[test]
    fn checks_nest() {
        fn fine() -> Result<()> {
            Ok(())
        }
        let outer = with_check(stop, || {
            assert_eq!(with_check(fine, || spin(Duration::from_millis(120))), Ok(()));
            spin(Duration::from_secs(30))
        });
        assert_eq!(outer, Err(Error::Interrupted));
    }
}
