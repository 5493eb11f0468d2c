//! `WordCounter`: counts batches handed over by the Python layer, then trains.

use std::ops::Range;
use std::sync::OnceLock;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};

use super::convert::{
    held_document, held_text, merge_record, merge_tuple, HeldDocument, MergeTuple,
};
use super::enter::{detached, detached_quiet};
use super::errors::to_py;
use super::ledger;
use super::reader::DocumentReader;
use super::tokenizer::CoreTokenizer;
use crate::document::{Document, Segment};
use crate::fingerprint::{fingerprint, EMPTY_FINGERPRINT};
use crate::ledger::Ledger;
use crate::pretokenize::Pattern;
use crate::special::SpecialTokens;
use crate::train::batch::Items;
use crate::train::{self, Budget, Progress, TrainConfig};
use crate::vocab::MergeRecord;

#[pyclass(module = "bytebpe._bytebpe")]
pub struct WordCounter {
    /// Taken by `train`; a counter trains once.
    inner: Option<train::WordCounter>,
    /// Threads for counting and merging (default: all cores).
    threads: Option<usize>,
    /// Keep lone surrogates as their "surrogatepass" bytes instead of refusing them.
    surrogatepass: bool,
}

impl WordCounter {
    fn counter(&mut self) -> PyResult<&mut train::WordCounter> {
        self.inner.as_mut().ok_or_else(already_trained)
    }
}

fn already_trained() -> PyErr {
    PyValueError::new_err("this counter already trained")
}

#[pymethods]
impl WordCounter {
    #[new]
    #[pyo3(signature = (pattern, special_tokens, num_threads=None, surrogatepass=false, max_token_length=None, memory_limit=None))]
    fn new(
        pattern: &str,
        special_tokens: Vec<String>,
        num_threads: Option<usize>,
        surrogatepass: bool,
        max_token_length: Option<usize>,
        memory_limit: Option<u64>,
    ) -> PyResult<Self> {
        crate::parallel::checked(num_threads).map_err(to_py)?;
        let pattern = Pattern::new(pattern).map_err(to_py)?;
        // Ids are assigned after training; only the texts matter while counting.
        let specials = special_tokens.into_iter().map(|t| (t, 0)).collect();
        let specials = SpecialTokens::new(specials).map_err(to_py)?;
        let mut counter = train::WordCounter::new(pattern, specials, max_token_length);
        if let Some(limit) = memory_limit {
            counter = counter.with_budget(Budget::new(limit).map_err(to_py)?);
        }
        Ok(Self { inner: Some(counter), threads: num_threads, surrogatepass })
    }

    /// Counts a batch of `str`/`bytes` documents; `first_index` numbers them in errors.
    /// Every item's type is checked first; then the pool counts while this thread reads
    /// the next items as UTF-8 (a copy for a non-ASCII `str`, under the GIL), so that
    /// copy overlaps counting (`train::batch`); a huge document is read first and counted
    /// in parts. Under a memory limit, whose checkpoints cut the batch, every document is
    /// read first and counted whole. On any error nothing of the batch is counted.
    fn add_batch(
        &mut self,
        py: Python<'_>,
        items: &Bound<'_, PyList>,
        first_index: u64,
    ) -> PyResult<()> {
        let objects: Vec<Bound<'_, PyAny>> = items.iter().collect();
        let mut weights = Vec::with_capacity(objects.len());
        for (i, item) in objects.iter().enumerate() {
            weights.push((weight(item, first_index + i as u64)?, true));
        }
        let (threads, surrogatepass) = (self.threads, self.surrogatepass);
        let counter = self.counter()?;
        let held: Vec<OnceLock<HeldDocument>> = objects.iter().map(|_| OnceLock::new()).collect();
        let counted = if counter.budget().is_some() {
            for (slot, item) in held.iter().zip(&objects) {
                let _ = slot.set(hold(item, surrogatepass)?);
            }
            let held = &held;
            detached_quiet(py, move || {
                let docs: Vec<Document<'_>> =
                    held.iter().map(|h| h.get().expect("held above").document()).collect();
                counter.add_documents(&docs, first_index, threads)
            })
        } else {
            let pool_threads = crate::parallel::pool(threads).current_num_threads();
            // A huge document is cut into segments that pre-tokenize as the whole does
            // (`read/cut.rs`), so every thread counts part of it and Ctrl-C is seen
            // between its parts. Its UTF-8 is needed to find the cuts: it is read now.
            let mut parts: Vec<(usize, Option<Range<usize>>)> = Vec::with_capacity(weights.len());
            let mut part_weights = Vec::with_capacity(weights.len());
            let cuts = counter.cuts_allowed();
            for (j, &(w, ends)) in weights.iter().enumerate() {
                if !(cuts && w >= HUGE_DOCUMENT) {
                    parts.push((j, None));
                    part_weights.push((w, ends));
                    continue;
                }
                let _ = held[j].set(hold(&objects[j], surrogatepass)?);
                let data = held[j].get().expect("set above").document().data;
                for range in crate::read::cut::segments(data, DOCUMENT_PART) {
                    part_weights.push((range.len(), range.end == data.len()));
                    parts.push((j, Some(range)));
                }
            }
            let batch = Items::new(&part_weights, first_index, pool_threads);
            let objects: Vec<Py<PyAny>> = objects.iter().map(|o| o.clone().unbind()).collect();
            let (held, parts) = (&held, &parts);
            detached(py, |reattach| {
                let prepare = |i: usize| {
                    reattach(&mut |py| {
                        for &(j, _) in &parts[batch.range(i)] {
                            if held[j].get().is_none() {
                                let _ = held[j].set(hold(objects[j].bind(py), surrogatepass)?);
                            }
                        }
                        Ok(())
                    })
                };
                let segment = |k: usize| {
                    let (j, range) = &parts[k];
                    let doc = held[*j].get().expect("prepared").document();
                    match range {
                        None => Segment::from(&doc),
                        Some(r) => Segment::part(&doc, r.clone()),
                    }
                };
                counter.count_items(&batch, threads, prepare, segment)
            })
        };
        // The batch's encoded texts and partial tables are freed now: give their pages
        // back, so the process holds the word table and not the last batch's scratch (a
        // small batch's scratch is left for the next to reuse: trimming walks the heap).
        let batch_bytes: usize =
            held.iter().filter_map(OnceLock::get).map(|h| h.document().data.len()).sum();
        drop(held);
        if batch_bytes >= TRIM_AFTER_BYTES {
            train::budget::release_free_memory();
        }
        counted
    }

