//! Every way to write a token as two tokens: the (left, right, token) triples the pair
//! table holds, found in time linear in the total token bytes.
//!
//! Hashing `t[..k]` and `t[k..]` for every split point `k` costs the square of a token's
//! length (a 1 MB token took 74 s). Instead: a token's token prefixes form a chain, each
//! the longest proper token prefix of the one before (its *parent*), so they are listed by
//! following parents; the same holds for suffixes with the bytes reversed. A split `k` is a
//! pair exactly when `k` is the length of a token prefix and `len - k` that of a token
//! suffix: the two chains, both in order of `k`, are intersected in one pass.
//!
//! Parents come from the tokens in sorted order with a stack (the prefixes of the current
//! token): every token between a prefix and a token that extends it extends the prefix
//! too, so the prefix is still on the stack when that token comes. Each token is pushed
//! and popped once, and each `starts_with` costs at most the length of the token popped
//! or of the current one.
//!
//! Cost: a sort of the tokens (O(n log n) comparisons, nearly all of their first 8 bytes
//! as numbers, the rest a `memcmp` of at most the shorter token), then O(total bytes) for
//! the parents, and the chains (a chain is no longer than its token). Memory: the
//! reversed bytes once, 12 bytes a token for the sort, and a few `u32` per token.

use crate::error::Result;
use crate::hash_parts::prefix_key;
use crate::interrupt;
use crate::Rank;

/// No parent: the token has no proper prefix (or suffix) that is a token.
const NONE: u32 = u32::MAX;

/// The (left, right, token) triples of every split of every token into two tokens, by
/// token id then split point. Empty tokens (holes) are neither split nor parts.
/// Interruptible (see [`interrupt`]).
pub(super) fn token_splits(tokens: &[Vec<u8>]) -> Result<Vec<(Rank, Rank, Rank)>> {
    let prefix_parents = parents(|id| &tokens[id], tokens.len())?;
    let reversed = Reversed::new(tokens);
    let suffix_parents = parents(|id| reversed.get(id), tokens.len())?;
    drop(reversed);
    let mut splits = Vec::with_capacity(tokens.len() * 2);
    let mut prefixes: Vec<(usize, u32)> = Vec::new();
    for (id, bytes) in tokens.iter().enumerate() {
        let len = bytes.len();
        // Token prefixes of `bytes` as (split point, id), longest first.
        prefixes.clear();
        let mut p = prefix_parents[id];
        while p != NONE {
            prefixes.push((tokens[p as usize].len(), p));
            p = prefix_parents[p as usize];
        }
        // Token suffixes, longest first: split points rising, so both chains are walked
        // in the order of `k` (prefixes from the back).
        let mut s = suffix_parents[id];
        let mut next_prefix = prefixes.len();
        while s != NONE && next_prefix > 0 {
            let k = len - tokens[s as usize].len();
            while next_prefix > 0 && prefixes[next_prefix - 1].0 < k {
                next_prefix -= 1;
            }
            if next_prefix > 0 && prefixes[next_prefix - 1].0 == k {
                splits.push((prefixes[next_prefix - 1].1, s, id as Rank));
            }
            s = suffix_parents[s as usize];
        }
        interrupt::step(len + prefixes.len())?;
    }
    Ok(splits)
}

/// Each token's longest proper prefix that is a token (its id), or `NONE`; `NONE` for the
/// empty tokens (holes), which are no one's prefix either.
fn parents<'a>(bytes: impl Fn(usize) -> &'a [u8], n: usize) -> Result<Vec<u32>> {
    // Sorted by each token's first 8 bytes as a number, its bytes read only on a tie
    // (`memcmp` on bytes spread over the heap was most of building a 65,536-token
    // vocabulary). O(n log n) comparisons whatever the input.
    let mut order: Vec<(u64, u32)> = (0..n as u32)
        .map(|id| (bytes(id as usize), id))
        .filter(|(token, _)| !token.is_empty())
        .map(|(token, id)| (prefix_key(token), id))
        .collect();
    order.sort_unstable_by(|a, b| {
        a.0.cmp(&b.0).then_with(|| bytes(a.1 as usize).cmp(bytes(b.1 as usize)))
    });
    interrupt::step(n)?;
    let mut parent = vec![NONE; n];
    let mut stack: Vec<u32> = Vec::new();
    for (_, id) in order {
        let token = bytes(id as usize);
        while let Some(&top) = stack.last() {
            if token.starts_with(bytes(top as usize)) {
                break;
            }
            stack.pop();
        }
        parent[id as usize] = stack.last().copied().unwrap_or(NONE);
        stack.push(id);
        interrupt::step(token.len())?;
    }
    Ok(parent)
}

/// Every token's bytes reversed, in one buffer.
struct Reversed {
    bytes: Vec<u8>,
    /// Token `id` is `bytes[ends[id]..ends[id + 1]]`.
    ends: Vec<usize>,
}

impl Reversed {
    fn new(tokens: &[Vec<u8>]) -> Self {
        let mut bytes = Vec::with_capacity(tokens.iter().map(Vec::len).sum());
        let mut ends = Vec::with_capacity(tokens.len() + 1);
        ends.push(0);
        for token in tokens {
            bytes.extend(token.iter().rev());
            ends.push(bytes.len());
        }
        Self { bytes, ends }
    }

