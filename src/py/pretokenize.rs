//! `_split`: a debugging hook that splits text by a pattern through either path, so the
//! Python property tests can compare the hand-written splitters with fancy-regex.

use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use super::errors::to_py;
use crate::error::Error;
use crate::pretokenize::Pattern;

/// The last pattern `_split` compiled, with the argument it came from: the interop checks
/// split a battery of ~1,500 texts with one pattern, and compiling a regex with Unicode
/// classes takes about a millisecond, far longer than splitting one short text.
static LAST: Mutex<Option<(String, Arc<Pattern>)>> = Mutex::new(None);

fn compiled(name_or_regex: &str) -> Result<Arc<Pattern>, Error> {
    let mut last = LAST.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((source, pattern)) = last.as_ref() {
        if source == name_or_regex {
            return Ok(Arc::clone(pattern));
        }
    }
    let pattern = Arc::new(Pattern::new(name_or_regex)?);
    *last = Some((name_or_regex.to_owned(), Arc::clone(&pattern)));
    Ok(pattern)
}

/// The pieces of `text` under `pattern` (a built-in name or a regex), as bytes. With
/// `use_regex`, fancy-regex splits even a built-in pattern (the reference).
#[pyfunction]
pub fn _split<'py>(
    py: Python<'py>,
    pattern: &str,
    text: &str,
    use_regex: bool,
) -> PyResult<Vec<Bound<'py, PyBytes>>> {
    let pattern = compiled(pattern).map_err(to_py)?;
    let mut pieces = Vec::new();
    let result = if use_regex {
        pattern.split_text_with_regex(text, |p| pieces.push(p))
    } else {
        pattern.split_text(text, |p| pieces.push(p))
    };
    result.map_err(|e| to_py(Error::PatternMatch { document: 0, message: e.to_string() }))?;
    Ok(pieces.into_iter().map(|p| PyBytes::new(py, p)).collect())
}
