//! `WordCounter`: counts documents in parallel batches into the word table, keeps the
//! loss ledger and the input's fingerprint, and under a memory budget prunes the table at
//! checkpoints that depend only on the documents.

use rayon::prelude::*;

use super::budget::{self, Budget};
use super::prune::Dropped;
use super::snapshot;
use super::table::{Partial, WordTable};
use super::words::WordSplitter;
use crate::document::{Document, Segment};
use crate::error::{Error, Result};
use crate::fingerprint::{Fingerprinter, EMPTY_FINGERPRINT};
use crate::ledger::Ledger;
use crate::parallel;
use crate::pretokenize::Pattern;
use crate::special::SpecialTokens;

/// Accumulates word counts over any number of batches. The result depends only on the
/// multiset of documents, never on batching or thread count: counts are exact sums.
#[derive(Debug)]
pub struct WordCounter {
    /// Splits documents into words.
    words: WordSplitter,
    /// The counted words.
    table: WordTable,
    /// What was seen, and what could not be kept as ordinary text.
    ledger: Ledger,
    /// A fingerprint of the documents counted, in order.
    fingerprint: Fingerprinter,
    /// With a memory limit: when to check the table, and how far to prune it.
    budget: Option<Budget>,
    /// Bytes of pre-counted words added (`add_word` checkpoints fall on this volume).
    words_added: u64,
    /// A document failed after some of its words were folded into the table (at an
    /// in-document checkpoint): the table no longer matches `documents`.
    partial_document: bool,
}

impl WordCounter {
    pub fn new(pattern: Pattern, specials: SpecialTokens, max_token_length: Option<usize>) -> Self {
        Self {
            words: WordSplitter::new(pattern, specials, max_token_length),
            table: WordTable::default(),
            ledger: Ledger::default(),
            fingerprint: Fingerprinter::new(EMPTY_FINGERPRINT),
            budget: None,
            words_added: 0,
            partial_document: false,
        }
    }

    /// Keeps the word table (and later the merge loop) within `budget`: at each
    /// checkpoint (every `budget.checkpoint_every` bytes of input, at the end of the
    /// document that reaches it; and inside a document, after the word that reaches each
    /// multiple of that many bytes of it) a table estimated above `table_high` loses its
    /// rarest words. Checkpoints depend only on the documents, so the result is the same
    /// for any batching, segmenting or thread count.
    pub fn with_budget(mut self, budget: Budget) -> Self {
        self.budget = Some(budget);
        self
    }

    /// The memory budget, if any.
    pub fn budget(&self) -> Option<&Budget> {
        self.budget.as_ref()
    }

    /// The word table's estimated memory in bytes.
    pub fn table_bytes(&self) -> u64 {
        self.table.estimate()
    }

