//! Combining counts made apart (the cluster path, `bytebpe.ray`): snapshots, ledgers and
//! fingerprints of consecutive blocks joined exactly (see `crate::train::combine`).

use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::{PyBytes, PyDict, PyList};

use super::convert::{held_document, HeldDocument};
use super::enter::detached_quiet;
use super::ledger;
use crate::document::Document;
use crate::train::combine;

/// The word-count snapshot of the summed tables of `snapshots` (u64, checked).
#[pyfunction]
pub fn merge_snapshots<'py>(
    py: Python<'py>,
    snapshots: Vec<PyBackedBytes>,
) -> PyResult<Bound<'py, PyBytes>> {
    let merged = detached_quiet(py, || {
        let refs: Vec<&[u8]> = snapshots.iter().map(|s| &s[..]).collect();
        combine::merge_snapshots(&refs)
    })?;
    Ok(PyBytes::new(py, &merged))
}

/// The ledger of consecutive parts of the input, given in order (document numbers of
/// each part shifted by the documents before it).
#[pyfunction]
pub fn merge_ledgers<'py>(
    py: Python<'py>,
    ledgers: Vec<Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyDict>> {
    let parts = ledgers.iter().map(ledger::from_dict).collect::<PyResult<Vec<_>>>()?;
    ledger::to_dict(py, &combine::merge_ledgers(&parts))
}

/// The joinable fingerprint of `items` (str/bytes documents) in order.
#[pyfunction]
pub fn sequence_fingerprint(items: &Bound<'_, PyList>) -> PyResult<u64> {
    let held = items.iter().map(|d| held_document(&d)).collect::<PyResult<Vec<_>>>()?;
    let docs: Vec<Document<'_>> = held.iter().map(HeldDocument::document).collect();
    Ok(combine::sequence_fingerprint(&docs))
}

/// The sequence fingerprint of consecutive parts given as (fingerprint, documents).
#[pyfunction]
pub fn join_fingerprints(parts: Vec<(u64, u64)>) -> u64 {
    combine::join_fingerprints(&parts)
}
