//! Long pieces (a million repeated spaces is one piece) merged rank by rank over a linked
//! list, in time about linear in the piece: tiktoken's order without its quadratic scan.

use std::cmp::Reverse;

use ahash::AHashMap;
use dary_heap::QuaternaryHeap;

use crate::vocab::{Vocab, NO_JOIN};
use crate::Rank;

/// Candidates packed as `rank << 32 | left start`: the lowest is the lowest rank, then the
/// leftmost, exactly tiktoken's choice.
#[inline]
fn key(rank: Rank, left: u32) -> u64 {
    u64::from(rank) << 32 | u64::from(left)
}

/// Candidates not yet merged, by rank: each rank above the one being swept waits in its
/// own bucket (positions in the order they came); the rank being swept and any lower one
/// a merge creates go to a small heap.
struct Pending {
    /// The rank being swept (None before the first).
    current: Option<Rank>,
    /// Candidates at or below `current`, served before the sweep when lower.
    urgent: QuaternaryHeap<Reverse<u64>>,
    /// Buckets, found by rank through `slot_of`; a swept bucket's slot is left empty.
    buckets: Vec<Vec<u32>>,
    slot_of: AHashMap<Rank, usize>,
    /// The two ranks added to most recently and their slots: a merge adds two candidates
    /// and a long piece keeps adding to the same few ranks, so most adds skip the map.
    recent: [(Rank, usize); 2],
    /// The ranks that have a bucket.
    ranks: QuaternaryHeap<Reverse<Rank>>,
}

impl Pending {
    fn new() -> Self {
        Self {
            current: None,
            urgent: QuaternaryHeap::new(),
            buckets: Vec::new(),
            slot_of: AHashMap::new(),
            recent: [(Rank::MAX, 0); 2],
            ranks: QuaternaryHeap::new(),
        }
    }

    fn add(&mut self, rank: Rank, left: u32) {
        if self.current.is_some_and(|c| rank <= c) {
            self.urgent.push(Reverse(key(rank, left)));
            return;
        }
        let slot = if self.recent[0].0 == rank {
            self.recent[0].1
        } else if self.recent[1].0 == rank {
            self.recent.swap(0, 1);
            self.recent[0].1
        } else {
            let slot = *self.slot_of.entry(rank).or_insert_with(|| {
                self.ranks.push(Reverse(rank));
                self.buckets.push(Vec::new());
                self.buckets.len() - 1
            });
            self.recent = [(rank, slot), self.recent[0]];
            slot
        };
        self.buckets[slot].push(left);
    }

    /// The lowest rank with a bucket, made the current rank, and its positions sorted.
    fn next_rank(&mut self) -> Option<Vec<u32>> {
        let Reverse(rank) = self.ranks.pop()?;
        let slot = self.slot_of.remove(&rank).expect("a listed rank has a bucket");
        self.recent.iter_mut().filter(|r| r.0 == rank).for_each(|r| r.0 = Rank::MAX);
        let mut sweep = std::mem::take(&mut self.buckets[slot]);
        sweep.sort_unstable();
        self.current = Some(rank);
        Some(sweep)
    }
}

