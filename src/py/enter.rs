//! The one door for long calls: release the GIL, stay interruptible, map errors.

use std::sync::Mutex;

use pyo3::prelude::*;

use crate::error::{Error, Result};

/// Runs `work` with the GIL released. `work` receives an observer to call now and then
/// (at least once a second): it re-attaches briefly to deliver Ctrl-C and to call
/// `progress(done)`. A Python exception raised there (KeyboardInterrupt, or one from the
/// progress callback) stops the work and is re-raised as is.
pub fn detached<T, F>(py: Python<'_>, progress: Option<&Py<PyAny>>, work: F) -> PyResult<T>
where
    T: Send,
    F: FnOnce(&mut dyn FnMut(usize) -> Result<()>) -> Result<T> + Send,
{
    let raised: Mutex<Option<PyErr>> = Mutex::new(None);
    let result = py.detach(|| {
        let mut observe = |done: usize| -> Result<()> {
            Python::attach(|py| {
                let outcome = py.check_signals().and_then(|()| match progress {
                    Some(callback) => callback.call1(py, (done,)).map(drop),
                    None => Ok(()),
                });
                outcome.map_err(|e| {
                    *raised.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                    Error::Interrupted
                })
            })
        };
        work(&mut observe)
    });
    match result {
        Ok(value) => Ok(value),
        Err(err) => Err(raised
            .into_inner()
            .unwrap_or_else(|p| p.into_inner())
            .unwrap_or_else(|| super::errors::to_py(err))),
    }
}

/// Runs short-to-medium work with the GIL released, mapping core errors.
pub fn detached_quiet<T, F>(py: Python<'_>, work: F) -> PyResult<T>
where
    T: Send,
    F: FnOnce() -> Result<T> + Send,
{
    py.detach(work).map_err(super::errors::to_py)
}
