//! A non-ASCII `str`'s UTF-8, written from its code points (`crate::utf32`) instead of by
//! CPython's encoder: the code points are copied out (`PyUnicode_AsUCS4`, a widening copy
//! in the stable ABI) a chunk at a time into this thread's scratch, then written as UTF-8
//! 8 at a time straight into the text's own buffer, which is then cut to its length (in
//! place: the allocator splits the block). Nothing is kept in the `str`.

use std::cell::RefCell;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::utf32;

/// Code points copied out at a time: a longer `str` is read in substrings of this many,
/// so the scratch stays at 128 KiB a thread, in the core's L2, whatever the length of a
/// document.
const CHUNK: usize = 1 << 15;

thread_local! {
    /// This thread's code points of one chunk (kept between calls).
    static SCRATCH: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
}

/// The UTF-8 of `text`; None where CPython's encoder is to write it instead: on a CPU
/// where writing it here is no faster (no AVX2), or when `text` holds a lone surrogate
/// (no UTF-8 has it: the encoder raises Python's own error for it).
pub(super) fn written_utf8(text: &Bound<'_, PyString>) -> PyResult<Option<String>> {
    if !utf32::is_vectorized() {
        return Ok(None);
    }
    let py = text.py();
    // SAFETY: `text` is a live str and the GIL is held.
    let n = unsafe { ffi::PyUnicode_GetLength(text.as_ptr()) };
    let n = usize::try_from(n).map_err(|_| PyErr::fetch(py))?;
    SCRATCH.with_borrow_mut(|points| {
        // Grown to the longest chunk seen, never shrunk (so not cleared call after call).
        if points.len() < n.min(CHUNK) {
            points.resize(n.min(CHUNK), 0);
        }
        // Room for the whole text up front: parts written one after another never move it.
        let mut out: Vec<u8> = Vec::with_capacity(utf32::utf8_room(n));
        for start in (0..n).step_by(CHUNK) {
            let end = (start + CHUNK).min(n);
            let part = if end - start == n {
                text.clone()
            } else {
                // SAFETY: the GIL is held; 0 <= start < end <= n index `text`.
                unsafe {
                    Bound::from_owned_ptr_or_err(
                        py,
                        ffi::PyUnicode_Substring(text.as_ptr(), start as isize, end as isize),
                    )?
                    .cast_into_unchecked::<PyString>()
                }
            };
            // SAFETY: `points` holds `end - start` u32, as many as `part` has code points
            // (no terminating zero is asked for), and the GIL is held.
            let copied = unsafe {
                ffi::PyUnicode_AsUCS4(part.as_ptr(), points.as_mut_ptr(), (end - start) as isize, 0)
            };
            if copied.is_null() {
                return Err(PyErr::fetch(py));
            }
            if utf32::to_utf8(&points[..end - start], &mut out).is_err() {
                return Ok(None);
            }
        }
        out.shrink_to_fit();
        // SAFETY: `to_utf8` wrote UTF-8 (it refuses code points that are not scalar
        // values), chunk after whole chunk.
        Ok(Some(unsafe { String::from_utf8_unchecked(out) }))
    })
}
