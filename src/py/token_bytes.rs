//! One shared `bytes` object per token id, for `decode_tokens_bytes` (tiktoken's name):
//! a token's bytes never change, so a list of them holds references to objects made
//! once, where making a `bytes` per id (and a call per id from Python) cost more than
//! twice tiktoken's time.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

use super::errors::to_py;
use crate::{Error, Rank, Tokenizer};

pub struct TokenBytes(Vec<Py<PyBytes>>);

impl TokenBytes {
    /// The bytes of every id of `tokenizer` (a special token's are its text).
    pub fn new(py: Python<'_>, tokenizer: &Tokenizer) -> PyResult<Self> {
        let end = Rank::try_from(tokenizer.vocab_size()).expect("ids fit a Rank");
        let each = (0..end).map(|id| {
            let bytes = tokenizer.decode_bytes(&[id]).map_err(to_py)?;
            Ok(PyBytes::new(py, &bytes).unbind())
        });
        Ok(Self(each.collect::<PyResult<_>>()?))
    }

    /// A new list of the bytes of each of `ids`; an id with no token is named with its
    /// position.
    pub fn list<'py>(&self, py: Python<'py>, ids: &[Rank]) -> PyResult<Bound<'py, PyList>> {
        let each = ids.iter().enumerate().map(|(position, &id)| {
            let unknown = Error::UnknownToken { id: u64::from(id), position };
            self.0.get(id as usize).map(|b| b.bind(py)).ok_or_else(|| to_py(unknown))
        });
        PyList::new(py, each.collect::<PyResult<Vec<_>>>()?)
    }
}
