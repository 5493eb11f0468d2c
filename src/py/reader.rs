//! `DocumentReader`: a file (read by Rust) or a fed stream, counted by
//! `WordCounter.count_from`.

use std::sync::{Mutex, MutexGuard};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::{PyBytes, PyString};

use super::enter::detached_quiet;
use super::errors::to_py;
use crate::read::{self, Delimit, ReadOptions};

#[pyclass(module = "bytebpe._bytebpe", frozen)]
pub struct DocumentReader {
    /// Locked by one call at a time; calls run detached.
    inner: Mutex<read::DocumentReader>,
}

impl DocumentReader {
    pub(super) fn lock(&self) -> MutexGuard<'_, read::DocumentReader> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[pymethods]
impl DocumentReader {
    /// Opens `path` (decompressed by extension), or, with `path=None`, a reader of the
    /// bytes given to `feed` (named `name` in errors). `documents` is "lines", "files"
    /// (one document) or "separator" (with `separator`); `jsonl_field` reads JSON Lines.
    /// `hold_bytes` (a counter's, under a memory limit) bounds the bytes of one document
    /// held at once.
    #[new]
    #[pyo3(signature = (path, name, documents, separator, jsonl_field, cuts, chunk_size, num_threads=None, hold_bytes=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        path: Option<std::path::PathBuf>,
        name: &str,
        documents: &str,
        separator: Option<Vec<u8>>,
        jsonl_field: Option<String>,
        cuts: bool,
        chunk_size: usize,
        num_threads: Option<usize>,
        hold_bytes: Option<usize>,
    ) -> PyResult<Self> {
        crate::parallel::checked(num_threads).map_err(to_py)?;
        let delimit = match (documents, separator) {
            ("lines", None) => Delimit::Lines,
            ("files", None) => Delimit::Whole,
            ("separator", Some(sep)) => Delimit::Separator(sep),
            _ => {
                return Err(PyValueError::new_err(format!(
                    "documents={documents:?} needs a separator exactly when it is \"separator\""
                )))
            }
        };
        let options = ReadOptions {
            delimit,
            jsonl_field,
            cuts,
            chunk_size,
            threads: num_threads,
            hold_bytes,
        };
        let reader = match path {
            Some(path) => detached_quiet(py, || read::DocumentReader::open(path, options))?,
            None => read::DocumentReader::fed(name, options).map_err(to_py)?,
        };
        Ok(Self { inner: Mutex::new(reader) })
    }

    #[getter]
    fn name(&self) -> String {
        self.lock().name().to_owned()
    }

    /// True when every document has been handed out.
    #[getter]
    fn exhausted(&self) -> bool {
        self.lock().exhausted()
    }

    /// Bytes held for a document without a safe cut yet.
    #[getter]
    fn pending_bytes(&self) -> usize {
        self.lock().pending()
    }

    /// Gives a fed reader more bytes.
    fn feed(&self, py: Python<'_>, data: PyBackedBytes) {
        py.detach(|| self.lock().feed(&data));
    }

    /// Ends a fed reader's input.
    fn finish(&self) {
        self.lock().finish();
    }

    /// The next documents, whole (for a reader made with `cuts=False`): bytes, or str for
    /// JSON Lines; an empty list once exhausted. An input error is raised after the
    /// documents before it were returned (on the next call).
    fn next_documents<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let (batch, error) = py.detach(|| {
            let mut reader = self.lock();
            match reader.take_deferred() {
                Some(e) => (read::Batch::default(), Some(e)),
                None => reader.next_batch(read::BATCH_BYTES),
            }
        });
        if batch.spans.iter().any(|s| !s.ends || s.offset != 0) {
            return Err(PyValueError::new_err(
                "next_documents needs a reader made with cuts=False",
            ));
        }
        if let Some(e) = error {
            if batch.spans.is_empty() {
                return Err(to_py(e));
            }
            self.lock().defer(e);
        }
        batch
            .spans
            .iter()
            .map(|span| {
                let data = batch.bytes(span);
                Ok(match span.is_text {
                    // JSON text is valid UTF-8 (checked before parsing); checked again
                    // here 32 bytes at a time, not a byte at a time.
                    true => {
                        let text = crate::utf8::as_utf8(data).expect("JSON text");
                        PyString::new(py, text).into_any()
                    }
                    false => PyBytes::new(py, data).into_any(),
                })
            })
            .collect()
    }

    /// Reads past `n` documents without counting them: (skipped, fingerprint from `seed`).
    fn skip(&self, py: Python<'_>, n: u64, seed: u64) -> PyResult<(u64, u64)> {
        py.detach(|| self.lock().skip(n, seed)).map_err(to_py)
    }
}