    /// Counts documents from `reader` until about `max_bytes` more were counted; returns
    /// True when the reader is exhausted. On an input error, the documents before it are
    /// counted, then the error is raised.
    fn count_from(
        &mut self,
        py: Python<'_>,
        reader: &Bound<'_, DocumentReader>,
        max_bytes: usize,
    ) -> PyResult<bool> {
        let threads = self.threads;
        let counter = self.counter()?;
        let reader = reader.get();
        detached_quiet(py, move || {
            train::feed::count_from(counter, &mut reader.lock(), max_bytes, threads)
        })
    }

    /// True while a document read in chunks is partly counted (no checkpoint then).
    #[getter]
    fn in_document(&self) -> bool {
        self.inner.as_ref().is_some_and(|c| c.in_document())
    }

    /// Whether long documents may be cut at safe points under this counter's pattern and
    /// special tokens (else each is buffered whole).
    #[getter]
    fn cuts_allowed(&self) -> bool {
        self.inner.as_ref().is_some_and(|c| c.cuts_allowed())
    }

    /// Adds pre-counted words (not pre-tokenized).
    fn add_counts(&mut self, words: Vec<(PyBackedBytes, u64)>) -> PyResult<()> {
        let counter = self.counter()?;
        for (word, count) in words {
            counter.add_word(&word, count).map_err(to_py)?;
        }
        Ok(())
    }

