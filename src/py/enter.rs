//! The one door for long calls: release the GIL, stay interruptible, map errors.

use std::sync::Mutex;

use pyo3::prelude::*;

use crate::error::{Error, Result};

/// Runs a closure with the GIL re-acquired, from inside detached work.
pub type Reattach<'a> = dyn FnMut(&mut dyn FnMut(Python<'_>) -> PyResult<()>) -> Result<()> + 'a;

/// Runs `work` with the GIL released. `work` receives `reattach`, to call now and then
/// (at least once a second): it takes the GIL briefly, delivers Ctrl-C, then runs the
/// given closure (progress, callbacks). A Python exception raised there stops the work
/// and is re-raised as is once the GIL is back.
pub fn detached<T, F>(py: Python<'_>, work: F) -> PyResult<T>
where
    T: Send,
    F: FnOnce(&mut Reattach<'_>) -> Result<T> + Send,
{
    let raised: Mutex<Option<PyErr>> = Mutex::new(None);
    let result = py.detach(|| {
        let mut reattach = |inner: &mut dyn FnMut(Python<'_>) -> PyResult<()>| -> Result<()> {
            Python::attach(|py| {
                py.check_signals().and_then(|()| inner(py)).map_err(|e| {
                    *raised.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                    Error::Interrupted
                })
            })
        };
        work(&mut reattach)
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
