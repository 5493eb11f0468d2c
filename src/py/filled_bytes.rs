//! A bytes object written in place by the core, not zeroed first. pyo3's
//! `PyBytes::new_with` zeroes every byte before the writer runs: for a batch's ids that is
//! a serial pass over megabytes, taking all their page faults on one thread while the
//! pool waits.

use std::mem::MaybeUninit;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// A new bytes object of `len` bytes, written by `fill` (which may detach and write in
/// parallel: the object is not shared with anyone until it is returned).
///
/// Safety: when `fill` returns `Ok` it has written every byte of the slice it was given.
pub unsafe fn filled_bytes<'py>(
    py: Python<'py>,
    len: usize,
    fill: impl FnOnce(&mut [MaybeUninit<u8>]) -> PyResult<()>,
) -> PyResult<Bound<'py, PyBytes>> {
    let size = ffi::Py_ssize_t::try_from(len).expect("a buffer's length fits isize");
    // SAFETY: with the GIL held. A null source makes a bytes object of `size` bytes with
    // contents not yet written (CPython's documented contract); its buffer lives as long
    // as the object, and nothing reads it before `fill` has written it.
    unsafe {
        let bytes = Bound::from_owned_ptr_or_err(
            py,
            ffi::PyBytes_FromStringAndSize(std::ptr::null(), size),
        )?;
        let data = ffi::PyBytes_AsString(bytes.as_ptr()).cast::<MaybeUninit<u8>>();
        fill(std::slice::from_raw_parts_mut(data, len))?;
        Ok(bytes.cast_into_unchecked())
    }
}
