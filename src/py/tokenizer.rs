//! `CoreTokenizer`: the frozen native tokenizer behind `bytebpe.Tokenizer`.

use std::cell::RefCell;
use std::collections::HashSet;
use std::sync::{Arc, OnceLock};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyList, PyString};

use super::convert::{
    held_document, held_text, id_list, merge_record, merge_tuple, strs, unpacked_ids, HeldDocument,
    HeldText, MergeTuple,
};
use super::decoding::{decode_ids, decode_lists};
use super::encoding::{encode_allowing, encode_until_failure};
use super::enter::{detached, detached_quiet, detached_unless_small};
use super::errors::to_py;
use super::filled_bytes::filled_bytes;
use super::ints::IdInts;
use super::token_bytes::TokenBytes;
use crate::encode::{write_ids, FlatBatch};
use crate::vocab::Vocab;
use crate::{ordered, train};
use crate::{Rank, Tokenizer};

/// Immutable, so one instance is shared by many threads without locks.
#[pyclass(frozen, module = "bytebpe._bytebpe")]
pub struct CoreTokenizer {
    /// The core tokenizer, shared with detached work.
    pub(super) inner: Arc<Tokenizer>,
    /// One Python int per token id, made on first use, that token lists are built from.
    ints: OnceLock<IdInts>,
    /// One `bytes` per token id, made on first use (`tokens_bytes`).
    token_bytes: OnceLock<TokenBytes>,
}

impl CoreTokenizer {
    pub(super) fn new(tokenizer: Tokenizer) -> Self {
        Self { inner: Arc::new(tokenizer), ints: OnceLock::new(), token_bytes: OnceLock::new() }
    }

    /// The ids of `text`, special tokens in `allowed` as their ids (None: none), without
    /// the GIL unless the text is short.
    fn encode_detached(
        &self,
        py: Python<'_>,
        text: &str,
        allowed: Option<&HashSet<String>>,
    ) -> PyResult<Vec<Rank>> {
        detached_unless_small(py, text.len(), || encode_allowing(&self.inner, text, allowed))
    }

    fn list<'py>(&self, py: Python<'py>, ids: &[Rank]) -> PyResult<Bound<'py, PyList>> {
        // Only the mergeable ids are cached, so the cache is sized by the vocabulary and
        // never by an id; special ids (rare in output) get a fresh int.
        made(&self.ints, || IdInts::new(py, self.inner.vocab().len() as Rank))?.list(py, ids)
    }
}

/// What `cell` holds, made by `make` the first time (threads that both find it empty both
/// make it, and the first stored is kept; a failure leaves the cell empty, for the next
/// call to try again).
fn made<T>(cell: &OnceLock<T>, make: impl FnOnce() -> PyResult<T>) -> PyResult<&T> {
    match cell.get() {
        Some(value) => Ok(value),
        None => {
            let value = make()?;
            Ok(cell.get_or_init(|| value))
        }
    }
}

