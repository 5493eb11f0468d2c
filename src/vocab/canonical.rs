//! Which splits the pair table holds: for each token, only the one split merging can ever
//! take (its *canonical* split), so the table, read at random once or twice per adjacent
//! pair of parts, is smaller and stays in the cache.
//!
//! Why one split is enough. Encoding merges, over and over, the adjacent pair whose joined
//! bytes rank lowest (leftmost on ties). Take any piece and a merge in it that makes token
//! `t` out of `(l, r)`. Every part ever inside `t`'s bytes stays inside them (parts only
//! grow, and `t` is a part at the end), so the merges inside `t`'s bytes happen in the
//! order they would if `t`'s bytes were encoded alone: each was the lowest (rank,
//! position) of the whole piece, hence the lowest among the pairs inside `t`, which is
//! what encoding `t` alone takes next. So encoding `t` alone ends with the same merge,
//! `(l, r)`. That last merge is one split per token, and a token whose bytes alone do not
//! encode to it is never made at all. A split that is never taken never is the lowest
//! candidate, so leaving it out changes no merge: ids are exactly those of the table of
//! every split (tests in `src/encode/` compare against the rule on bytes).
//!
//! Finding the canonical split: encode `t`'s bytes alone with a table that holds the
//! canonical splits of every shorter token and no split of `t` (nothing else can form
//! inside `t`'s bytes): this stops one merge short, at the two parts of `t`'s last merge.
//! More than two parts: `t` is unreachable and keeps no split. Tokens with a single split
//! keep it unchecked, and tokens longer than [`CHECKED`] keep every split: holding a
//! split that is never taken is harmless, only larger.

use super::pairs::PairTable;
use crate::error::Result;
use crate::interrupt;
use crate::Rank;

/// Tokens up to this long (with two or more splits) are encoded alone to find their
/// canonical split, at a cost of the square of the length (so at most `CHECKED` lookups
/// per byte of the vocabulary); longer ones, rare, keep every split.
pub(crate) const CHECKED: usize = 64;

/// The pair table of `tokens`: `splits` (every (left, right, token) triple, grouped by
/// token, as `token_splits` lists them) cut down to each token's canonical split.
/// `byte_ids` are the single bytes' ids. Interruptible (see [`interrupt`]).
pub(super) fn pair_table(
    tokens: &[Vec<u8>],
    byte_ids: &[Rank; 256],
    splits: &[(Rank, Rank, Rank)],
) -> Result<PairTable> {
    let mut kept: Vec<(Rank, Rank, Rank)> = Vec::new();
    let mut to_check: Vec<(usize, Rank)> = Vec::new();
    for group in splits.chunk_by(|a, b| a.2 == b.2) {
        interrupt::step(group.len())?; // tens of millions of splits in a long-token vocabulary
        let token = group[0].2;
        let len = tokens[token as usize].len();
        if group.len() == 1 || len > CHECKED {
            kept.extend_from_slice(group);
        } else {
            to_check.push((len, token));
        }
    }
    // Sized once, so the table is as small (cache-friendly) as its load factor allows.
    let mut table =
        PairTable::with_capacity_interruptible(kept.len() + to_check.len(), tokens.len())?;
    // A vocabulary with a split at every byte of long tokens has tens of millions.
    for chunk in kept.chunks(1 << 12) {
        interrupt::step(chunk.len())?;
        for &(l, r, id) in chunk {
            table.insert(l, r, id);
        }
    }
    // Shortest first: a token's bytes only ever form shorter tokens before the last merge.
    to_check.sort_unstable();
    let mut parts = Vec::new();
    for &(len, token) in &to_check {
        interrupt::step(len * len)?;
        merge_alone(&table, byte_ids, &tokens[token as usize], &mut parts, |_, _, _| {});
        if let [l, r] = parts[..] {
            table.insert(l, r, token);
        }
    }
    Ok(table)
}

/// The parts `bytes` merge into through `table` alone: the lowest rank first, the
/// leftmost on ties (the encoding rule, plainly: pieces here are short). Before each merge,
/// `on_merge` sees the parts, where the merge is and its rank.
pub(super) fn merge_alone(
    table: &PairTable,
    byte_ids: &[Rank; 256],
    bytes: &[u8],
    parts: &mut Vec<Rank>,
    mut on_merge: impl FnMut(&[Rank], usize, Rank),
) {
    parts.clear();
    parts.extend(bytes.iter().map(|&b| byte_ids[b as usize]));
    while let Some((rank, at)) = parts
        .windows(2)
        .enumerate()
        .filter_map(|(i, w)| table.get_below_bound(w[0], w[1]).map(|rank| (rank, i)))
        .min()
    {
        on_merge(parts, at, rank);
        parts[at] = rank;
        parts.remove(at + 1);
    }
}

#[cfg(test)]
mod tests {
    use crate::vocab::bytes_then as vocab;
    use crate::Rank;

    #[test]
    fn keeps_the_split_merging_takes() {
        // "abc" alone: "ab" (256) ranks before "bc" (257), so it ends with "ab" + "c".
        let v = vocab(&[b"ab", b"bc", b"abc"]);
        let (a, c) = (b'a' as Rank, b'c' as Rank);
        assert_eq!(v.pair_rank(256, c), Some(258));
        assert_eq!(v.pair_rank(a, 257), None, "a + bc is never merged");
        // Ranked the other way, "bc" comes first and "a" + "bc" is the split kept.
        let v = vocab(&[b"bc", b"ab", b"abc"]);
        assert_eq!(v.pair_rank(a, 256), Some(258));
        assert_eq!(v.pair_rank(257, c), None);
        // Single splits are kept: "ab" and "bc" from their bytes.
        assert_eq!(v.pair_rank(a, b'b' as Rank), Some(257));
    }

    #[test]
    fn an_unreachable_token_keeps_no_split() {
        // "abcde" alone: bc (256), then de (257), then a | bc | de joins no further, so
        // neither of its splits, ab + cde and abcd + e, is ever merged.
        let v = vocab(&[b"bc", b"de", b"ab", b"cd", b"cde", b"abcd", b"abcde"]);
        assert_eq!(v.pair_rank(258, 260), None);
        assert_eq!(v.pair_rank(261, b'e' as Rank), None);
        // "cde" alone: de first, then c + de (not cd + e); "abcd" has one split, kept.
        assert_eq!(v.pair_rank(b'c' as Rank, 257), Some(260));
        assert_eq!(v.pair_rank(259, b'e' as Rank), None);
        assert_eq!(v.pair_rank(258, 259), Some(261));
    }

    #[test]
    fn tokens_over_the_checked_length_keep_every_split() {
        let runs: Vec<Vec<u8>> = (2..=70).map(|k| vec![b'a'; k]).collect();
        let v = vocab(&runs.iter().map(Vec::as_slice).collect::<Vec<_>>());
        let kept = |k: usize| {
            let id = v.rank(&vec![b'a'; k]).unwrap();
            let a = |i: usize| v.rank(&vec![b'a'; i]).unwrap();
            (1..k).filter(|&i| v.pair_rank(a(i), a(k - i)) == Some(id)).count()
        };
        assert_eq!((kept(super::CHECKED), kept(super::CHECKED + 1)), (1, super::CHECKED));
        assert_eq!(kept(70), 69);
    }
}
