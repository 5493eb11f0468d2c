//! `CoreTokenizer`: the frozen native tokenizer behind `bytebpe.Tokenizer`.

use std::collections::HashSet;
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::pybacked::{PyBackedBytes, PyBackedStr};
use pyo3::types::{PyBytes, PyDict};

use super::enter::detached_quiet;
use super::errors::to_py;
use crate::pretokenize::Pattern;
use crate::train::MergeRecord;
use crate::vocab::Vocab;
use crate::{Rank, Tokenizer};

/// Immutable, so one instance is shared by many threads without locks.
#[pyclass(frozen, module = "bytebpe._bytebpe")]
pub struct CoreTokenizer {
    pub(super) inner: Arc<Tokenizer>,
}

type MergeTuple = (Rank, Rank, Rank, u64);

#[pymethods]
impl CoreTokenizer {
    /// Rebuilds a tokenizer from its merge log, checking every record.
    #[staticmethod]
    fn from_merges(
        py: Python<'_>,
        pattern: &str,
        merges: Vec<MergeTuple>,
        special_tokens: Vec<(String, Rank)>,
    ) -> PyResult<Self> {
        let pattern = pattern.to_owned();
        detached_quiet(py, move || {
            let merges = merges
                .into_iter()
                .map(|(left, right, token, count)| MergeRecord {
                    left,
                    right,
                    token,
                    count,
                })
                .collect();
            let vocab = Vocab::from_merges(merges)?;
            let tokenizer =
                Tokenizer::with_special_ids(vocab, Pattern::new(&pattern)?, special_tokens)?;
            Ok(Self {
                inner: Arc::new(tokenizer),
            })
        })
    }

    #[getter]
    fn pattern(&self) -> &str {
        self.inner.pattern().as_str()
    }

    #[getter]
    fn special_tokens(&self) -> Vec<(String, Rank)> {
        self.inner.specials().tokens().to_vec()
    }

    #[getter]
    fn vocab_size(&self) -> usize {
        self.inner.vocab_size()
    }

    #[getter]
    fn n_mergeable(&self) -> usize {
        self.inner.vocab().len()
    }

    fn merges(&self) -> Vec<MergeTuple> {
        let merges = self.inner.vocab().merges();
        merges
            .iter()
            .map(|m| (m.left, m.right, m.token, m.count))
            .collect()
    }

    fn mergeable_ranks<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let ranks = PyDict::new(py);
        for (id, bytes) in self.inner.vocab().tokens().iter().enumerate() {
            ranks.set_item(PyBytes::new(py, bytes), id)?;
        }
        Ok(ranks)
    }

    fn token_bytes<'py>(&self, py: Python<'py>, id: Rank) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = self.inner.decode_bytes(&[id]).map_err(to_py)?;
        Ok(PyBytes::new(py, &bytes))
    }

    fn encode_ordinary(&self, py: Python<'_>, text: PyBackedStr) -> PyResult<Vec<Rank>> {
        detached_quiet(py, || self.inner.encode_ordinary(&text))
    }

    fn encode(
        &self,
        py: Python<'_>,
        text: PyBackedStr,
        allowed_special: HashSet<String>,
    ) -> PyResult<Vec<Rank>> {
        detached_quiet(py, || {
            self.inner.encode(&text, |special| {
                std::str::from_utf8(special).is_ok_and(|s| allowed_special.contains(s))
            })
        })
    }

    fn encode_bytes(&self, py: Python<'_>, data: PyBackedBytes) -> PyResult<Vec<Rank>> {
        detached_quiet(py, || self.inner.encode_bytes(&data))
    }

    #[pyo3(signature = (texts, num_threads=None))]
    fn encode_ordinary_batch(
        &self,
        py: Python<'_>,
        texts: Vec<PyBackedStr>,
        num_threads: Option<usize>,
    ) -> PyResult<Vec<Vec<Rank>>> {
        detached_quiet(py, || {
            let texts: Vec<&str> = texts.iter().map(|t| &**t).collect();
            self.inner.encode_ordinary_batch(&texts, num_threads)
        })
    }

    fn decode_bytes<'py>(&self, py: Python<'py>, ids: Vec<Rank>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = detached_quiet(py, || self.inner.decode_bytes(&ids))?;
        Ok(PyBytes::new(py, &bytes))
    }
}
