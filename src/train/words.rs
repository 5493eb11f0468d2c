//! A segment's words: special-token text cut out, the rest split by the pattern, pieces
//! longer than the maximum token length cut, and whatever is not kept as ordinary text
//! tallied in the ledger.

use super::count_sink::CountSink;
use super::table::Partial;
use crate::document::Segment;
use crate::ledger::Ledger;
use crate::pretokenize::{Each, Pattern, Sink};
use crate::special::{Part, SpecialTokens};
use crate::utf8::chunks_at_chars;

/// Splits segments into the words counting counts.
#[derive(Debug)]
pub struct WordSplitter {
    /// The pre-tokenization pattern.
    pattern: Pattern,
    /// Special-token text in documents is cut out, not counted (as `encode` would do with
    /// `allowed_special="all"`).
    specials: SpecialTokens,
    /// Pieces longer than this many bytes (at least 1) are cut into shorter words
    /// (counted in the ledger), so no token grows longer.
    max_token_length: Option<usize>,
}

impl WordSplitter {
    pub fn new(pattern: Pattern, specials: SpecialTokens, max_token_length: Option<usize>) -> Self {
        Self { pattern, specials, max_token_length: max_token_length.map(|n| n.max(1)) }
    }

    /// The pre-tokenization pattern.
    pub fn pattern(&self) -> &Pattern {
        &self.pattern
    }

    /// The special tokens cut out.
    pub fn specials(&self) -> &SpecialTokens {
        &self.specials
    }

    /// Whether long documents may be cut (see `crate::read::cut`).
    pub fn cuts_allowed(&self) -> bool {
        let texts: Vec<&str> = self.specials.tokens().iter().map(|(t, _)| t.as_str()).collect();
        crate::read::cut::cuts_allowed(self.pattern.is_builtin(), &texts)
    }

    /// Counts the words of `seg` (of document `index`) into `counts`, and tallies its
    /// invalid UTF-8, unmatched bytes and cut pieces in `ledger`.
    pub fn count(
        &self,
        seg: &Segment<'_>,
        index: u64,
        counts: &mut Partial,
        ledger: &mut Ledger,
    ) -> Result<(), fancy_regex::Error> {
        // Counted as the splitter hands the pieces over, a window's pieces in one loop
        // (see `CountSink`).
        let mut sink = CountSink::new(counts, seg.data);
        let split = match self.max_token_length {
            None => self.split_into(seg, index, ledger, &mut sink),
            Some(_) => self.count_each(
                seg,
                index,
                ledger,
                #[inline(always)]
                |word| sink.piece(word),
            ),
        };
        sink.finish();
        split
    }

    /// Calls `add` with each word of `seg` in order (each a slice of `seg.data`), and
    /// tallies the ledger as [`WordSplitter::count`] does.
    pub fn count_each<'s>(
        &self,
        seg: &Segment<'s>,
        index: u64,
        ledger: &mut Ledger,
        mut add: impl FnMut(&'s [u8]),
    ) -> Result<(), fancy_regex::Error> {
        let max = self.max_token_length.unwrap_or(usize::MAX);
        let mut pieces_cut = 0;
        // Inlined into the splitter's loops (with `add`): a call per piece is most of the
        // cost of storing it.
        let mut bump = Each(
            #[inline(always)]
            |piece: &'s [u8]| {
                if piece.len() > max {
                    pieces_cut += 1;
                    cut(piece, max, &mut add);
                } else {
                    add(piece);
                }
            },
        );
        let split = self.split_into(seg, index, ledger, &mut bump);
        ledger.pieces_cut += pieces_cut;
        split
    }

    /// Sends the pieces of `seg` to `sink` in order (each a slice of `seg.data`): its
    /// text split by the pattern, special-token text cut out, bytes that are not UTF-8
    /// one a piece. Tallies its invalid UTF-8 and unmatched bytes in `ledger`.
    fn split_into<'s>(
        &self,
        seg: &Segment<'s>,
        index: u64,
        ledger: &mut Ledger,
        sink: &mut impl Sink<'s>,
    ) -> Result<(), fancy_regex::Error> {
        // Bytes that validate take the text path; others are tallied in the ledger first.
        let is_text = seg.is_text || crate::utf8::is_utf8(seg.data);
        if !is_text {
            ledger.tally_invalid_at(seg.data, index, seg.offset);
        }
        let mut gap_bytes = 0;
        self.specials.split(
            seg.data,
            |_| true,
            |part| match part {
                // Special-token text is cut out of training, not counted.
                Part::Special(_) => Ok(()),
                Part::Text(text) => {
                    if is_text {
                        // SAFETY: the segment is valid UTF-8, and special tokens (valid UTF-8
                        // themselves) match only on character boundaries, so every stretch
                        // between them is valid UTF-8 too.
                        let text = unsafe { std::str::from_utf8_unchecked(text) };
                        self.pattern.split_text_into(text, sink, &mut gap_bytes)
                    } else {
                        self.pattern.split_bytes_counting_gaps(
                            text,
                            #[inline(always)]
                            |piece| sink.piece(piece),
                            &mut gap_bytes,
                        )
                    }
                }
            },
        )?;
        ledger.unmatched_bytes += gap_bytes;
        Ok(())
    }
}

/// Adds the parts of a piece longer than `max`. Out of line and cold: the callback that
/// calls it runs once per piece, and is cheapest with nothing but its common path.
#[cold]
#[inline(never)]
fn cut<'s>(piece: &'s [u8], max: usize, add: &mut impl FnMut(&'s [u8])) {
    for part in chunks_at_chars(piece, max) {
        add(part);
    }
}
