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
    Text(PyBackedStr),
    Bytes(PyBackedBytes),
}

impl HeldDocument {
    pub(super) fn document(&self) -> Document<'_> {
        match self {
            HeldDocument::Text(s) => Document { data: s.as_bytes(), is_text: true },
            HeldDocument::Bytes(b) => Document { data: b, is_text: false },
        }
    }
}

/// Holds a `str` (valid UTF-8 only) or `bytes`/`bytearray` document.
pub(super) fn held_document(item: &Bound<'_, PyAny>) -> PyResult<HeldDocument> {
    if let Ok(text) = item.cast::<PyString>() {
        return Ok(HeldDocument::Text(PyBackedStr::try_from(text.clone())?));
    }
    Ok(HeldDocument::Bytes(item.extract()?))
}

/// A merge record as Python sees it: (left, right, token, count).
pub(super) type MergeTuple = (Rank, Rank, Rank, u64);

pub(super) fn merge_record((left, right, token, count): MergeTuple) -> MergeRecord {
    MergeRecord { left, right, token, count }
}

pub(super) fn merge_tuple(m: &MergeRecord) -> MergeTuple {
    (m.left, m.right, m.token, m.count)
}
