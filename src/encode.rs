//! Encoding one piece: byte-pair merging by rank of the merged bytes, as tiktoken does.
//!
//! Short pieces use tiktoken's scan (fast for small n, O(n^2)); long ones a heap over a
//! linked list, O(n log n), so a million repeated characters stays linear-ish.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use ahash::AHashMap;

use crate::Rank;

/// Pieces at least this long take the heap path.
const LONG_PIECE: usize = 128;

/// Appends the tokens of `piece` to `out`. Every single byte must be in `ranks`.
pub fn encode_piece(ranks: &AHashMap<Vec<u8>, Rank>, piece: &[u8], out: &mut Vec<Rank>) {
    match ranks.get(piece) {
        Some(&rank) => out.push(rank),
        None => encode_piece_parts(ranks, piece, out),
    }
}

/// Like [`encode_piece`] but never takes the whole-piece shortcut: the tokens that
/// merging by rank reaches, used to check that every token is reachable.
pub fn encode_piece_parts(ranks: &AHashMap<Vec<u8>, Rank>, piece: &[u8], out: &mut Vec<Rank>) {
    if piece.len() == 1 {
        out.push(ranks[piece]);
    } else if piece.len() < LONG_PIECE {
        merge_by_scan(ranks, piece, out);
    } else {
        merge_by_heap(ranks, piece, out);
    }
}

fn merge_by_scan(ranks: &AHashMap<Vec<u8>, Rank>, piece: &[u8], out: &mut Vec<Rank>) {
    // parts[i] = (start of part i, rank of part i joined with part i+1).
    let rank_of = |parts: &[(usize, Rank)], i: usize| -> Rank {
        if i + 2 < parts.len() {
            ranks.get(&piece[parts[i].0..parts[i + 2].0]).copied().unwrap_or(Rank::MAX)
        } else {
            Rank::MAX
        }
    };
    let mut parts: Vec<(usize, Rank)> = (0..=piece.len()).map(|i| (i, Rank::MAX)).collect();
    for i in 0..parts.len() {
        parts[i].1 = rank_of(&parts, i);
    }
    loop {
        let mut best = (Rank::MAX, 0);
        for (i, &(_, rank)) in parts[..parts.len() - 1].iter().enumerate() {
            if rank < best.0 {
                best = (rank, i);
            }
        }
        if best.0 == Rank::MAX {
            break;
        }
        let i = best.1;
        parts.remove(i + 1);
        parts[i].1 = rank_of(&parts, i);
        if i > 0 {
            parts[i - 1].1 = rank_of(&parts, i - 1);
        }
    }
    out.extend(parts.windows(2).map(|w| ranks[&piece[w[0].0..w[1].0]]));
}

fn merge_by_heap(ranks: &AHashMap<Vec<u8>, Rank>, piece: &[u8], out: &mut Vec<Rank>) {
    let n = piece.len();
    // A part starts at each live index i and ends at next[i]; prev links back.
    let mut next: Vec<usize> = (1..=n).collect();
    let mut prev: Vec<usize> = (0..n).map(|i| i.wrapping_sub(1)).collect();
    let mut live = vec![true; n];
    // (rank, left start, end of the right part): lowest rank first, then leftmost.
    let mut heap = BinaryHeap::new();
    let push = |heap: &mut BinaryHeap<Reverse<(Rank, usize, usize)>>, start: usize, end: usize| {
        if let Some(&rank) = ranks.get(&piece[start..end]) {
            heap.push(Reverse((rank, start, end)));
        }
    };
    for i in 0..n - 1 {
        push(&mut heap, i, i + 2);
    }
    while let Some(Reverse((_, left, end))) = heap.pop() {
        let right = next[left];
        // Stale unless both parts still exist with the same bounds.
        if !live[left] || right >= n || next[right] != end {
            continue;
        }
        live[right] = false;
        next[left] = end;
        if end < n {
            prev[end] = left;
            push(&mut heap, left, next[end]);
        }
        if left > 0 {
            push(&mut heap, prev[left], end);
        }
    }
    let mut i = 0;
    while i < n {
        out.push(ranks[&piece[i..next[i]]]);
        i = next[i];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranks(extra: &[&[u8]]) -> AHashMap<Vec<u8>, Rank> {
        let mut r: AHashMap<Vec<u8>, Rank> = (0..=255u8).map(|b| (vec![b], b as Rank)).collect();
        for (i, t) in extra.iter().enumerate() {
            r.insert(t.to_vec(), 256 + i as Rank);
        }
        r
    }

    #[test]
    fn scan_and_heap_agree() {
        let r = ranks(&[b"ab", b"bc", b"abc", b"aa", b"aaaa", b"cab"]);
        for piece in [&b"abcabcaab"[..], b"aaaaaaaaaab", b"cabcabcab", b"bcbcbcab"] {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            merge_by_scan(&r, piece, &mut a);
            merge_by_heap(&r, piece, &mut b);
            assert_eq!(a, b, "{:?}", String::from_utf8_lossy(piece));
        }
    }

    #[test]
    fn long_runs_merge_by_rank() {
        let r = ranks(&[b"aa", b"aaaa"]);
        let mut out = Vec::new();
        encode_piece(&r, &vec![b'a'; 1_000_001], &mut out);
        assert_eq!(out.len(), 250_001);
        assert_eq!(out[..250_000].iter().filter(|&&t| t == 257).count(), 250_000);
        assert_eq!(out[250_000], b'a' as Rank);
    }
}
