//! The binding's decode calls: ids to bytes without the GIL, one list or a batch on the
//! pool.

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use super::enter::detached_quiet;
use super::errors::to_py;
use crate::{Rank, Tokenizer};

/// The bytes of `ids`, without the GIL.
pub(super) fn decode_ids<'py>(
    py: Python<'py>,
    tokenizer: &Tokenizer,
    ids: Vec<Rank>,
    skip_special: bool,
) -> PyResult<Bound<'py, PyBytes>> {
    let bytes = detached_quiet(py, || tokenizer.decode_bytes_skipping(&ids, skip_special))?;
    Ok(PyBytes::new(py, &bytes))
}

/// The bytes of each of `batch`, on the pool.
pub(super) fn decode_lists<'py>(
    py: Python<'py>,
    tokenizer: &Tokenizer,
    batch: Vec<Vec<Rank>>,
    num_threads: Option<usize>,
    skip_special: bool,
) -> PyResult<Vec<Bound<'py, PyBytes>>> {
    crate::parallel::checked(num_threads).map_err(to_py)?;
    let decoded = detached_quiet(py, || {
        crate::parallel::pool(num_threads).install(|| {
            use rayon::prelude::*;
            batch
                .par_iter()
                .map(|ids| tokenizer.decode_bytes_skipping(ids, skip_special))
                .collect::<crate::Result<Vec<_>>>()
        })
    })?;
    Ok(decoded.iter().map(|b| PyBytes::new(py, b)).collect())
}