    /// The loss ledger so far.
    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }

    /// The fingerprint of the documents counted so far.
    pub fn fingerprint(&self) -> u64 {
        self.fingerprint.hash
    }

    /// True while a document read in chunks is partly counted: its words are in the
    /// table but it is not yet in `documents` (no checkpoint should be taken then).
    pub fn in_document(&self) -> bool {
        self.fingerprint.in_document() || self.partial_document
    }

    /// Serializes the word table (format in `snapshot.rs`).
    pub fn snapshot(&self) -> Vec<u8> {
        snapshot::write(&self.table)
    }

    /// Replaces the state with a snapshot and the ledger and fingerprint saved with it.
    pub fn restore(&mut self, snapshot: &[u8], ledger: Ledger, fingerprint: u64) -> Result<()> {
        self.table = snapshot::read(snapshot)?;
        self.partial_document = false;
        self.ledger = ledger;
        self.fingerprint = Fingerprinter::new(fingerprint);
        Ok(())
    }

    /// The pre-tokenization pattern.
    pub fn pattern(&self) -> &Pattern {
        self.words.pattern()
    }

    /// The special tokens cut out of documents.
    pub fn specials(&self) -> &SpecialTokens {
        self.words.specials()
    }

    /// Whether long documents may be cut (see `crate::read::cut`).
    pub fn cuts_allowed(&self) -> bool {
        self.words.cuts_allowed()
    }

    /// Documents counted so far.
    pub fn documents(&self) -> u64 {
        self.ledger.documents
    }

    /// Bytes of documents counted so far.
    pub fn bytes(&self) -> u64 {
        self.ledger.bytes
    }

    /// Distinct words so far.
    pub fn distinct_words(&self) -> usize {
        self.table.distinct_words()
    }

    /// Counts a batch in parallel. `first_index` is the index of `docs[0]` in the whole
    /// input, used to name a failing document. On error nothing of the batch is counted
    /// (with a budget: nothing after the last checkpoint before the failing document).
    pub fn add_documents(
        &mut self,
        docs: &[Document<'_>],
        first_index: u64,
        threads: Option<usize>,
    ) -> Result<()> {
        let segments: Vec<Segment<'_>> = docs.iter().map(Segment::from).collect();
        self.add_segments(&segments, first_index, threads)
    }

    /// Counts a batch of segments in parallel: whole documents, or parts of documents
    /// read in chunks (a document is counted in `documents` with its last segment).
    /// `first_index` is the index of the document of `segments[0]`. On error nothing of
    /// the batch is counted (with a budget: nothing after the last checkpoint before the
    /// failing document).
    pub fn add_segments(
        &mut self,
        segments: &[Segment<'_>],
        first_index: u64,
        threads: Option<usize>,
    ) -> Result<()> {
        let Some(every) = self.budget.map(|b| b.checkpoint_every) else {
            return self.count_segments(segments, first_index, threads);
        };
        // Cut the batch at checkpoints: after the document whose end reaches the next
        // multiple of `every` input bytes, wherever batches or segments happen to start;
        // a segment holding an in-document checkpoint is counted on its own.
        let mut start = 0;
        let mut index = first_index;
        while start < segments.len() {
            // Checkpoints fall at document ends, however documents were cut into segments.
            let mut bytes = self.ledger.bytes;
            let mut last_end = bytes - self.fingerprint.open_bytes();
            let (mut end, mut reached, mut long) = (start, false, false);
            while end < segments.len() && !reached {
                long = spans_a_multiple(&segments[end], every);
                if long && end > start {
                    long = false;
                    break;
                }
                bytes += segments[end].data.len() as u64;
                if segments[end].ends {
                    reached = bytes / every > last_end / every;
                    last_end = bytes;
                }
                end += 1;
                if long {
                    break;
                }
            }
            let part = &segments[start..end];
            if long {
                self.count_with_checkpoints(&part[0], index, every, threads)?;
            } else {
                self.count_segments(part, index, threads)?;
            }
            index += part.iter().filter(|s| s.ends).count() as u64;
            if reached {
                self.checkpoint();
            }
            start = end;
        }
        Ok(())
    }

    /// Counts one segment that spans a multiple of `every` bytes of its document, with a
    /// checkpoint right after each word whose bytes reach such a multiple (start < m <=
    /// end, in document offsets). Words are the pattern's pieces of the whole document
    /// (segments are cut only where they stay the same), so these points depend only on
    /// the document: a long document is pruned inside, whatever its segments. A word
    /// longer than the budget's `hold_bytes` is refused before it is added. On error the
    /// document's words counted so far stay in the table, so the counter is marked as
    /// inside a document (no store checkpoint is taken from it).
    fn count_with_checkpoints(
        &mut self,
        seg: &Segment<'_>,
        index: u64,
        every: u64,
        threads: Option<usize>,
    ) -> Result<()> {
        let budget = self.budget.expect("called under a budget");
        let pool = parallel::pool(threads);
        let base = seg.data.as_ptr() as usize;
        let mut partial = Partial::default();
        let mut ledger = Ledger::default();
        let (mut too_long, mut folded) = (None, false);
        let (table, own_ledger) = (&mut self.table, &mut self.ledger);
        let split = self.words.count_each(seg, index, &mut ledger, |word| {
            if too_long.is_some() {
                return;
            }
            let start = seg.offset + (word.as_ptr() as usize - base) as u64;
            let len = word.len() as u64;
            if len > budget.hold_bytes {
                too_long = Some((start, len));
                return;
            }
            partial.add_one(word);
            if (start + len) / every > start / every {
                table.fold(&pool, vec![std::mem::take(&mut partial)]);
                checkpoint(table, own_ledger, &budget);
                folded = true;
            }
        });
        self.partial_document = folded;
        split.map_err(|e| Error::PatternMatch { document: index, message: e.to_string() })?;
        if let Some((start, len)) = too_long {
            return Err(Error::BadInput(format!(
                "document {index} has a piece of {len} bytes (at byte {start}), longer than \
                 one word may be under this memory_limit ({} bytes): pass max_token_length \
                 to cut long pieces, or raise memory_limit",
                budget.hold_bytes
            )));
        }
        self.partial_document = false;
        self.table.fold(&pool, vec![partial]);
        self.ledger.absorb(&ledger);
        self.ledger.documents += u64::from(seg.ends);
        self.ledger.bytes += seg.data.len() as u64;
        self.fingerprint.add(seg);
        Ok(())
    }

    fn count_segments(
        &mut self,
        segments: &[Segment<'_>],
        first_index: u64,
        threads: Option<usize>,
    ) -> Result<()> {
        if segments.is_empty() {
            return Ok(());
        }
        // The document index of each segment: one more after each document's end.
        let mut index = first_index;
        let indices: Vec<u64> = segments
            .iter()
            .map(|seg| {
                let this = index;
                index += u64::from(seg.ends);
                this
            })
            .collect();
        let pool = parallel::pool(threads);
        // A few chunks per thread balances uneven documents without many partial maps.
        let chunk = segments.len().div_ceil(pool.current_num_threads() * 4).max(1);
        let words = &self.words;
        let partials: Vec<Result<(Partial, Ledger)>> = pool.install(|| {
            segments
                .par_chunks(chunk)
                .zip(indices.par_chunks(chunk))
                .map(|(chunk_segments, chunk_indices)| {
                    let mut counts = Partial::default();
                    let mut ledger = Ledger::default();
                    for (seg, &index) in chunk_segments.iter().zip(chunk_indices) {
                        words.count(seg, index, &mut counts, &mut ledger).map_err(|e| {
                            Error::PatternMatch { document: index, message: e.to_string() }
                        })?;
                    }
                    Ok((counts, ledger))
                })
                .collect()
        });
        let partials = partials.into_iter().collect::<Result<Vec<_>>>()?;
        let mut counts = Vec::with_capacity(partials.len());
        for (partial, ledger) in partials {
            counts.push(partial);
            self.ledger.absorb(&ledger);
        }
        self.table.fold(&pool, counts);
        self.ledger.documents += segments.iter().filter(|s| s.ends).count() as u64;
        self.ledger.bytes += segments.iter().map(|s| s.data.len() as u64).sum::<u64>();
        for seg in segments {
            self.fingerprint.add(seg);
        }
        Ok(())
    }

    /// Adds a pre-counted word (not pre-tokenized).
    pub fn add_word(&mut self, word: &[u8], count: u64) -> Result<()> {
        if count == 0 || word.is_empty() {
            return Ok(());
        }
        self.table.add(word, count)?;
        // Pre-counted words have checkpoints of their own, on the bytes of words added
        // (so they depend on the order the words are given in).
        if let Some(every) = self.budget.map(|b| b.checkpoint_every) {
            let before = self.words_added;
            self.words_added += word.len() as u64;
            if self.words_added / every > before / every {
                self.checkpoint();
            }
        }
        Ok(())
    }

    /// At a checkpoint: prunes the table when its estimate is above the high mark.
    fn checkpoint(&mut self) {
        if let Some(b) = self.budget {
            checkpoint(&mut self.table, &mut self.ledger, &b);
        }
    }

    /// Before the merge loop: prunes the rarest words until the merge loop's estimate
    /// fits the budget. Returns the estimate after pruning (0 without a budget).
    pub fn fit_merge_budget(&mut self) -> u64 {
        let Some(b) = self.budget else {
            return 0;
        };
        let estimate = self.merge_bytes();
        if estimate > b.merge_bytes {
            self.prune(b.merge_bytes, budget::merge_entry);
            return self.merge_bytes();
        }
        estimate
    }

    /// The merge loop's estimated peak memory for the current table.
    pub fn merge_bytes(&self) -> u64 {
        self.table.cost(&parallel::pool(None), budget::merge_entry)
    }

    fn prune(&mut self, target: u64, cost: fn(u64) -> u64) {
        prune(&mut self.table, &mut self.ledger, target, cost);
    }

    /// The counted words, sorted by bytes (a deterministic order for training).
    pub fn into_words(self) -> Vec<(Vec<u8>, u64)> {
        self.table.into_words()
    }
}

/// True when `seg` spans a multiple of `every` bytes of its document (`offset < m <=
/// offset + len`): only then can a word in it hold an in-document checkpoint.
fn spans_a_multiple(seg: &Segment<'_>, every: u64) -> bool {
    (seg.offset + seg.data.len() as u64) / every > seg.offset / every
}

/// A checkpoint: prunes the table when its estimate is above the budget's high mark.
fn checkpoint(table: &mut WordTable, ledger: &mut Ledger, budget: &Budget) {
    if table.estimate() > budget.table_high {
        prune(table, ledger, budget.table_low, budget::table_entry);
    }
}

/// Prunes the table (see [`WordTable::prune`]), booking what it drops in the ledger and
/// giving the freed memory back.
fn prune(table: &mut WordTable, ledger: &mut Ledger, target: u64, cost: fn(u64) -> u64) {
    let Some(Dropped { mass, bytes }) = table.prune(&parallel::pool(None), target, cost) else {
        return;
    };
    ledger.dropped_word_mass = ledger.dropped_word_mass.saturating_add(mass);
    ledger.dropped_bytes = ledger.dropped_bytes.saturating_add(bytes);
    budget::release_free_memory();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counter(max: Option<usize>) -> WordCounter {
        WordCounter::new(Pattern::new("cl100k").unwrap(), SpecialTokens::default(), max)
    }

    #[test]
    fn snapshot_round_trips() {
        let mut c = counter(None);
        let docs = [Document { data: b"hello world hello \xff", is_text: false }];
        c.add_documents(&docs, 0, Some(1)).unwrap();
        c.add_word(b"big", u64::MAX - 5).unwrap();
        let snap = c.snapshot();
        let mut d = counter(None);
        d.restore(&snap, c.ledger().clone(), c.fingerprint()).unwrap();
        assert_eq!(d.snapshot(), snap);
        assert_eq!(d.into_words(), c.into_words());
        assert!(counter(None).restore(&snap[..snap.len() - 1], Ledger::default(), 0).is_err());
    }

    #[test]
    fn long_pieces_are_cut_at_character_boundaries() {
        let mut c = counter(Some(3));
        let docs = [Document { data: b"abcdefgh xy", is_text: true }];
        c.add_documents(&docs, 0, Some(1)).unwrap();
        assert_eq!(c.ledger().pieces_cut, 1);
        let words = c.into_words();
        assert!(words.iter().all(|(w, _)| w.len() <= 3), "{words:?}");
    }

    #[test]
    fn segments_count_as_their_whole_documents() {
        let docs: [&[u8]; 3] = [b"one line\ntwo \xff lines\nend", b"", b"x\ny\n\xfe"];
        let mut whole = counter(None);
        let as_docs: Vec<Document<'_>> =
            docs.iter().map(|d| Document { data: d, is_text: false }).collect();
        whole.add_documents(&as_docs, 0, Some(1)).unwrap();
        for cut in 1..4 {
            let mut parts = counter(None);
            for (i, doc) in docs.iter().enumerate() {
                let mut offset = 0;
                for piece in doc.chunks(cut).chain(doc.is_empty().then_some(&[][..])) {
                    let ends = offset + piece.len() == doc.len();
                    let seg = Segment { data: piece, is_text: false, offset: offset as u64, ends };
                    parts.add_segments(&[seg], i as u64, Some(1)).unwrap();
                    offset += piece.len();
                    assert_eq!(parts.in_document(), !ends);
                }
            }
            assert_eq!(parts.fingerprint(), whole.fingerprint(), "cut {cut}");
            assert_eq!(parts.ledger().documents, 3);
            assert_eq!(parts.ledger().invalid_examples, whole.ledger().invalid_examples);
        }
    }
}

#[cfg(test)]
mod budget_tests {
    use super::*;

    #[test]
    fn pruning_keeps_some_words_at_the_threshold() {
        let budget = Budget::new(64 << 20).unwrap();
        let mut c =
            WordCounter::new(Pattern::new("cl100k").unwrap(), SpecialTokens::default(), None)
                .with_budget(budget);
        for i in 0..200_000u32 {
            c.add_word(format!(" w{i:08}").as_bytes(), 1).unwrap();
        }
        assert!(c.ledger().dropped_word_mass > 0);
        assert!(c.distinct_words() > 1000, "{}", c.distinct_words());
        assert!(c.table_bytes() <= budget.table_high);
        let before = c.distinct_words();
        let estimate = c.fit_merge_budget();
        assert!(estimate <= budget.merge_bytes, "{estimate}");
        assert!(c.distinct_words() > 1000, "{before} -> {}", c.distinct_words());
    }

    /// A distinct lowercase word for each number.
    fn letters(mut n: u32) -> String {
        let mut s = String::new();
        loop {
            s.push((b'a' + (n % 26) as u8) as char);
            n /= 26;
            if n == 0 {
                return s;
            }
        }
    }

    #[test]
    fn pruning_does_not_depend_on_batches_or_threads() {
        let texts: Vec<String> = (0..3000u32)
            .map(|d| (0..60u32).map(|i| format!(" {} the", letters(d * 60 + i))).collect())
            .collect();
        let docs: Vec<Document<'_>> =
            texts.iter().map(|t| Document { data: t.as_bytes(), is_text: true }).collect();
        let run = |batch: usize, threads: usize| {
            let mut c =
                WordCounter::new(Pattern::new("cl100k").unwrap(), SpecialTokens::default(), None)
                    .with_budget(Budget::new(64 << 20).unwrap());
            for (i, chunk) in docs.chunks(batch).enumerate() {
                c.add_documents(chunk, (i * batch) as u64, Some(threads)).unwrap();
            }
            c.fit_merge_budget();
            (c.snapshot(), c.ledger().clone())
        };
        let (snapshot, ledger) = run(docs.len(), 2);
        assert!(ledger.dropped_word_mass > 0);
        assert_eq!(run(1, 1), (snapshot.clone(), ledger.clone()));
        assert_eq!(run(37, 2), (snapshot, ledger));
    }
}

#[cfg(test)]
mod long_document_tests {
    use super::*;
    use crate::read::segments;
    use crate::read::split::{Batch, Delimit, Splitter};

    /// A budget small enough to prune inside a few kilobytes of text.
    fn tiny_budget() -> Budget {
        Budget {
            limit: 64 << 20,
            table_high: 40 * budget::table_entry(9),
            table_low: 20 * budget::table_entry(9),
            checkpoint_every: 300,
            batch_bytes: 300,
            merge_bytes: u64::MAX,
            hold_bytes: 1 << 20,
        }
    }

    fn counter(pattern: &str, budget: Option<Budget>) -> WordCounter {
        let c = WordCounter::new(Pattern::new(pattern).unwrap(), SpecialTokens::default(), None);
        match budget {
            Some(b) => c.with_budget(b),
            None => c,
        }
    }

    /// Lines of distinct words (a safe cut after every line), some repeated.
    fn long_document() -> Vec<u8> {
        let mut text = String::new();
        for i in 0..2000u32 {
            text.push_str(&format!("w{i:05} the z{} ", i % 7));
            if i % 5 == 4 {
                text.push_str("end.\n");
            }
        }
        text.push_str("last");
        text.into_bytes()
    }

    fn state(c: &WordCounter) -> (Vec<u8>, Ledger) {
        (c.snapshot(), c.ledger().clone())
    }

    #[test]
    fn long_documents_are_pruned_inside_at_points_fixed_by_the_document() {
        let doc = long_document();
        let mut whole = counter("cl100k", Some(tiny_budget()));
        whole.add_documents(&[Document { data: &doc, is_text: true }], 0, Some(2)).unwrap();
        let expected = state(&whole);
        assert!(expected.1.dropped_word_mass > 0, "the budget prunes");
        for chunk in [3, 64, 1000, 1 << 20] {
            for threads in [1, 2] {
                let mut splitter = Splitter::new(Delimit::Whole, true, chunk);
                let mut batch = Batch::default();
                for piece in doc.chunks(chunk) {
                    splitter.push(piece, &mut batch);
                }
                splitter.finish(&mut batch);
                assert_eq!(batch.spans.len() > 1, chunk < doc.len(), "chunk {chunk}");
                let mut parts = counter("cl100k", Some(tiny_budget()));
                // One call per segment, and all segments in one call.
                for seg in segments(&batch) {
                    parts.add_segments(&[seg], 0, Some(threads)).unwrap();
                }
                assert_eq!(state(&parts), expected, "chunk {chunk}, threads {threads}");
                let mut at_once = counter("cl100k", Some(tiny_budget()));
                at_once.add_segments(&segments(&batch), 0, Some(threads)).unwrap();
                assert_eq!(state(&at_once), expected, "chunk {chunk}, threads {threads}");
            }
        }
    }

    #[test]
    fn without_pruning_a_long_document_counts_exactly() {
        let doc = long_document();
        let docs = [Document { data: &doc, is_text: false }];
        let mut roomy = tiny_budget();
        roomy.table_high = u64::MAX;
        for pattern in ["cl100k", r"\w+| ?[^\w\s]+|\s+"] {
            let mut limited = counter(pattern, Some(roomy));
            limited.add_documents(&docs, 0, Some(2)).unwrap();
            let mut exact = counter(pattern, None);
            exact.add_documents(&docs, 0, Some(2)).unwrap();
            assert_eq!(state(&limited), state(&exact), "{pattern}");
            assert_eq!(limited.ledger().dropped_word_mass, 0);
        }
    }

    #[test]
    fn custom_patterns_are_pruned_inside_a_document_too() {
        let doc = long_document();
        let mut c = counter(r"\w+|\s+|.", Some(tiny_budget()));
        c.add_documents(&[Document { data: &doc, is_text: true }], 0, Some(1)).unwrap();
        assert!(c.ledger().dropped_word_mass > 0);
        assert!(c.table_bytes() <= tiny_budget().table_high);
    }

    #[test]
    fn a_word_longer_than_the_budget_holds_is_refused() {
        let mut b = tiny_budget();
        b.hold_bytes = 5000;
        let mut doc = long_document();
        let at = doc.len() as u64;
        doc.extend_from_slice(b" ");
        doc.extend(std::iter::repeat_n(b'x', 6000));
        let mut c = counter("cl100k", Some(b));
        let err = c.add_documents(&[Document { data: &doc, is_text: true }], 7, Some(1));
        let Err(Error::BadInput(message)) = err else { panic!("{err:?}") };
        let want = format!("document 7 has a piece of 6001 bytes (at byte {at})");
        assert!(message.contains(&want), "{message}");
        // Words of the failed document were folded in at its checkpoints: no store
        // checkpoint may be taken from this state.
        assert!(c.in_document());
        assert_eq!(c.documents(), 0);
        // A short document with a long word fails before anything is folded in.
        let mut c = counter("cl100k", Some(b));
        let long = vec![b'y'; 6000];
        assert!(c.add_documents(&[Document { data: &long, is_text: true }], 0, Some(1)).is_err());
        assert!(!c.in_document());
    }
}
