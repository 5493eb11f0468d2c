//! Python lists of token ids built from one shared int object per id.
//!
//! Most ids are above 256, outside CPython's small-int cache, so a list built from fresh
//! ints allocates one per token; sharing one object per id halves that cost. What is left
//! per id is adding a reference: through `Py_IncRef` (a call into the interpreter, as the
//! stable ABI's `Py_INCREF` is in pyo3) that was a tenth of the time of encoding English
//! and returning its list, so for ordinary (mortal) ints on an interpreter with a GIL the
//! count is incremented in place, exactly as the 3.10 stable ABI's own `Py_INCREF` macro
//! does in every C extension built for it. Likewise each item is stored in the list's
//! array, as `PyList_SET_ITEM` does (the stable ABI has only `PyList_SetItem`, a call
//! with its checks per id, 2% of encoding English), once a list made here shows the
//! layout that store needs.

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyInt, PyList, PyString};

use crate::prefetch::prefetch;
use crate::Rank;

/// How many ids ahead of the one being listed its int is asked for.
const AHEAD: usize = 16;

/// A reference count at or above this marks an immortal object (3.12 and 3.13 give them
/// 2^32 - 1, 3.14 3 * 2^30; no mortal int is shared that widely).
const IMMORTAL_FROM: ffi::Py_ssize_t = 1 << 30;

pub struct IdInts {
    ints: Vec<Py<PyInt>>,
    /// Whether a new list's item array is written directly, as CPython's own
    /// `PyList_SET_ITEM` does (checked on a list made for the purpose, see `items_at`).
    items_in_place: bool,
    /// Ids from here on are mortal ints whose count is incremented in place; below it
    /// (the small ints, immortal from 3.12 on) and on a free-threaded interpreter (whose
    /// objects start with other fields) the interpreter adds every reference.
    counted_in_place_from: usize,
}

impl IdInts {
    /// One int for each id below `end`.
    pub fn new(py: Python<'_>, end: Rank) -> PyResult<Self> {
        let ints: Vec<Py<PyInt>> =
            (0..end).map(|id| Ok(id.into_pyobject(py)?.unbind())).collect::<PyResult<_>>()?;
        let counted_in_place_from = if gil_disabled(py)? {
            ints.len()
        } else {
            // SAFETY: with a GIL, every object starts with its reference count, and the
            // ints are alive (held here).
            ints.iter()
                .rposition(|int| unsafe { *count_word(int.as_ptr()) } >= IMMORTAL_FROM)
                .map_or(0, |last| last + 1)
        };
        let items_in_place = !gil_disabled(py)? && items_found(py)?;
        Ok(Self { ints, counted_in_place_from, items_in_place })
    }

    /// A new list of `ids`; ids past the cached ones (special tokens) get fresh ints.
    pub fn list<'py>(&self, py: Python<'py>, ids: &[Rank]) -> PyResult<Bound<'py, PyList>> {
        let len = ffi::Py_ssize_t::try_from(ids.len()).expect("a list's length fits isize");
        // SAFETY: with the GIL held, a new list of `len` empty slots, each filled once
        // below with an owned reference (PyList_SetItem steals it; an index below `len`
        // cannot fail). The direct calls spare pyo3's per-item iterator and Result. An
        // int at or past `counted_in_place_from` is mortal on an interpreter with a GIL.
        unsafe {
            let list = Bound::from_owned_ptr_or_err(py, ffi::PyList_New(len))?;
            let items =
                if self.items_in_place { items_at(list.as_ptr()) } else { std::ptr::null_mut() };
            for (i, &id) in ids.iter().enumerate() {
                // The int a few ids on is asked for now: its count is written below, and
                // the ints of a large vocabulary (32 bytes each) outgrow the caches, so
                // that write waited on memory most of the time (perf) when done unasked.
                if let Some(int) = ids.get(i + AHEAD).and_then(|&on| self.ints.get(on as usize)) {
                    prefetch(int.as_ptr());
                }
                let at = id as usize;
                let int = match self.ints.get(at) {
                    Some(int) if at >= self.counted_in_place_from => {
                        *count_word(int.as_ptr()) += 1;
                        int.as_ptr()
                    }
                    Some(int) => {
                        ffi::Py_IncRef(int.as_ptr());
                        int.as_ptr()
                    }
                    None => id.into_pyobject(py)?.into_ptr(),
                };
                if items.is_null() {
                    ffi::PyList_SetItem(list.as_ptr(), i as ffi::Py_ssize_t, int);
                } else {
                    *items.add(i) = int;
                }
            }
            Ok(list.cast_into_unchecked())
        }
    }
}

/// The word of `object` that holds its reference count: its first, on an interpreter with
/// a GIL (the only place this module reads or writes a count itself). Dereferencing it
/// needs the GIL held and `object` alive.
fn count_word(object: *mut ffi::PyObject) -> *mut ffi::Py_ssize_t {
    object.cast()
}

/// The item array of a list on an interpreter with a GIL: the word after the object's
/// variable-size header (reference count, type, size), where `PyList_SET_ITEM` writes.
/// The stable ABI does not promise this layout, so [`items_found`] checks it first.
unsafe fn items_at(list: *mut ffi::PyObject) -> *mut *mut ffi::PyObject {
    // SAFETY: the caller's list, whose layout `items_found` has checked.
    unsafe { *list.cast::<*mut *mut ffi::PyObject>().add(3) }
}

/// Whether lists are laid out as [`items_at`] reads them: on a list of three items made
/// here, the header's words hold the list type and the length 3, the capacity after the
/// item array is at least 3, and each item set through the API is found in the array.
fn items_found(py: Python<'_>) -> PyResult<bool> {
    let mark = |text: &str| PyString::new(py, text).into_any().unbind();
    let marks = [py.None(), mark("first"), mark("second")];
    let list = PyList::new(py, &marks)?;
    let words = list.as_ptr().cast::<usize>();
    // SAFETY: with a GIL every object starts with its reference count and type, and a
    // variable-size one then with its length; a list adds its item array and capacity
    // (five words in every CPython since 2.x). Only once the first three words read as
    // expected are the array and capacity read.
    unsafe {
        let header = *words.add(1) == std::ptr::addr_of!(ffi::PyList_Type) as usize
            && *words.add(2) == marks.len();
        if !header || *words.add(4) < marks.len() {
            return Ok(false);
        }
        let items = items_at(list.as_ptr());
        Ok(marks.iter().enumerate().all(|(i, mark)| *items.add(i) == mark.as_ptr()))
    }
}

/// Whether the interpreter runs without a GIL (a free-threaded build).
fn gil_disabled(py: Python<'_>) -> PyResult<bool> {
    let flag = py.import("sysconfig")?.call_method1("get_config_var", ("Py_GIL_DISABLED",))?;
    flag.is_truthy()
}
