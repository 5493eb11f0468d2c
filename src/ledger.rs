//! The loss ledger of counting: what was seen, and every byte that could not be kept as
//! ordinary text, by kind. Per-chunk ledgers are summed, so the totals are exact for any
//! thread count; the kept examples are the earliest ones, so they are deterministic too.

use crate::utf8::{invalid_sequences, InvalidKind};

/// How many example positions to keep per kind of invalid UTF-8.
pub const EXAMPLES: usize = 5;

/// Counters of one counting run (or one chunk of it).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ledger {
    /// Documents counted (a document read in chunks counts once, with its last chunk).
    pub documents: u64,
    /// Bytes of documents counted.
    pub bytes: u64,
    /// Bytes that are not valid UTF-8, by `InvalidKind` (kept as one-byte pieces).
    pub invalid_bytes: [u64; 6],
    /// The earliest (kind, document, byte offset) of each kind, at most `EXAMPLES` each.
    pub invalid_examples: Vec<(InvalidKind, u64, u64)>,
    /// Encoded lone surrogates (each 3 bytes, also counted under `Surrogate`).
    pub surrogates: u64,
    /// Bytes a custom pattern did not match (kept as pieces of their own).
    pub unmatched_bytes: u64,
    /// Pieces longer than the maximum token length, cut into shorter words.
    pub pieces_cut: u64,
    /// Word occurrences dropped to stay inside a memory budget (rare words pruned).
    pub dropped_word_mass: u64,
    /// Bytes of text those occurrences covered (count x word length).
    pub dropped_bytes: u64,
}

impl Ledger {
    /// Adds `other`'s counters to these, keeping the earliest examples of both.
    pub fn absorb(&mut self, other: &Ledger) {
        self.documents += other.documents;
        self.bytes += other.bytes;
        for (mine, theirs) in self.invalid_bytes.iter_mut().zip(other.invalid_bytes) {
            *mine += theirs;
        }
        self.surrogates += other.surrogates;
        self.unmatched_bytes += other.unmatched_bytes;
        self.pieces_cut += other.pieces_cut;
        self.dropped_word_mass += other.dropped_word_mass;
        self.dropped_bytes += other.dropped_bytes;
        self.invalid_examples.extend_from_slice(&other.invalid_examples);
        self.trim_examples();
    }

    fn trim_examples(&mut self) {
        self.invalid_examples.sort_unstable();
        self.invalid_examples.dedup();
        let mut kept = Vec::with_capacity(self.invalid_examples.len());
        for example in &self.invalid_examples {
            if kept.iter().filter(|(k, _, _)| *k == example.0).count() < EXAMPLES {
                kept.push(*example);
            }
        }
        self.invalid_examples = kept;
    }

    /// Counts the invalid UTF-8 in document `doc` (its bytes `data`).
    pub fn tally_invalid(&mut self, data: &[u8], doc: u64) {
        self.tally_invalid_at(data, doc, 0);
    }

    /// Counts the invalid UTF-8 in `data`, a part of document `doc` starting at byte
    /// `base` of it (a document read in chunks), so offsets are the document's own.
    pub fn tally_invalid_at(&mut self, data: &[u8], doc: u64, base: u64) {
        for bad in invalid_sequences(data) {
            self.invalid_bytes[bad.kind as usize] += bad.len as u64;
            if bad.kind == InvalidKind::Surrogate && bad.len == 3 {
                self.surrogates += 1;
            }
            if self.invalid_examples.iter().filter(|(k, _, _)| *k == bad.kind).count() < EXAMPLES {
                self.invalid_examples.push((bad.kind, doc, base + bad.start as u64));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tally(data: &[u8]) -> Ledger {
        let mut l = Ledger::default();
        l.tally_invalid(data, 7);
        l
    }

    #[test]
    fn kinds_and_spans() {
        let l = tally(b"ok\x80\xc0 \xe2\x82x \xe0\x80\x80 \xed\xa0\x80 \xf4\x90\x80\x80 \xff");
        assert_eq!(l.invalid_bytes, [1, 2, 2, 3, 3, 4]);
        assert_eq!(l.surrogates, 1);
        assert_eq!(l.invalid_examples[0], (InvalidKind::StrayContinuation, 7, 2));
        assert_eq!(l.invalid_examples.len(), 7);
    }

    #[test]
    fn surrogates_are_counted() {
        let data = b"\xed\xa0\x80\xed\xbf\xbf a\xe2\x82\xe2\x82\xac \xf0\x9f\x98 \xc3";
        assert_eq!(tally(data).invalid_bytes.iter().sum::<u64>(), crate::utf8::invalid_bytes(data));
        assert_eq!(tally(data).surrogates, 2);
    }

    #[test]
    fn examples_keep_the_earliest() {
        let mut a = Ledger::default();
        for doc in (0..10).rev() {
            let mut one = Ledger::default();
            one.tally_invalid(b"\xff", doc);
            a.absorb(&one);
        }
        let docs: Vec<u64> = a.invalid_examples.iter().map(|e| e.1).collect();
        assert_eq!(docs, vec![0, 1, 2, 3, 4]);
        assert_eq!(a.invalid_bytes[InvalidKind::NeverValid as usize], 10);
    }
}
