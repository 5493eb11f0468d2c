//! `_split`: a debugging hook that splits text by a pattern through either path, so the
//! Python property tests can compare the hand-written splitters with fancy-regex.

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use super::errors::to_py;
use crate::error::Error;
use crate::pretokenize::Pattern;

/// The pieces of `text` under `pattern` (a built-in name or a regex), as bytes. With
/// `use_regex`, fancy-regex splits even a built-in pattern (the reference).
#[pyfunction]
pub fn _split<'py>(
    py: Python<'py>,
    pattern: &str,
    text: &str,
    use_regex: bool,
) -> PyResult<Vec<Bound<'py, PyBytes>>> {
    let pattern = Pattern::new(pattern).map_err(to_py)?;
    let mut pieces = Vec::new();
    let result = if use_regex {
        pattern.split_text_with_regex(text, |p| pieces.push(p))
    } else {
        pattern.split_text(text, |p| pieces.push(p))
    };
    result.map_err(|e| to_py(Error::PatternMatch { document: 0, message: e.to_string() }))?;
    Ok(pieces.into_iter().map(|p| PyBytes::new(py, p)).collect())
}
