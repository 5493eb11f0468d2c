//! The one door for long calls: release the GIL, stay interruptible, map errors.

use std::cell::RefCell;

use pyo3::prelude::*;

use crate::error::{Error, Result};
use crate::interrupt;

/// Runs a closure with the GIL re-acquired, from inside detached work.
pub type Reattach<'a> = dyn FnMut(&mut dyn FnMut(Python<'_>) -> PyResult<()>) -> Result<()> + 'a;

thread_local! {
    /// The Python exception that stopped detached work on this thread (Ctrl-C, or one
    /// raised by a progress callback), re-raised as is once the GIL is back.
    static RAISED: RefCell<Option<PyErr>> = const { RefCell::new(None) };
}

/// Runs `inner` with the GIL, after delivering pending signals (Ctrl-C); a Python
/// exception from either is kept for the caller and stops the work.
fn attached(inner: &mut dyn FnMut(Python<'_>) -> PyResult<()>) -> Result<()> {
    Python::attach(|py| {
        py.check_signals().and_then(|()| inner(py)).map_err(|e| {
            RAISED.with(|r| *r.borrow_mut() = Some(e));
            Error::Interrupted
        })
    })
}

/// The core's interrupt check (see `interrupt`): deliver pending signals.
fn check_signals() -> Result<()> {
    attached(&mut |_| Ok(()))
}

/// Runs `work` with the GIL released. `work` receives `reattach`, to call now and then
/// (at least once a second): it takes the GIL briefly, delivers Ctrl-C, then runs the
/// given closure (progress, callbacks). Long loops in the core also deliver Ctrl-C on
/// their own (`interrupt::step`, a check every 50 ms at most). A Python exception raised
/// there stops the work and is re-raised as is once the GIL is back.
pub fn detached<T, F>(py: Python<'_>, work: F) -> PyResult<T>
where
    T: Send,
    F: FnOnce(&mut Reattach<'_>) -> Result<T> + Send,
{
    let result = py.detach(|| {
        // An exception left by a call that ended without raising it is not this call's.
        RAISED.with(|r| r.borrow_mut().take());
        interrupt::with_check(check_signals, || work(&mut attached))
    });
    result.map_err(|err| {
        RAISED.with(|r| r.borrow_mut().take()).unwrap_or_else(|| super::errors::to_py(err))
    })
}

/// Runs work that needs no callbacks with the GIL released, mapping core errors; Ctrl-C
/// stops it as in [`detached`].
pub fn detached_quiet<T, F>(py: Python<'_>, work: F) -> PyResult<T>
where
    T: Send,
    F: FnOnce() -> Result<T> + Send,
{
    detached(py, |_| work())
}

/// Inputs up to this many bytes are encoded or decoded with the GIL held: releasing and
/// retaking it (and installing the interrupt check) costs about as much as encoding a few
/// dozen bytes, more than the whole call for a short text, while work this small ends in
/// a few microseconds, so holding the GIL delays other threads no longer than a Python
/// statement does and leaves no time for a Ctrl-C to wait on. Kept small: threads that
/// encode texts above it still run in parallel, and there the release costs under 10%.
pub const SMALL_WORK: usize = 256;

/// [`detached_quiet`] for work on `len` bytes of input: small work runs as is, with the
/// GIL held ([`SMALL_WORK`]); its errors map the same way.
pub fn detached_unless_small<T, F>(py: Python<'_>, len: usize, work: F) -> PyResult<T>
where
    T: Send,
    F: FnOnce() -> Result<T> + Send,
{
    if len <= SMALL_WORK {
        work().map_err(super::errors::to_py)
    } else {
        detached_quiet(py, work)
    }
}