/// Long pieces (a million repeated spaces is one piece): tiktoken's order, lowest rank
/// then leftmost, without a heap over every candidate. Ranks are taken in increasing
/// order; each rank's bucket is sorted by position (it usually is already) and swept left
/// to right. A merge creates candidates only beside itself: one ranked above the current
/// rank waits in its bucket; one at or below it (a merge can make a lower-ranked pair)
/// goes to a small heap, served whenever it holds the lowest (rank, position), so every
/// merge is the one a heap over all candidates would pop. A merge can never create a
/// pair of the rank just merged (the new pair's bytes contain the merged token's and
/// more). Candidates that stopped being pairs are skipped when they come up.
pub(super) fn merge_by_levels(vocab: &Vocab, piece: &[u8], out: &mut Vec<Rank>) {
    let n = piece.len();
    assert!(n < u32::MAX as usize, "pieces are shorter than 4 GiB");
    const NONE: u32 = u32::MAX;
    // A part starts at each live index i, ends at next[i] (n at the end), and is token[i].
    let mut token: Vec<Rank> = piece.iter().map(|&b| vocab.byte_rank(b)).collect();
    let mut next: Vec<u32> = (1..=n as u32).collect();
    let mut prev: Vec<u32> = (0..n as u32).map(|i| i.wrapping_sub(1)).collect();
    let mut live = vec![true; n];
    let mut pending = Pending::new();
    for i in 0..n - 1 {
        let rank = vocab.join_bytes(piece[i], piece[i + 1]);
        if rank != NO_JOIN {
            pending.add(rank, i as u32);
        }
    }
    // The current rank's positions, and how many have been taken.
    let (mut sweep, mut taken) = (Vec::new(), 0);
    loop {
        let swept = sweep.get(taken).map(|&at| key(pending.current.unwrap_or(0), at));
        let packed = match (pending.urgent.peek(), swept) {
            (Some(&Reverse(u)), s) if s.is_none_or(|s| s > u) => {
                pending.urgent.pop();
                u
            }
            (_, Some(s)) => {
                taken += 1;
                s
            }
            (_, None) => {
                let Some(next_sweep) = pending.next_rank() else { break };
                (sweep, taken) = (next_sweep, 0);
                continue;
            }
        };
        let (rank, left) = ((packed >> 32) as Rank, packed as u32 as usize);
        let right = next[left] as usize;
        // Stale unless the part at `left` still joins its neighbour into `rank` (then it
        // is the same merge: equal rank means equal bytes).
        if !live[left] || right >= n || vocab.join_parts(token[left], token[right]) != Some(rank) {
            continue;
        }
        live[right] = false;
        let end = next[right];
        next[left] = end;
        token[left] = rank;
        if (end as usize) < n {
            prev[end as usize] = left as u32;
            if let Some(r) = vocab.join_parts(rank, token[end as usize]) {
                pending.add(r, left as u32);
            }
        }
        let before = prev[left];
        if before != NONE {
            if let Some(r) = vocab.join_parts(token[before as usize], rank) {
                pending.add(r, before);
            }
        }
    }
    let mut i = 0;
    while i < n {
        out.push(token[i]);
        i = next[i] as usize;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::tests::{by_bytes, lcg, random_vocab, vocab};
    use crate::encode::{encode_piece, merge_by_scan, LONG_PIECE};

    /// The long-piece path against the plain rule on bytes, for random vocabularies and
    /// pieces: runs of one byte of random lengths, two-letter mixes, and any letters.
    #[test]
    fn levels_match_the_rule_on_random_pieces() {
        for seed in 0..12u64 {
            let alphabet = b"abcd ";
            let v = random_vocab(seed, alphabet, 120, 10);
            let mut next = lcg(seed + 100);
            for case in 0..30 {
                let len = 1 + next() % 400;
                let piece: Vec<u8> = match case % 3 {
                    0 => vec![alphabet[next() % alphabet.len()]; len],
                    1 => {
                        let (x, y) = (alphabet[next() % 5], alphabet[next() % 5]);
                        (0..len).map(|_| if next().is_multiple_of(4) { y } else { x }).collect()
                    }
                    _ => (0..len).map(|_| alphabet[next() % alphabet.len()]).collect(),
                };
                let mut got = Vec::new();
                merge_by_levels(&v, &piece, &mut got);
                assert_eq!(
                    got,
                    by_bytes(&v, &piece),
                    "seed {seed}: {:?}",
                    String::from_utf8_lossy(&piece)
                );
                if piece.len() < LONG_PIECE {
                    let mut scan = Vec::new();
                    merge_by_scan::<LONG_PIECE>(&v, &piece, &mut scan);
                    assert_eq!(got, scan);
                }
            }
        }
    }

    /// A merge can make a pair ranked below the rank being swept ("ab" + "a" is "aba",
    /// ranked first): it must be merged before the sweep goes on to the next "ab".
    #[test]
    fn levels_serve_lower_ranks_a_merge_creates_first() {
        let v = vocab(&[b"aba", b"ab", b"aa"]);
        for piece in [&b"abab"[..], b"ababab", b"abababababab", b"aabab", b"abaaba"] {
            let long: Vec<u8> = piece.iter().copied().cycle().take(300).collect();
            for p in [piece, &long[..]] {
                let mut got = Vec::new();
                merge_by_levels(&v, p, &mut got);
                assert_eq!(got, by_bytes(&v, p), "{:?}", String::from_utf8_lossy(p));
            }
        }
    }

    #[test]
    fn long_runs_merge_by_rank() {
        let v = vocab(&[b"aa", b"aaaa"]);
        let mut out = Vec::new();
        encode_piece(&v, &vec![b'a'; 1_000_001], &mut out);
        assert_eq!(out.len(), 250_001);
        assert_eq!(out[..250_000].iter().filter(|&&t| t == 257).count(), 250_000);
        assert_eq!(out[250_000], b'a' as Rank);
    }
}
