//! Encoding one piece: byte-pair merging by rank of the merged bytes, as tiktoken does.
//!
//! Parts are always tokens, so "the rank of two adjacent parts' joined bytes" is a lookup
//! in [`Vocab::pair_rank`] (every split of every token into two tokens), with no byte
//! slicing or hashing of byte strings. Pieces of one or two bytes need no hashing of their
//! bytes at all. Short pieces use tiktoken's scan (O(n^2), fastest for small n) over
//! linked parts in arrays on the stack; long ones a heap over a linked list (O(n log n)),
//! so a million repeated characters encodes in milliseconds.

use std::cmp::Reverse;

use dary_heap::QuaternaryHeap;

use crate::vocab::Vocab;
use crate::Rank;

/// Pieces at least this long take the heap path.
const LONG_PIECE: usize = 128;

/// Appends the tokens of `piece` to `out`.
#[inline]
pub fn encode_piece(vocab: &Vocab, piece: &[u8], out: &mut Vec<Rank>) {
    match *piece {
        // One byte is its byte token; two bytes are one token exactly when the pair table
        // joins their byte tokens (it holds every split of every token), else the two
        // bytes. Both skip hashing the piece's bytes.
        [b] => out.push(vocab.byte_rank(b)),
        [a, b] => {
            let (a, b) = (vocab.byte_rank(a), vocab.byte_rank(b));
            match vocab.pair_rank(a, b) {
                Some(rank) => out.push(rank),
                None => out.extend([a, b]),
            }
        }
        _ => match vocab.rank(piece) {
            Some(rank) => out.push(rank),
            None => encode_piece_parts(vocab, piece, out),
        },
    }
}

/// Like [`encode_piece`] but never takes the whole-piece shortcut: the tokens that
/// merging by rank reaches, used to check that every token is reachable.
pub fn encode_piece_parts(vocab: &Vocab, piece: &[u8], out: &mut Vec<Rank>) {
    // Most pieces are short: their scan arrays are smaller to set up.
    if piece.len() <= 32 {
        merge_by_scan::<32>(vocab, piece, out);
    } else if piece.len() < LONG_PIECE {
        merge_by_scan::<LONG_PIECE>(vocab, piece, out);
    } else {
        merge_by_heap(vocab, piece, out);
    }
}

/// tiktoken's scan for pieces of at most `N` (at most 255) bytes, on arrays on the stack
/// (no allocation) indexed by the byte where a part starts, the parts linked in order (so
/// a merge moves nothing).
fn merge_by_scan<const N: usize>(vocab: &Vocab, piece: &[u8], out: &mut Vec<Rank>) {
    let n = piece.len();
    assert!(n <= N && N < 256, "pieces of at most N < 256 bytes");
    if n == 0 {
        return;
    }
    const NONE: usize = usize::MAX;
    // For the part starting at byte i: its token, the token joining it with the next part
    // (Rank::MAX: none, or no next part), and where the next part starts (n: none).
    let mut token = [0 as Rank; N];
    let mut join = [Rank::MAX; N];
    let mut next = [0u8; N];
    for (i, &b) in piece.iter().enumerate() {
        token[i] = vocab.byte_rank(b);
        next[i] = (i + 1) as u8;
    }
    let joined = |l: Rank, r: Rank| vocab.pair_rank(l, r).unwrap_or(Rank::MAX);
    for i in 0..n - 1 {
        join[i] = joined(token[i], token[i + 1]);
    }
    loop {
        // The lowest rank wins; ties go to the leftmost, as in tiktoken.
        let (mut best, mut at, mut before) = (Rank::MAX, 0, NONE);
        let (mut prev, mut i) = (NONE, 0);
        while i < n {
            if join[i] < best {
                (best, at, before) = (join[i], i, prev);
            }
            prev = i;
            i = next[i] as usize;
        }
        if best == Rank::MAX {
            break;
        }
        // The part at `at` absorbs the next one.
        token[at] = best;
        let after = next[next[at] as usize] as usize;
        next[at] = after as u8;
        join[at] = if after < n { joined(best, token[after]) } else { Rank::MAX };
        if before != NONE {
            join[before] = joined(token[before], best);
        }
    }
    let mut i = 0;
    while i < n {
        out.push(token[i]);
        i = next[i] as usize;
    }
}

