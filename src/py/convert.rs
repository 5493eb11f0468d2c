//! Conversions shared by the binding's classes: documents held as Python objects while
//! the GIL is released, merge records as tuples, and ids from lists or packed integers.

use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::pybacked::{PyBackedBytes, PyBackedStr};
use pyo3::types::{PyList, PyString};

use super::str_utf8;
use crate::document::Document;
use crate::vocab::MergeRecord;
use crate::Rank;

/// A `str` held as UTF-8 while the GIL is released, leaving no copy inside it.
pub(super) enum HeldText {
    /// An ASCII `str`: its own storage is already UTF-8, read in place.
    Ascii(PyBackedStr),
    /// Any other `str`, its UTF-8 written from its code points (`str_utf8.rs`).
    Written(String),
    /// Any other `str` where that is not faster (a CPU without AVX2): encoded by CPython.
    Encoded(PyBackedBytes),
}

impl HeldText {
    pub(super) fn as_str(&self) -> &str {
        match self {
            HeldText::Ascii(s) => s,
            HeldText::Written(s) => s,
            // SAFETY: CPython's UTF-8 encoder wrote these bytes (`held_text`).
            HeldText::Encoded(b) => unsafe { std::str::from_utf8_unchecked(b) },
        }
    }
}

/// A document kept alive as a Python object while the GIL is released.
pub(super) enum HeldDocument {
    Text(HeldText),
    Bytes(PyBackedBytes),
}

impl HeldDocument {
    pub(super) fn document(&self) -> Document<'_> {
        match self {
            HeldDocument::Text(t) => Document { data: t.as_str().as_bytes(), is_text: true },
            HeldDocument::Bytes(b) => Document { data: b, is_text: false },
        }
    }
}

/// Holds a `str` (valid UTF-8 only) or `bytes`/`bytearray` document.
pub(super) fn held_document(item: &Bound<'_, PyAny>) -> PyResult<HeldDocument> {
    if let Ok(text) = item.cast::<PyString>() {
        return held_text(text).map(HeldDocument::Text);
    }
    Ok(HeldDocument::Bytes(item.extract()?))
}

/// Holds a `str` as UTF-8 without leaving a copy behind: an ASCII string is read in place;
/// the UTF-8 of any other is written from its code points (`str_utf8.rs`, under half the
/// time of CPython's encoder), or encoded by CPython into a bytes object, freed with the
/// holder. Reading it in place (`PyUnicode_AsUTF8AndSize`, all the stable ABI offers
/// besides copies) would make CPython build its UTF-8 form and keep it inside the `str`
/// for the string's lifetime: as much memory again as the caller's non-ASCII text, kept
/// after the call, and fresh pages to fault in, which made a first call on non-ASCII text
/// about 5% slower than this (benches/RESULTS.md, "a str's UTF-8 not kept in the str").
/// A lone surrogate raises Python's own `UnicodeEncodeError` (from CPython's encoder).
pub(super) fn held_text(text: &Bound<'_, PyString>) -> PyResult<HeldText> {
    if text.call_method0(pyo3::intern!(text.py(), "isascii"))?.is_truthy()? {
        return Ok(HeldText::Ascii(PyBackedStr::try_from(text.clone())?));
    }
    if let Some(written) = str_utf8::written_utf8(text)? {
        return Ok(HeldText::Written(written));
    }
    Ok(HeldText::Encoded(text.encode_utf8()?.into()))
}

/// A merge record as Python sees it: (left, right, token, count).
pub(super) type MergeTuple = (Rank, Rank, Rank, u64);

pub(super) fn merge_record((left, right, token, count): MergeTuple) -> MergeRecord {
    MergeRecord { left, right, token, count }
}

pub(super) fn merge_tuple(m: &MergeRecord) -> MergeTuple {
    (m.left, m.right, m.token, m.count)
}