    fn get(&self, id: usize) -> &[u8] {
        &self.bytes[self.ends[id]..self.ends[id + 1]]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::Rng;
    use ahash::AHashMap;

    /// The construction this replaced: hash both sides of every split point.
    fn quadratic(tokens: &[Vec<u8>]) -> Vec<(Rank, Rank, Rank)> {
        let ranks: AHashMap<&[u8], Rank> = tokens
            .iter()
            .enumerate()
            .filter(|(_, t)| !t.is_empty())
            .map(|(id, t)| (t.as_slice(), id as Rank))
            .collect();
        let mut joins = Vec::new();
        for (id, bytes) in tokens.iter().enumerate() {
            for k in 1..bytes.len() {
                if let (Some(&l), Some(&r)) = (ranks.get(&bytes[..k]), ranks.get(&bytes[k..])) {
                    joins.push((l, r, id as Rank));
                }
            }
        }
        joins
    }

    fn splits(tokens: &[Vec<u8>]) -> Vec<(Rank, Rank, Rank)> {
        token_splits(tokens).unwrap()
    }

    /// A vocabulary over a small alphabet (so prefixes, suffixes and splits abound): the
    /// 256 bytes in a shuffled order, random distinct tokens, some holes, some tokens
    /// made from others (so long chains appear).
    fn random_vocab(rng: &mut Rng) -> Vec<Vec<u8>> {
        let alphabet = 1 + rng.below(4);
        let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        for i in (1..tokens.len()).rev() {
            tokens.swap(i, rng.below(i + 1));
        }
        let mut seen: std::collections::HashSet<Vec<u8>> = tokens.iter().cloned().collect();
        for _ in 0..rng.below(300) {
            let token: Vec<u8> = match rng.below(3) {
                0 => (0..1 + rng.below(12)).map(|_| b'a' + rng.below(alphabet) as u8).collect(),
                1 => {
                    let a = &tokens[rng.below(tokens.len())];
                    let b = &tokens[rng.below(tokens.len())];
                    [a.as_slice(), b].concat()
                }
                _ => vec![b'a'; 1 + rng.below(40)],
            };
            if rng.below(10) == 0 {
                tokens.push(Vec::new());
            }
            if seen.insert(token.clone()) {
                tokens.push(token);
            }
        }
        tokens
    }

    #[test]
    fn equals_every_split_hashed_on_random_vocabularies() {
        let mut rng = Rng(7);
        let mut found = 0;
        for round in 0..400 {
            let tokens = random_vocab(&mut rng);
            let want = quadratic(&tokens);
            assert_eq!(splits(&tokens), want, "vocabulary {round}");
            found += want.len();
        }
        // The vocabularies are rich in splits (tokens with several), not trivially empty.
        assert!(found > 400 * 100, "{found}");
    }

    /// The sort reads only the first 8 bytes of most tokens: tokens that tie there (zero
    /// bytes, a shared first 8 bytes, prefixes of one another) must still find their
    /// parents, and so every split.
    #[test]
    fn tokens_alike_in_their_first_8_bytes() {
        let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        for t in [
            &b"\0\0"[..],
            b"\0\0\0",
            b"a\0",
            b"a\0\0",
            b"\0a",
            b"abcdefgh",
            b"abcdefgh\0",
            b"abcdefgh\0\0",
            b"abcdefgha",
            b"abcdefghab",
            b"bcdefgha",
            b"bcdefgh",
            b"ab",
            b"gha",
            b"h\0",
            b"h\0\0",
        ] {
            tokens.push(t.to_vec());
        }
        let got = splits(&tokens);
        assert_eq!(got, quadratic(&tokens));
        // "abcdefgh" + "\0\0" and "abcdefgh\0" + "\0" are the splits of "abcdefgh\0\0".
        assert_eq!(got.iter().filter(|s| s.2 == 263).count(), 2, "{got:?}");
    }

    #[test]
    fn long_runs_and_their_halves() {
        // "a" * 2^k for every k, and "ab" * 2^k: every token splits into its halves (and
        // more); the longest is 4 KiB.
        let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        for k in 1..=12 {
            tokens.push(vec![b'a'; 1 << k]);
            tokens.push(b"ab".repeat(1 << (k - 1)));
        }
        tokens.push(Vec::new());
        let got = splits(&tokens);
        assert_eq!(got, quadratic(&tokens));
        // "a" + "a" = "aa" (256), "aa" + "aa" = "aaaa" (258), "abab" + "abab" (261).
        let a = b'a' as Rank;
        assert!(got.contains(&(a, a, 256)) && got.contains(&(256, 256, 258)));
        assert!(got.contains(&(259, 259, 261)));
    }

    #[test]
    fn one_long_token_is_linear() {
        // 1 MB: the old construction took over a minute here.
        let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        tokens.push(vec![b' '; 1 << 20]);
        tokens.push(vec![b' '; 2]);
        assert_eq!(splits(&tokens), vec![(32, 32, 257)]);
    }

    #[test]
    fn an_interrupt_stops_it() {
        let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        tokens.push(vec![b'x'; 1 << 22]);
        let stop = || Err(crate::error::Error::Interrupted);
        let stopped = interrupt::with_check(stop, || token_splits(&tokens));
        assert_eq!(stopped, Err(crate::error::Error::Interrupted));
    }
}
