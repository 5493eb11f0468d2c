//! Safe cuts: where a long document may be split into chunks that pre-tokenize exactly
//! like the whole.
//!
//! For the built-in patterns (gpt2, cl100k, o200k) a cut before `data[p]` is safe in two
//! cases ("printable" is an ASCII byte 0x21..=0x7E, so never whitespace):
//!
//! 1. after a line break between printables: `data[p-2]` printable, `data[p-1]` is `\n`,
//!    `data[p]` printable but not `/`;
//! 2. before a space between printables: `data[p-1]` printable, `data[p]` a space,
//!    `data[p+1]` printable (prose and code have one before nearly every word).
//!
//! Why. None of the patterns looks behind, so the text after a cut splits as a document
//! of its own would, provided the whole has a piece boundary at `p` and the text before
//! `p` splits the same with or without what follows. Each piece is the first alternative
//! matching at its start; what can look past the characters a piece takes is
//! `\s+(?!\S)`, cl100k's and o200k's `\s++$` (whitespace that ends the text), and a
//! greedy run stopping at the first character it cannot take.
//! - Case 1: no piece holds `\n` followed by a non-space (newlines only occur in
//!   whitespace pieces and at the end of punctuation pieces), so a piece boundary falls at
//!   `p`. The newline, preceded by a non-space, is the piece `\n` (or ends the punctuation
//!   piece before it) whether the text goes on with a non-space or ends there. (Without
//!   the printable byte before it, gpt2 splits " \n" + "x" as " ", "\n" but a chunk ending
//!   in " \n" as one piece, which the property test in `tests/test_files.py` finds.) Not
//!   before `/`: o200k's punctuation pieces end in `[\r\n/]*`, so ")\n/" is one piece.
//! - Case 2: the space is a whitespace run of its own, and a non-space follows it, so it
//!   starts the next piece (` ?X` takes it, or it is the piece " " before a digit) and the
//!   piece before ends at `p` (only whitespace pieces hold a space after their first byte,
//!   and no piece ends in a printable byte because of what follows it). The text before
//!   `p` ends in a printable byte, so no whitespace alternative sees the cut. Both
//!   neighbours matter: with whitespace before the space, the run would reach the cut, and
//!   at the end of a chunk `\s++$` takes a whole run that, followed by text, splits at its
//!   last newline (cl100k splits " \n " + "." as " \n", " ", " ." but a chunk ending in
//!   " \n " as one piece); with whitespace or the end after it, the space would belong to
//!   the run's piece (gpt2 splits "a  " as "a", "  ").
//!
//! Cut positions are ASCII and so are the bytes around them, so a cut never splits a
//! character or an invalid UTF-8 sequence. Special tokens are cut out before the pattern
//! runs: a special token holding a newline or a space could span a cut, so such tokens
//! turn cutting off (see `cuts_allowed`). The bytes looked at must belong to the document:
//! callers pass only bytes known to be before the document's end.

use std::ops::Range;

/// True when a document may be cut before `data[p]` (see the module docs).
pub fn is_safe_cut(data: &[u8], p: usize) -> bool {
    if p == 0 || p >= data.len() {
        return false;
    }
    let after_line_break = p >= 2 && printable(data[p - 2]) && data[p - 1] == b'\n';
    let before_space =
        printable(data[p - 1]) && data[p] == b' ' && data.get(p + 1).is_some_and(|&b| printable(b));
    (after_line_break && printable(data[p]) && data[p] != b'/') || before_space
}

/// The last safe cut in `data[..=last]` at or after `floor`, if any.
pub fn last_safe_cut(data: &[u8], floor: usize, last: usize) -> Option<usize> {
    let last = last.min(data.len().saturating_sub(1));
    (floor.max(1)..=last).rev().find(|&p| is_safe_cut(data, p))
}

/// `data` (a whole document) as consecutive ranges of about `size` bytes each, cut at safe
/// cuts: each range but the last ends at the last safe cut in the second half of its
/// window of `size` bytes, or, where a window has none, in the next one (a document with
/// no safe cut is one range). Every byte is looked at once or twice.
pub fn segments(data: &[u8], size: usize) -> Vec<Range<usize>> {
    let half = (size / 2).max(1);
    let mut out = Vec::new();
    let (mut start, mut floor) = (0, half);
    while data.len() - start > size && floor < data.len() {
        let last = floor + half;
        match last_safe_cut(data, floor, last) {
            Some(p) => {
                out.push(start..p);
                (start, floor) = (p, p + half);
            }
            None => floor = last + 1,
        }
    }
    out.push(start..data.len());
    out
}

/// Whether documents may be cut: only under a built-in pattern, and only when no special
/// token contains a newline or a space (one could otherwise span a cut).
pub fn cuts_allowed(builtin_pattern: bool, special_tokens: &[&str]) -> bool {
    builtin_pattern && special_tokens.iter().all(|t| !t.contains(['\n', ' ']))
}

fn printable(b: u8) -> bool {
    (0x21..=0x7E).contains(&b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_cover_the_document_and_end_at_safe_cuts() {
        let prose = b"one two three\nfour five six seven eight nine ten ".repeat(50);
        for size in [1, 7, 64, 500, 10_000] {
            let ranges = segments(&prose, size);
            assert_eq!(ranges.first().unwrap().start, 0);
            assert_eq!(ranges.last().unwrap().end, prose.len());
            for pair in ranges.windows(2) {
                assert_eq!(pair[0].end, pair[1].start);
                assert!(is_safe_cut(&prose, pair[0].end), "{size}: {}", pair[0].end);
            }
            // Prose has a safe cut every few bytes: every window holds one.
            if size >= 64 {
                assert!(ranges.iter().all(|r| r.len() <= size), "{size}: {ranges:?}");
                assert!(ranges.len() >= prose.len() / size, "{size}: {}", ranges.len());
            }
        }
        // No safe cut anywhere: one range, however long.
        assert_eq!(segments(&[b'a'; 5000], 100), vec![Range { start: 0, end: 5000 }]);
        assert_eq!(segments(b"", 100), vec![Range { start: 0, end: 0 }]);
        // A cut only far in: the windows before it move on.
        let mut late = vec![b'a'; 3000];
        late.extend_from_slice(b" bc ".as_slice());
        late.extend(vec![b'd'; 50]);
        let ranges = segments(&late, 100);
        assert_eq!(ranges, [0..3003, 3003..late.len()]);
    }

    #[test]
    fn cuts_after_a_line_break_or_before_a_space_between_printables() {
        let data = b"ab\ncd \n e\n\nf\nx  y z. !\n/";
        let cuts: Vec<usize> = (0..=data.len()).filter(|&p| is_safe_cut(data, p)).collect();
        // "\nc", "\nx", "y| z", ".| !"; not a space after whitespace (" e", "  y") or
        // before one, nor a slash after a line break.
        assert_eq!(cuts, vec![3, 13, 17, 20]);
        assert_eq!(last_safe_cut(data, 0, data.len()), Some(20));
        assert_eq!(last_safe_cut(data, 8, 12), None);
        assert!(!cuts_allowed(true, &["<|a|>", "x\ny"]));
        assert!(!cuts_allowed(true, &["<|a b|>"]));
        assert!(cuts_allowed(true, &["<|a|>"]));
        assert!(!cuts_allowed(false, &[]));
    }
}