    /// The counting ledger so far, as a dict.
    fn ledger<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        ledger::to_dict(py, self.inner.as_ref().map(|c| c.ledger()).unwrap_or(&Ledger::default()))
    }

    /// The fingerprint of the documents counted so far, in order.
    #[getter]
    fn fingerprint(&self) -> u64 {
        self.inner.as_ref().map_or(EMPTY_FINGERPRINT, |c| c.fingerprint())
    }

    /// Extends fingerprint `seed` with `items` (str/bytes), as counting them would.
    #[staticmethod]
    #[pyo3(signature = (items, seed=EMPTY_FINGERPRINT))]
    fn fingerprint_of(items: &Bound<'_, PyList>, seed: u64) -> PyResult<u64> {
        let held = items.iter().map(|d| held_document(&d)).collect::<PyResult<Vec<_>>>()?;
        let docs: Vec<Document<'_>> = held.iter().map(HeldDocument::document).collect();
        Ok(fingerprint(seed, &docs))
    }

    /// The word table, serialized (for the run store's snapshot).
    fn snapshot<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let counter = self.counter()?;
        let data = py.detach(|| counter.snapshot());
        Ok(PyBytes::new(py, &data))
    }

    /// Restores a snapshot with its ledger and fingerprint (resuming a stored run).
    fn restore(
        &mut self,
        py: Python<'_>,
        snapshot: PyBackedBytes,
        ledger: &Bound<'_, PyDict>,
        fingerprint: u64,
    ) -> PyResult<()> {
        let ledger = ledger::from_dict(ledger)?;
        let counter = self.counter()?;
        detached_quiet(py, move || counter.restore(&snapshot, ledger, fingerprint))
    }

    #[getter]
    fn documents(&self) -> u64 {
        self.inner.as_ref().map_or(0, |c| c.documents())
    }

    #[getter]
    fn bytes(&self) -> u64 {
        self.inner.as_ref().map_or(0, |c| c.bytes())
    }

    #[getter]
    fn distinct_words(&self) -> usize {
        self.inner.as_ref().map_or(0, |c| c.distinct_words())
    }

    /// With a memory limit: the input bytes a batch should hold at most (None without).
    #[getter]
    fn batch_bytes(&self) -> Option<u64> {
        self.inner.as_ref().and_then(|c| c.budget()).map(|b| b.batch_bytes)
    }

    /// With a memory limit: the most bytes of one document a reader may hold at once,
    /// and the longest word counted (None without).
    #[getter]
    fn hold_bytes(&self) -> Option<u64> {
        self.inner.as_ref().and_then(|c| c.budget()).map(|b| b.hold_bytes)
    }

    /// The word table's estimated memory in bytes.
    #[getter]
    fn table_bytes(&self) -> u64 {
        self.inner.as_ref().map_or(0, |c| c.table_bytes())
    }

    /// With a memory limit: prunes the rarest words until the merge loop's estimated
    /// memory fits (booked in the ledger); returns that estimate (0 without a limit).
    fn fit_merge_budget(&mut self, py: Python<'_>) -> PyResult<u64> {
        let counter = self.counter()?;
        Ok(py.detach(|| counter.fit_merge_budget()))
    }

    /// Runs the merge loop with the GIL released. `replay` is the merge log of an earlier
    /// run on the same words (resuming); `progress(created, new_merges)` is called at
    /// least every 100 ms with the merges made since the last call, as
    /// (left, right, token, count) tuples. Ctrl-C interrupts within a fraction of a second.
    /// With `start`, training extends that tokenizer (its ids kept) instead of starting
    /// from the 256 bytes.
    #[pyo3(signature = (vocab_size, min_frequency, replay=Vec::new(), progress=None, start=None))]
    fn train(
        &mut self,
        py: Python<'_>,
        vocab_size: usize,
        min_frequency: u64,
        replay: Vec<MergeTuple>,
        progress: Option<Py<PyAny>>,
        start: Option<PyRef<'_, CoreTokenizer>>,
    ) -> PyResult<CoreTokenizer> {
        let config = TrainConfig { vocab_size, min_frequency, threads: self.threads };
        let counter = self.inner.take().ok_or_else(already_trained)?;
        let start = start.map(|s| s.inner.clone());
        let replay: Vec<MergeRecord> = replay.into_iter().map(merge_record).collect();
        let tokenizer = detached(py, move |reattach| {
            let mut observe = |p: Progress<'_>| {
                reattach(&mut |py| match &progress {
                    Some(callback) => {
                        let merges: Vec<MergeTuple> =
                            p.new_merges.iter().map(merge_tuple).collect();
                        callback.call1(py, (p.created, merges)).map(drop)
                    }
                    None => Ok(()),
                })
            };
            train::train(counter, config, start.as_deref(), &replay, &mut observe)
        })?;
        Ok(CoreTokenizer::new(tokenizer))
    }
}

/// Batches of at least this many bytes give their freed scratch back to the system.
const TRIM_AFTER_BYTES: usize = 4 << 20;

/// Documents of at least this many characters (bytes for `bytes`) are counted in parts,
/// when the pattern allows cuts: one such document is seconds of counting.
const HUGE_DOCUMENT: usize = 4 << 20;

/// The size of those parts, in bytes: small enough that every thread gets several and
/// Ctrl-C is seen within a few milliseconds, large enough that handing one out costs
/// nothing next to counting it.
const DOCUMENT_PART: usize = 1 << 20;

/// An item's weight for cutting a batch into items: a `str`'s characters (its UTF-8
/// length is known only once it is read), a `bytes`/`bytearray`'s bytes; any other type
/// is an error naming the document.
fn weight(item: &Bound<'_, PyAny>, index: u64) -> PyResult<usize> {
    if let Ok(text) = item.cast::<PyString>() {
        return text.len();
    }
    if item.is_instance_of::<PyBytes>() || item.is_instance_of::<pyo3::types::PyByteArray>() {
        return item.len();
    }
    Err(PyTypeError::new_err(format!(
        "document {index} is {}, expected str or bytes",
        item.get_type().name()?
    )))
}

/// Holds a `str` or `bytes`/`bytearray` item (its type checked by [`weight`]). A `str`
/// with a lone surrogate raises Python's own `UnicodeEncodeError` unless `surrogatepass`
/// keeps its bytes.
fn hold(item: &Bound<'_, PyAny>, surrogatepass: bool) -> PyResult<HeldDocument> {
    if let Ok(text) = item.cast::<PyString>() {
        return match held_text(text) {
            Ok(held) => Ok(HeldDocument::Text(held)),
            Err(_) if surrogatepass => {
                let bytes = item.call_method1("encode", ("utf-8", "surrogatepass"))?;
                Ok(HeldDocument::Bytes(bytes.extract()?))
            }
            Err(err) => Err(err),
        };
    }
    Ok(HeldDocument::Bytes(item.extract()?))
}
