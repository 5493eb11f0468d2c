//! The Python binding (`bytebpe._bytebpe`). Converts arguments, runs the core detached,
//! converts results; policy and friendly errors live in the Python facade.

mod combine;
mod convert;
mod decoding;
mod encoding;
mod enter;
mod errors;
mod filled_bytes;
mod ints;
mod ledger;
mod pretokenize;
mod reader;
mod str_utf8;
mod token_bytes;
mod tokenizer;
mod trainer;
mod utf8;

use pyo3::prelude::*;

#[pymodule(gil_used = false)]
fn _bytebpe(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("MIN_MEMORY_LIMIT", crate::train::budget::MIN_LIMIT)?;
    m.add("MEMORY_RESERVED", crate::train::budget::RESERVED)?;
    m.add_class::<tokenizer::CoreTokenizer>()?;
    m.add_class::<trainer::WordCounter>()?;
    m.add_class::<reader::DocumentReader>()?;
    m.add_function(wrap_pyfunction!(resolve_pattern, m)?)?;
    m.add_function(wrap_pyfunction!(utf8::count_invalid_utf8, m)?)?;
    m.add_function(wrap_pyfunction!(utf8::incomplete_utf8_tail, m)?)?;
    m.add_function(wrap_pyfunction!(pretokenize::_split, m)?)?;
    m.add_function(wrap_pyfunction!(combine::merge_snapshots, m)?)?;
    m.add_function(wrap_pyfunction!(combine::merge_ledgers, m)?)?;
    m.add_function(wrap_pyfunction!(combine::sequence_fingerprint, m)?)?;
    m.add_function(wrap_pyfunction!(combine::join_fingerprints, m)?)?;
    errors::register(m)?;
    Ok(())
}

/// The regex of a built-in pattern name, or the argument itself.
#[pyfunction]
fn resolve_pattern(name_or_regex: &str) -> &str {
    crate::pretokenize::resolve(name_or_regex)
}
