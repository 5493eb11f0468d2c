//! Conversions shared by the binding's classes: documents held as Python objects while
//! the GIL is released, and merge records as tuples.

use pyo3::prelude::*;
use pyo3::pybacked::{PyBackedBytes, PyBackedStr};
use pyo3::types::PyString;

use crate::document::Document;
use crate::vocab::MergeRecord;
use crate::Rank;

/// A document kept alive as a Python object while the GIL is released.
pub(super) enum HeldDocument {
    /// An ASCII `str`: its own storage is already UTF-8, read in place.
    Text(PyBackedStr),
    /// Any other `str`, encoded to UTF-8 for as long as it is held.
    EncodedText(PyBackedBytes),
    Bytes(PyBackedBytes),
}

impl HeldDocument {
    pub(super) fn document(&self) -> Document<'_> {
        match self {
            HeldDocument::Text(s) => Document { data: s.as_bytes(), is_text: true },
            HeldDocument::EncodedText(b) => Document { data: b, is_text: true },
            HeldDocument::Bytes(b) => Document { data: b, is_text: false },
        }
    }
}

/// Holds a `str` (valid UTF-8 only) or `bytes`/`bytearray` document.
pub(super) fn held_document(item: &Bound<'_, PyAny>) -> PyResult<HeldDocument> {
    if let Ok(text) = item.cast::<PyString>() {
        return held_text(text);
    }
    Ok(HeldDocument::Bytes(item.extract()?))
}

/// Holds a `str` as UTF-8 without leaving a copy behind: an ASCII string is read in place;
/// any other is encoded into a bytes object freed with the batch. (Reading it in place
/// would make CPython cache its UTF-8 form inside the `str` for the string's lifetime: as
/// much memory again as the caller's non-ASCII text, kept after training.) A lone
/// surrogate raises Python's own `UnicodeEncodeError`.
pub(super) fn held_text(text: &Bound<'_, PyString>) -> PyResult<HeldDocument> {
    if text.call_method0(pyo3::intern!(text.py(), "isascii"))?.is_truthy()? {
        return Ok(HeldDocument::Text(PyBackedStr::try_from(text.clone())?));
    }
    Ok(HeldDocument::EncodedText(text.encode_utf8()?.into()))
}

/// A merge record as Python sees it: (left, right, token, count).
pub(super) type MergeTuple = (Rank, Rank, Rank, u64);

pub(super) fn merge_record((left, right, token, count): MergeTuple) -> MergeRecord {
    MergeRecord { left, right, token, count }
}

pub(super) fn merge_tuple(m: &MergeRecord) -> MergeTuple {
    (m.left, m.right, m.token, m.count)
}