fn merge_by_heap(vocab: &Vocab, piece: &[u8], out: &mut Vec<Rank>) {
    let n = piece.len();
    assert!(n < u32::MAX as usize, "pieces are shorter than 4 GiB");
    const NONE: u32 = u32::MAX;
    // A part starts at each live index i, ends at next[i] (n at the end), and is token[i].
    let mut token: Vec<Rank> = piece.iter().map(|&b| vocab.byte_rank(b)).collect();
    let mut next: Vec<u32> = (1..=n as u32).collect();
    let mut prev: Vec<u32> = (0..n as u32).map(|i| i.wrapping_sub(1)).collect();
    let mut live = vec![true; n];
    // Candidates packed as rank << 32 | left start: the min is the lowest rank, then the
    // leftmost, exactly tiktoken's choice.
    let mut heap: QuaternaryHeap<Reverse<u64>> = QuaternaryHeap::with_capacity(n);
    let key = |rank: Rank, left: u32| Reverse(u64::from(rank) << 32 | u64::from(left));
    for i in 0..n - 1 {
        if let Some(rank) = vocab.pair_rank(token[i], token[i + 1]) {
            heap.push(key(rank, i as u32));
        }
    }
    while let Some(Reverse(packed)) = heap.pop() {
        let (rank, left) = ((packed >> 32) as Rank, packed as u32 as usize);
        let right = next[left] as usize;
        // Stale unless the part at `left` still joins its neighbour into `rank` (then it
        // is the same merge: equal rank means equal bytes).
        if !live[left] || right >= n || vocab.pair_rank(token[left], token[right]) != Some(rank) {
            continue;
        }
        live[right] = false;
        let end = next[right];
        next[left] = end;
        token[left] = rank;
        if (end as usize) < n {
            prev[end as usize] = left as u32;
            if let Some(r) = vocab.pair_rank(rank, token[end as usize]) {
                heap.push(key(r, left as u32));
            }
        }
        let before = prev[left];
        if before != NONE {
            if let Some(r) = vocab.pair_rank(token[before as usize], rank) {
                heap.push(key(r, before));
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

    fn vocab(extra: &[&[u8]]) -> Vocab {
        let mut ranks: Vec<(Vec<u8>, Rank)> = (0..=255u8).map(|b| (vec![b], b as Rank)).collect();
        for (i, t) in extra.iter().enumerate() {
            ranks.push((t.to_vec(), 256 + i as Rank));
        }
        Vocab::from_ranks(ranks, &[]).unwrap()
    }

    /// tiktoken's rule written directly on bytes: the reference for both paths.
    fn by_bytes(v: &Vocab, piece: &[u8]) -> Vec<Rank> {
        let mut parts: Vec<Vec<u8>> = piece.iter().map(|&b| vec![b]).collect();
        loop {
            let best = (0..parts.len().saturating_sub(1))
                .filter_map(|i| {
                    v.rank(&[parts[i].as_slice(), &parts[i + 1]].concat()).map(|r| (r, i))
                })
                .min();
            let Some((_, i)) = best else { break };
            let right = parts.remove(i + 1);
            parts[i].extend(right);
        }
        parts.iter().map(|p| v.rank(p).unwrap()).collect()
    }

    #[test]
    fn scan_heap_and_bytes_agree() {
        let v = vocab(&[b"ab", b"bc", b"abc", b"aa", b"aaaa", b"cab", b"bca", b"aaa"]);
        for piece in [&b"abcabcaab"[..], b"aaaaaaaaaab", b"cabcabcab", b"bcbcbcab", b"aaaaaaa"] {
            let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
            merge_by_scan::<LONG_PIECE>(&v, piece, &mut a);
            merge_by_heap(&v, piece, &mut b);
            merge_by_scan::<32>(&v, piece, &mut c);
            assert_eq!(a, by_bytes(&v, piece), "{:?}", String::from_utf8_lossy(piece));
            assert_eq!(b, a, "{:?}", String::from_utf8_lossy(piece));
            assert_eq!(c, a, "{:?}", String::from_utf8_lossy(piece));
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

    #[test]
    fn permuted_byte_ids() {
        let ranks: Vec<(Vec<u8>, Rank)> = (0..=255u8)
            .map(|b| (vec![255 - b], b as Rank))
            .chain([(b"ab".to_vec(), 256)])
            .collect();
        let v = Vocab::from_ranks(ranks, &[]).unwrap();
        let mut out = Vec::new();
        encode_piece(&v, b"abc", &mut out);
        assert_eq!(out, vec![256, 255 - b'c' as Rank]);
    }
}
