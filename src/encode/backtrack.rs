//! Pieces found without merging: the longest reachable token at each position, checked
//! against the token before it, taking a shorter one (and backing up) when the pair is
//! not one merging keeps. Why this gives merging's ids, and what the vocabulary must
//! satisfy for the check: `src/vocab/backtrack.rs`.

use crate::vocab::{Backtrack, Vocab};
use crate::Rank;

/// Appends the tokens of `piece` (shorter than 128 bytes, the longest tokens `table`
/// holds), exactly those merging by rank gives.
pub(super) fn encode_backtrack(vocab: &Vocab, table: &Backtrack, piece: &[u8], out: &mut Vec<Rank>) {
    let n = piece.len();
    assert!(n < 128, "pieces shorter than 128 bytes");
    if n == 0 {
        return;
    }
    let start = out.len();
    // Positions from which no search can succeed (the token before them being fixed).
    let mut dead = 0u128;
    let mut pos = 0;
    let mut next = table.longest(piece);
    loop {
        let mut token = next;
        loop {
            let end = pos + table.len(token);
            let fits = dead >> end & 1 == 0
                && (out.len() == start || table.valid_pair(vocab, out[out.len() - 1], token));
            if fits {
                out.push(token);
                pos = end;
                if pos == n {
                    return;
                }
                next = table.longest(&piece[pos..]);
                break;
            }
            if let Some(shorter) = table.shorter(token) {
                token = shorter;
                continue;
            }
            // Every token from here failed: back up to the token before, which then
            // tries its shorter prefixes (its own end is now dead). The first position
            // never fails: merging's result is a sequence the search accepts.
            dead |= 1 << pos;
            assert!(out.len() > start, "the merge result is always found");
            next = out.pop().expect("a token before a failed position");
            pos -= table.len(next);
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::tests::{by_bytes, lcg, random_vocab, vocab};

    /// The backtracking encoder (or, without a table, the encoder's dispatch, which then
    /// merges by rank) against the rule on bytes.
    fn check(v: &Vocab, piece: &[u8], what: &str) {
        let mut got = Vec::new();
        match v.backtrack() {
            Some(table) => encode_backtrack(v, table, piece, &mut got),
            None => crate::encode::encode_piece_parts(v, piece, &mut got),
        }
        assert_eq!(got, by_bytes(v, piece), "{what}: {:?}", String::from_utf8_lossy(piece));
    }

    #[test]
    fn backs_up_when_the_longest_token_is_not_kept() {
        // "abc": ab (256) merges first, so "a" + "bc" is wrong although "bc" is longest
        // at position 1 after "a"; "abcd" = ab + cd.
        let v = vocab(&[b"ab", b"bc", b"cd", b"abc"]);
        for piece in [&b"abc"[..], b"abcd", b"abcabcd", b"bcbcab", b"aaaaaaaaab", b"xabcdx"] {
            check(&v, piece, "fixed");
        }
    }

    /// Vocabularies from merge logs and pieces of their letters, against the rule on
    /// bytes. A merge log can make a token whose bytes alone end with a merge of a later
    /// token (monotone ranks fail: no table); both kinds occur here.
    #[test]
    fn matches_the_rule_on_vocabularies_from_merges() {
        let mut with_table = 0;
        for seed in 0..16u64 {
            let alphabet = b"abcd ";
            let v = random_vocab(seed, alphabet, 150, 12);
            with_table += usize::from(v.backtrack().is_some());
            let mut next = lcg(seed + 7);
            for case in 0..40 {
                let len = 1 + next() % 127;
                let piece: Vec<u8> = match case % 3 {
                    0 => vec![alphabet[next() % alphabet.len()]; len],
                    1 => {
                        let (x, y) = (alphabet[next() % 5], alphabet[next() % 5]);
                        (0..len).map(|_| if next() % 4 == 0 { y } else { x }).collect()
                    }
                    _ => (0..len).map(|_| alphabet[next() % alphabet.len()]).collect(),
                };
                check(&v, &piece, &format!("seed {seed}"));
            }
        }
        assert!((1..16).contains(&with_table), "{with_table} of 16 have a table");
    }

    /// Random tokens ranked by length (so monotone), most of them never made by merging,
    /// many with several splits, some past the length whose split is checked: the table
    /// must leave out the unreachable ones and find the canonical split of the rest.
    #[test]
    fn matches_the_rule_with_unreachable_and_long_tokens() {
        for seed in 0..12u64 {
            let mut next = lcg(seed + 900);
            let alphabet = b"ab c";
            let mut tokens: Vec<Vec<u8>> = Vec::new();
            while tokens.len() < 160 {
                let len = 2 + next() % 7;
                let token: Vec<u8> = (0..len).map(|_| alphabet[next() % 4]).collect();
                if !tokens.contains(&token) {
                    tokens.push(token);
                }
            }
            tokens.extend((2..100).step_by(3).map(|k| vec![b'a'; k]));
            tokens.extend((2..90).step_by(7).map(|k| b"ab".repeat(k)));
            let mut seen = std::collections::HashSet::new();
            tokens.retain(|t| seen.insert(t.clone()));
            tokens.sort_by_key(Vec::len);
            let v = vocab(&tokens.iter().map(Vec::as_slice).collect::<Vec<_>>());
            assert!(v.backtrack().is_some(), "ranked by length, so monotone");
            for case in 0..60 {
                let len = 1 + next() % 127;
                let piece: Vec<u8> = match case % 3 {
                    0 => vec![b'a'; len],
                    1 => (0..len).map(|i| b"ab"[(i + next() % 5 / 4) % 2]).collect(),
                    _ => (0..len).map(|_| alphabet[next() % 4]).collect(),
                };
                check(&v, &piece, &format!("seed {seed}"));
            }
        }
    }
}
