//! The counting ledger as a Python dict, and back (for the run store).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::ledger::Ledger;
use crate::utf8::INVALID_KINDS;

pub fn to_dict<'py>(py: Python<'py>, ledger: &Ledger) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("documents", ledger.documents)?;
    d.set_item("bytes", ledger.bytes)?;
    let invalid = PyDict::new(py);
    for kind in INVALID_KINDS {
        invalid.set_item(kind.name(), ledger.invalid_bytes[kind as usize])?;
    }
    d.set_item("invalid_utf8_bytes", invalid)?;
    let examples = PyList::empty(py);
    for &(kind, document, offset) in &ledger.invalid_examples {
        let e = PyDict::new(py);
        e.set_item("kind", kind.name())?;
        e.set_item("document", document)?;
        e.set_item("offset", offset)?;
        examples.append(e)?;
    }
    d.set_item("invalid_utf8_examples", examples)?;
    d.set_item("lone_surrogates", ledger.surrogates)?;
    d.set_item("unmatched_bytes", ledger.unmatched_bytes)?;
    d.set_item("pieces_cut", ledger.pieces_cut)?;
    d.set_item("dropped_word_mass", ledger.dropped_word_mass)?;
    d.set_item("dropped_bytes", ledger.dropped_bytes)?;
    Ok(d)
}

pub fn from_dict(d: &Bound<'_, PyDict>) -> PyResult<Ledger> {
    let get = |key: &str| -> PyResult<Bound<'_, PyAny>> {
        d.get_item(key)?.ok_or_else(|| PyValueError::new_err(format!("ledger lacks {key:?}")))
    };
    let optional = |key: &str| -> PyResult<u64> { d.get_item(key)?.map_or(Ok(0), |v| v.extract()) };
    let mut ledger = Ledger {
        documents: get("documents")?.extract()?,
        bytes: get("bytes")?.extract()?,
        surrogates: get("lone_surrogates")?.extract()?,
        unmatched_bytes: get("unmatched_bytes")?.extract()?,
        pieces_cut: get("pieces_cut")?.extract()?,
        // Stores written before memory budgets existed lack these (nothing was dropped).
        dropped_word_mass: optional("dropped_word_mass")?,
        dropped_bytes: optional("dropped_bytes")?,
        ..Ledger::default()
    };
    let invalid = get("invalid_utf8_bytes")?;
    for kind in INVALID_KINDS {
        ledger.invalid_bytes[kind as usize] = invalid.get_item(kind.name())?.extract()?;
    }
    for e in get("invalid_utf8_examples")?.try_iter()? {
        let e = e?;
        let name: String = e.get_item("kind")?.extract()?;
        let kind = INVALID_KINDS
            .into_iter()
            .find(|k| k.name() == name)
            .ok_or_else(|| PyValueError::new_err(format!("unknown ledger kind {name:?}")))?;
        ledger.invalid_examples.push((
            kind,
            e.get_item("document")?.extract()?,
            e.get_item("offset")?.extract()?,
        ));
    }
    Ok(ledger)
}
