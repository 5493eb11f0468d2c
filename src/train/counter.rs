//! `WordCounter`: counts documents in parallel batches into the word table, and keeps the
//! loss ledger and the input's fingerprint. Under a memory budget, batches are cut at
//! checkpoints and the table pruned there (`checkpoints.rs`).

use super::budget::Budget;
use super::snapshot;
use super::sorted_words::SortedWords;
use super::table::WordTable;
use super::words::WordSplitter;
use crate::document::{Document, Segment};
use crate::error::Result;
use crate::fingerprint::{Fingerprinter, EMPTY_FINGERPRINT};
use crate::ledger::Ledger;
use crate::pretokenize::Pattern;
use crate::special::SpecialTokens;

/// Distinct words per MiB assumed before a batch was counted: below what chunks of 1-5 MB
/// of the English, code and multilingual corpora hold (10-28 thousand), so a partial
/// sized from it is seldom sparser than a doubled table.
const FIRST_WORDS_PER_MIB: u64 = 8192;

/// Accumulates word counts over any number of batches. The result depends only on the
/// multiset of documents, never on batching or thread count: counts are exact sums.
#[derive(Debug)]
pub struct WordCounter {
    /// Splits documents into words.
    pub(super) words: WordSplitter,
    /// The counted words.
    pub(super) table: WordTable,
    /// What was seen, and what could not be kept as ordinary text.
    pub(super) ledger: Ledger,
    /// A fingerprint of the documents counted, in order.
    pub(super) fingerprint: Fingerprinter,
    /// With a memory limit: when to check the table, and how far to prune it.
    pub(super) budget: Option<Budget>,
    /// Bytes of pre-counted words added (`add_word` checkpoints fall on this volume).
    pub(super) words_added: u64,
    /// A document failed after some of its words were folded into the table (at an
    /// in-document checkpoint): the table no longer matches `documents`.
    pub(super) partial_document: bool,
    /// Distinct words per MiB of input in the partials of the last batch of at least a MiB
    /// ([`FIRST_WORDS_PER_MIB`] before one): each worker's partial counts are sized for as
    /// many. Only capacity depends on it, never a count.
    pub(super) words_per_mib: u64,
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
            words_per_mib: FIRST_WORDS_PER_MIB,
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
        self.count_at_checkpoints(segments, first_index, every, threads)
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

    /// The counted words, sorted by bytes (a deterministic order for training) on
    /// `threads` (default: all cores).
    pub fn into_words(self, threads: Option<usize>) -> SortedWords {
        self.table.into_words(threads)
    }
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
        assert_eq!(d.into_words(None), c.into_words(Some(1)));
        assert!(counter(None).restore(&snap[..snap.len() - 1], Ledger::default(), 0).is_err());
    }

    #[test]
    fn long_pieces_are_cut_at_character_boundaries() {
        let mut c = counter(Some(3));
        let docs = [Document { data: b"abcdefgh xy", is_text: true }];
        c.add_documents(&docs, 0, Some(1)).unwrap();
        assert_eq!(c.ledger().pieces_cut, 1);
        let words = c.into_words(None);
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