/// Ids packed as native-endian integers of `itemsize` (1, 2, 4 or 8) bytes, signed or
/// not (a NumPy array's buffer); None when one is negative or does not fit a `Rank`.
pub(super) fn unpacked_ids(
    data: &[u8],
    itemsize: usize,
    signed: bool,
) -> PyResult<Option<Vec<Rank>>> {
    /// Each `N` bytes as a `T`, then as a `Rank` if it is one.
    fn each<T, const N: usize>(data: &[u8], read: fn([u8; N]) -> T) -> Option<Vec<Rank>>
    where
        Rank: TryFrom<T>,
    {
        let word = |c: &[u8]| <[u8; N]>::try_from(c).expect("chunks of N bytes");
        data.chunks_exact(N).map(|c| Rank::try_from(read(word(c))).ok()).collect()
    }
    if !matches!(itemsize, 1 | 2 | 4 | 8) {
        return Err(PyValueError::new_err(format!(
            "packed ids are 1, 2, 4 or 8 bytes each, not {itemsize}"
        )));
    }
    if !data.len().is_multiple_of(itemsize) {
        return Err(PyValueError::new_err(format!(
            "packed ids: {} bytes are not a whole number of {itemsize}-byte integers",
            data.len()
        )));
    }
    Ok(match (itemsize, signed) {
        (1, false) => each(data, u8::from_ne_bytes),
        (1, true) => each(data, i8::from_ne_bytes),
        (2, false) => each(data, u16::from_ne_bytes),
        (2, true) => each(data, i16::from_ne_bytes),
        (4, false) => each(data, u32::from_ne_bytes),
        (4, true) => each(data, i32::from_ne_bytes),
        (8, false) => each(data, u64::from_ne_bytes),
        _ => each(data, i64::from_ne_bytes),
    })
}

/// Token ids from Python. A `list` of `int` is read item by item through the stable ABI
/// (`PyList_GetItem`, `PyLong_AsLong`: two calls, no new reference per item, where a
/// sequence's extraction iterates); anything else, or a list holding any other item
/// (whose `__index__` may run Python code), is extracted as a sequence, as before. An id
/// that is not an int is a TypeError, one outside `u32` an OverflowError, for the caller
/// to name.
pub(super) fn id_list(ids: &Bound<'_, PyAny>) -> PyResult<Vec<Rank>> {
    let Ok(list) = ids.cast_exact::<PyList>() else {
        return ids.extract();
    };
    let n = list.len();
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        // SAFETY: the GIL is held; `list` is a live list. The item is borrowed: nothing
        // below runs Python code while it is used (only exact ints are read here).
        let item = unsafe { ffi::PyList_GetItem(list.as_ptr(), i as ffi::Py_ssize_t) };
        // SAFETY: as above; a null item (i past the end: never, nothing ran) is refused.
        if item.is_null() || unsafe { ffi::PyLong_CheckExact(item) } == 0 {
            PyErr::take(ids.py());
            return ids.extract();
        }
        // SAFETY: an exact int: reading it runs no Python code.
        let value = unsafe { ffi::PyLong_AsLong(item) };
        if value == -1 {
            if let Some(e) = PyErr::take(ids.py()) {
                return Err(e); // past a C long
            }
        }
        let id = Rank::try_from(value).map_err(|_| {
            PyOverflowError::new_err(format!("token id {value} at position {i} is not a u32"))
        })?;
        out.push(id);
    }
    Ok(out)
}

/// `texts` as `str` objects, or a TypeError naming the first that is not one.
pub(super) fn strs(texts: Vec<Bound<'_, PyAny>>) -> PyResult<Vec<Bound<'_, PyString>>> {
    texts
        .into_iter()
        .enumerate()
        .map(|(i, t)| {
            t.cast_into::<PyString>().map_err(|e| {
                let kind = e.into_inner().get_type().name().map_or("?".into(), |n| n.to_string());
                PyTypeError::new_err(format!("texts[{i}] must be str, not {kind}"))
            })
        })
        .collect()
}