/// A tokenizer from a vocabulary `make` builds (see [`Tokenizer::build`]), with the GIL
/// released.
fn build(
    py: Python<'_>,
    pattern: &str,
    special_tokens: Vec<(String, Rank)>,
    make: impl FnOnce(&[Rank]) -> crate::Result<Vocab> + Send,
) -> PyResult<CoreTokenizer> {
    let pattern = pattern.to_owned();
    detached_quiet(py, move || {
        Ok(CoreTokenizer::new(Tokenizer::build(&pattern, special_tokens, make)?))
    })
}

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
        let merges = merges.into_iter().map(merge_record).collect();
        build(py, pattern, special_tokens, move |reserved| Vocab::from_merges(merges, reserved))
    }

    /// Builds a tokenizer from token bytes and ids (tiktoken's mergeable ranks).
    #[staticmethod]
    fn from_ranks(
        py: Python<'_>,
        pattern: &str,
        ranks: Vec<(Vec<u8>, Rank)>,
        special_tokens: Vec<(String, Rank)>,
    ) -> PyResult<Self> {
        build(py, pattern, special_tokens, move |reserved| Vocab::from_ranks(ranks, reserved))
    }

    /// Builds a tokenizer from token bytes by id (b"" at a special token's id) and the
    /// merge log of some of them (an extended tokenizer whose base had no log).
    #[staticmethod]
    fn from_tokens(
        py: Python<'_>,
        pattern: &str,
        tokens: Vec<Vec<u8>>,
        merges: Vec<MergeTuple>,
        special_tokens: Vec<(String, Rank)>,
    ) -> PyResult<Self> {
        let merges = merges.into_iter().map(merge_record).collect();
        build(py, pattern, special_tokens, move |_| Vocab::from_tokens(tokens, merges))
    }

    /// This tokenizer with `merges` appended (new ids skip the special ids) and
    /// `new_special_tokens` after every id in use.
    fn extended(
        &self,
        py: Python<'_>,
        merges: Vec<MergeTuple>,
        new_special_tokens: Vec<String>,
    ) -> PyResult<Self> {
        let start = self.inner.clone();
        detached_quiet(py, move || {
            let merges = merges.into_iter().map(merge_record).collect();
            Ok(Self::new(train::warm::extend(&start, merges, &new_special_tokens)?))
        })
    }

    /// This tokenizer with tokens for the `seeds` made first (merges with count 0).
    fn with_seeds(&self, py: Python<'_>, seeds: Vec<Vec<u8>>) -> PyResult<Self> {
        let start = self.inner.clone();
        detached_quiet(py, move || Ok(Self::new(train::warm::seed(&start, &seeds)?)))
    }

    /// Every split of every token into two tokens, as (left, right, token) ids, by token
    /// id then length of the left part (linear in the total token bytes).
    fn splits(&self, py: Python<'_>) -> PyResult<Vec<(Rank, Rank, Rank)>> {
        detached_quiet(py, || self.inner.vocab().splits())
    }

    /// Mergeable token bytes in id order; b"" at a special token's id among them.
    fn tokens<'py>(&self, py: Python<'py>) -> Vec<Bound<'py, PyBytes>> {
        self.inner.vocab().tokens().iter().map(|t| PyBytes::new(py, t)).collect()
    }

    #[pyo3(signature = (num_threads=None))]
    fn verify(&self, py: Python<'_>, num_threads: Option<usize>) -> PyResult<Vec<String>> {
        crate::parallel::checked(num_threads).map_err(to_py)?;
        Ok(py.detach(|| self.inner.verify(num_threads)))
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
        self.inner.vocab().n_tokens()
    }

    fn merges(&self) -> Vec<MergeTuple> {
        self.inner.vocab().merges().iter().map(merge_tuple).collect()
    }

    fn mergeable_ranks<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let ranks = PyDict::new(py);
        for (id, bytes) in self.inner.vocab().tokens().iter().enumerate() {
            if bytes.is_empty() {
                continue; // a special token's id
            }
            ranks.set_item(PyBytes::new(py, bytes), id)?;
        }
        Ok(ranks)
    }

    fn token_bytes<'py>(&self, py: Python<'py>, id: Rank) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = self.inner.decode_bytes(&[id]).map_err(to_py)?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// The bytes of each of `ids`, as a list of `bytes` shared per id.
    fn tokens_bytes<'py>(
        &self,
        py: Python<'py>,
        ids: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let ids = id_list(ids)?;
        made(&self.token_bytes, || TokenBytes::new(py, &self.inner))?.list(py, &ids)
    }

    fn encode_ordinary<'py>(
        &self,
        py: Python<'py>,
        text: Bound<'py, PyString>,
    ) -> PyResult<Bound<'py, PyList>> {
        let ids = self.encode_detached(py, held_text(&text)?.as_str(), None)?;
        self.list(py, &ids)
    }

    /// The ids of `text` with the special tokens in `allowed_special` as their ids (None:
    /// none, as `encode_ordinary`).
    #[pyo3(signature = (text, allowed_special=None))]
    fn encode<'py>(
        &self,
        py: Python<'py>,
        text: Bound<'py, PyString>,
        allowed_special: Option<HashSet<String>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let ids = self.encode_detached(py, held_text(&text)?.as_str(), allowed_special.as_ref())?;
        self.list(py, &ids)
    }

    /// [`Self::encode`] (or `encode_ordinary` when `allowed_special` is None) with the
    /// ids as native-endian `u32`s in a bytearray, for `np.frombuffer`: no Python int per
    /// id (building those cost as much as the encoding), and the array it backs stays
    /// writable.
    #[pyo3(signature = (text, allowed_special=None))]
    fn encode_u32<'py>(
        &self,
        py: Python<'py>,
        text: Bound<'py, PyString>,
        allowed_special: Option<HashSet<String>>,
    ) -> PyResult<Bound<'py, PyByteArray>> {
        let ids = self.encode_detached(py, held_text(&text)?.as_str(), allowed_special.as_ref())?;
        PyByteArray::new_with(py, ids.len() * 4, |buf| {
            write_ids(&ids, buf, 4);
            Ok(())
        })
    }

    fn encode_bytes<'py>(
        &self,
        py: Python<'py>,
        data: PyBackedBytes,
    ) -> PyResult<Bound<'py, PyList>> {
        let ids = detached_unless_small(py, data.len(), || self.inner.encode_bytes(&data))?;
        self.list(py, &ids)
    }

    /// The pool's threads and this one encode chunks of documents (`ordered::run`);
    /// this thread also turns the encoded ones into lists, in order, as they are ready,
    /// re-taking the GIL only for that: building Python lists cannot run in parallel, so
    /// it overlaps the encoding instead of following it, and this thread encodes whenever
    /// nothing is ready to build, so no core idles and none is shared by three threads.
    /// The texts are read as UTF-8 (a copy for non-ASCII `str`, made by CPython under the
    /// GIL) chunk by chunk as `ordered::run` prepares them, so the pool starts after the
    /// first chunk's, not the whole batch's; a lone surrogate raises UnicodeEncodeError.
    /// Each text is encoded as [`Self::encode`] with `allowed_special` (None: none, as
    /// `encode_ordinary`).
    #[pyo3(signature = (texts, num_threads=None, allowed_special=None))]
    fn encode_batch<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<Bound<'py, PyAny>>,
        num_threads: Option<usize>,
        allowed_special: Option<HashSet<String>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let allowed = allowed_special.as_ref();
        let pool = crate::parallel::checked(num_threads).map_err(to_py)?;
        let texts = strs(texts)?;
        if texts.len() < 2 {
            // Nothing to share: no helper thread for a one-document batch.
            let lists = texts
                .into_iter()
                .map(|t| {
                    let t = held_text(&t)?;
                    let ids =
                        detached_quiet(py, || encode_allowing(&self.inner, t.as_str(), allowed))?;
                    self.list(py, &ids)
                })
                .collect::<PyResult<Vec<_>>>()?;
            return PyList::new(py, lists);
        }
        // Chunks by characters: the UTF-8 length is known only once a text is read.
        let weights = texts.iter().map(|t| t.len()).collect::<PyResult<Vec<usize>>>()?;
        let chunks = ordered::ranges(weights, pool.current_num_threads());
        let texts: Vec<Py<PyString>> = texts.into_iter().map(Bound::unbind).collect();
        let views: Vec<OnceLock<HeldText>> = texts.iter().map(|_| OnceLock::new()).collect();
        let inner = &self.inner;
        let encode_chunk = |c: usize| {
            encode_until_failure(chunks[c].clone(), |i| {
                let text = views[i].get().expect("ordered::run prepared it");
                encode_allowing(inner, text.as_str(), allowed)
            })
        };
        let mut lists: Vec<Py<PyList>> = Vec::with_capacity(texts.len());
        detached(py, |reattach| {
            // Preparing and taking both run on this thread, one at a time.
            let reattach = RefCell::new(reattach);
            let prepare = |c: usize| {
                (reattach.borrow_mut())(&mut |py| {
                    for i in chunks[c].clone() {
                        let _ = views[i].set(held_text(texts[i].bind(py))?);
                    }
                    Ok(())
                })
            };
            ordered::run(&pool, chunks.len(), prepare, encode_chunk, |mut ready| {
                let mut failed = None;
                (reattach.borrow_mut())(&mut |py| {
                    // Drained, so each document's ids are freed once its list is built.
                    for ids in ready.drain(..).flatten() {
                        match ids {
                            Ok(ids) => lists.push(self.list(py, &ids)?.unbind()),
                            Err(e) => {
                                failed = Some(e.in_document(lists.len()));
                                break;
                            }
                        }
                    }
                    Ok(())
                })?;
                failed.map_or(Ok(()), Err)
            })
        })?;
        PyList::new(py, lists)
    }

    /// Encodes `str`/`bytes` documents into one flat array of `itemsize`-byte tokens and
    /// `len + 1` int64 offsets, both as raw native-endian bytes (for `numpy.frombuffer`).
    #[pyo3(signature = (docs, itemsize, eot=None, num_threads=None))]
    fn encode_batch_flat<'py>(
        &self,
        py: Python<'py>,
        docs: &Bound<'py, PyList>,
        itemsize: usize,
        eot: Option<Rank>,
        num_threads: Option<usize>,
    ) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
        let pool = crate::parallel::checked(num_threads).map_err(to_py)?;
        if itemsize != 2 && itemsize != 4 {
            return Err(PyValueError::new_err(format!("itemsize must be 2 or 4, not {itemsize}")));
        }
        // Chunks by length (a str's characters, a bytes' bytes): the UTF-8 length of a str
        // is known only once it is read.
        let weights = docs.iter().map(|d| d.len().unwrap_or(1)).collect::<Vec<usize>>();
        let chunks = ordered::ranges(weights, pool.current_num_threads());
        let objects: Vec<Py<PyAny>> = docs.iter().map(Bound::unbind).collect();
        let held: Vec<OnceLock<HeldDocument>> = objects.iter().map(|_| OnceLock::new()).collect();
        let inner = &self.inner;
        let encode_chunk = |c: usize| {
            encode_until_failure(chunks[c].clone(), |i| {
                let doc = held[i].get().expect("ordered::run prepared it").document();
                inner.encode_document(&doc, eot).map_err(|e| e.in_document(i))
            })
        };
        let mut parts: Vec<Vec<Rank>> = Vec::with_capacity(objects.len());
        detached(py, |reattach| {
            // Each chunk's non-ASCII texts are encoded to UTF-8 here (with the GIL) while
            // the chunks before it are being tokenized, not all of them before any is.
            let prepare = |c: usize| {
                reattach(&mut |py| {
                    for i in chunks[c].clone() {
                        let _ = held[i].set(held_document(objects[i].bind(py))?);
                    }
                    Ok(())
                })
            };
            ordered::run(&pool, chunks.len(), prepare, encode_chunk, |mut ready| {
                for ids in ready.drain(..).flatten() {
                    parts.push(ids?);
                }
                Ok(())
            })
        })?;
        let batch = FlatBatch::new(parts);
        // One parallel pass writes the ids straight into the bytes object Python gets.
        // SAFETY: on None, `FlatBatch::write` has written every byte.
        let token_bytes = unsafe {
            filled_bytes(py, batch.len() * itemsize, |buf| {
                match py.detach(|| pool.install(|| batch.write(buf, itemsize))) {
                    None => Ok(()),
                    Some(_) => Err(PyValueError::new_err(format!(
                        "token ids up to {} do not fit {itemsize}-byte integers",
                        self.inner.vocab_size() - 1
                    ))),
                }
            })
        }?;
        let offsets = batch.offsets();
        let offset_bytes = PyBytes::new_with(py, offsets.len() * 8, |buf| {
            for (chunk, &o) in buf.chunks_exact_mut(8).zip(offsets) {
                chunk.copy_from_slice(&(o as i64).to_ne_bytes());
            }
            Ok(())
        })?;
        Ok((token_bytes, offset_bytes))
    }

    #[pyo3(signature = (batch, num_threads=None, skip_special=false))]
    fn decode_bytes_batch<'py>(
        &self,
        py: Python<'py>,
        batch: Vec<Bound<'py, PyAny>>,
        num_threads: Option<usize>,
        skip_special: bool,
    ) -> PyResult<Vec<Bound<'py, PyBytes>>> {
        let batch = batch.iter().map(id_list).collect::<PyResult<Vec<_>>>()?;
        decode_lists(py, &self.inner, batch, num_threads, skip_special)
    }

    #[pyo3(signature = (ids, skip_special=false))]
    fn decode_bytes<'py>(
        &self,
        py: Python<'py>,
        ids: &Bound<'py, PyAny>,
        skip_special: bool,
    ) -> PyResult<Bound<'py, PyBytes>> {
        decode_ids(py, &self.inner, id_list(ids)?, skip_special)
    }

    /// [`Self::decode_bytes`] of ids packed as native-endian integers of `itemsize` bytes
    /// (a NumPy array's buffer): no Python int per id on either side. None when an id is
    /// negative or past `u32` (the caller then takes the list path, which names it).
    #[pyo3(signature = (data, itemsize, signed, skip_special=false))]
    fn decode_packed<'py>(
        &self,
        py: Python<'py>,
        data: PyBackedBytes,
        itemsize: usize,
        signed: bool,
        skip_special: bool,
    ) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let Some(ids) = unpacked_ids(&data, itemsize, signed)? else {
            return Ok(None);
        };
        decode_ids(py, &self.inner, ids, skip_special).map(Some)
    }

    /// [`Self::decode_bytes_batch`] of ids packed as [`Self::decode_packed`] reads them, all
    /// of one `itemsize` and signedness; None when an id is negative or past `u32`.
    #[pyo3(signature = (batch, itemsize, signed, num_threads=None, skip_special=false))]
    fn decode_packed_batch<'py>(
        &self,
        py: Python<'py>,
        batch: Vec<PyBackedBytes>,
        itemsize: usize,
        signed: bool,
        num_threads: Option<usize>,
        skip_special: bool,
    ) -> PyResult<Option<Vec<Bound<'py, PyBytes>>>> {
        let unpacked = batch.iter().map(|data| unpacked_ids(data, itemsize, signed));
        let Some(lists) = unpacked.collect::<PyResult<Vec<_>>>()?.into_iter().collect() else {
            return Ok(None);
        };
        decode_lists(py, &self.inner, lists, num_threads, skip_special).map(Some)
    }
}
