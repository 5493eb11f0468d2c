//! UTF-8 helpers for the Python decoders (exact accounting of what decoding replaces).

use pyo3::prelude::*;

/// Bytes of `data` that are not part of valid UTF-8.
#[pyfunction]
pub fn count_invalid_utf8(data: &[u8]) -> u64 {
    crate::utf8::invalid_bytes(data)
}

/// Length of the unfinished character at the end of `data` (0 to 3).
#[pyfunction]
pub fn incomplete_utf8_tail(data: &[u8]) -> usize {
    crate::utf8::incomplete_tail(data)
}
