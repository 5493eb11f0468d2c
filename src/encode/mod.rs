//! Encoding one piece: byte-pair merging by rank of the merged bytes, as tiktoken does.
//!
//! Parts are always tokens, so "the rank of two adjacent parts' joined bytes" is a lookup
//! in [`Vocab::pair_rank`] (every split of every token into two tokens), with no byte
//! slicing or hashing of byte strings. Pieces of one or two bytes need no hashing of their
//! bytes at all. Pieces under 128 bytes follow tiktoken's scan (O(n^2), fastest for
//! small n) on arrays on the stack: the lowest packed `rank << log2(N) | position` key
//! over 8, 16, 32, 64 or 128 slots, a minimum the compiler vectorizes; long ones merge rank
//! by rank over a linked list (a bucket of candidates per rank, swept left to right), so a
//! million repeated characters is about a tenth of a second. Pieces that are not whole
//! tokens are merged once per thread and then come from [`PieceCache`], kept between calls.

use std::cmp::Reverse;

use ahash::AHashMap;
use dary_heap::QuaternaryHeap;

use crate::vocab::Vocab;
use crate::Rank;

/// Pieces at least this long merge rank by rank (`merge_by_levels`).
const LONG_PIECE: usize = 128;

mod cache;
mod flat;

pub use cache::PieceCache;
pub use flat::FlatBatch;

/// Appends the tokens of `piece` to `out`.
#[inline]
pub fn encode_piece(vocab: &Vocab, piece: &[u8], out: &mut Vec<Rank>) {
    if !encode_short_or_token(vocab, piece, out) {
        encode_piece_parts(vocab, piece, out);
    }
}

/// [`encode_piece`], merging a piece that is not a whole token only the first time
/// `cache` sees it (the same ids: the cache holds what merging gave).
#[inline]
pub fn encode_piece_cached(
    vocab: &Vocab,
    piece: &[u8],
    out: &mut Vec<Rank>,
    cache: &mut PieceCache,
) {
    if !encode_short_or_token(vocab, piece, out) {
        if piece.len() <= cache::MAX_CACHED {
            cache.encode_parts(vocab, piece, out);
        } else {
            encode_piece_parts(vocab, piece, out);
        }
    }
}

/// Appends the tokens of a piece of one or two bytes, or of a piece that is one token;
/// false (nothing appended) for any other piece.
#[inline]
fn encode_short_or_token(vocab: &Vocab, piece: &[u8], out: &mut Vec<Rank>) -> bool {
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
            None => return false,
        },
    }
    true
}

/// Like [`encode_piece`] but never takes the whole-piece shortcut: the tokens that
/// merging by rank reaches, used to check that every token is reachable.
pub fn encode_piece_parts(vocab: &Vocab, piece: &[u8], out: &mut Vec<Rank>) {
    // Pieces of a few bytes scan their few parts; longer ones take the minimum of packed
    // keys over a fixed array (a loop without branches that the compiler vectorizes),
    // when the ids leave room for the position bits.
    match piece.len() {
        0..=8 if fits_keys::<8>(vocab) => merge_by_min::<8>(vocab, piece, out),
        0..=8 => merge_by_scan::<8>(vocab, piece, out),
        9..=16 if fits_keys::<16>(vocab) => merge_by_min::<16>(vocab, piece, out),
        9..=32 if fits_keys::<32>(vocab) => merge_by_min::<32>(vocab, piece, out),
        9..=32 => merge_by_scan::<32>(vocab, piece, out),
        33..=64 if fits_keys::<64>(vocab) => merge_by_min::<64>(vocab, piece, out),
        65..LONG_PIECE if fits_keys::<LONG_PIECE>(vocab) => {
            merge_by_min::<LONG_PIECE>(vocab, piece, out)
        }
        33..LONG_PIECE => merge_by_scan::<LONG_PIECE>(vocab, piece, out),
        _ => merge_by_levels(vocab, piece, out),
    }
}

/// Whether every `rank << log2(N) | position` key stays below `i32::MAX` (N a power of two).
fn fits_keys<const N: usize>(vocab: &Vocab) -> bool {
    (vocab.len() as u64) < (1u64 << (31 - N.trailing_zeros()))
}

/// tiktoken's rule for pieces of at most `N` bytes (N a power of two, at most 128, with
/// [`fits_keys`]): each part's candidate merge is one key, `rank << log2(N) | the part's
/// first byte`, in an array indexed by that byte (`i32::MAX`: none), so the lowest key is
/// the lowest rank and then the leftmost part, exactly tiktoken's choice, and finding it
/// is a minimum over N keys with no branches. Keys are i32 because baseline x86-64 (SSE2)
/// compares signed 32-bit lanes, so the minimum vectorizes.
fn merge_by_min<const N: usize>(vocab: &Vocab, piece: &[u8], out: &mut Vec<Rank>) {
    let n = piece.len();
    assert!(n <= N && N <= 128 && N.is_power_of_two(), "pieces of at most N <= 128 bytes");
    let shift = N.trailing_zeros();
    const NONE: u8 = u8::MAX;
    let mut token = [0 as Rank; N];
    let mut key = [i32::MAX; N];
    // The parts in order: where the next one starts (n: none), where the previous starts.
    let mut next = [0u8; N];
    let mut prev = [NONE; N];
    for (i, &b) in piece.iter().enumerate() {
        token[i] = vocab.byte_rank(b);
        next[i] = (i + 1) as u8;
        prev[i] = (i as u8).wrapping_sub(1);
    }
    let key_of = |l: Rank, r: Rank, at: usize| match vocab.pair_rank(l, r) {
        Some(rank) => (rank << shift | at as u32) as i32,
        None => i32::MAX,
    };
    for i in 0..n.saturating_sub(1) {
        key[i] = key_of(token[i], token[i + 1], i);
    }
    loop {
        let best = key.iter().fold(i32::MAX, |m, &k| m.min(k));
        if best == i32::MAX {
            break;
        }
        let (rank, at) = ((best as u32) >> shift, (best as usize) & (N - 1));
        // The part at `at` absorbs the next one, which stops being a part.
        let right = next[at] as usize;
        key[right] = i32::MAX;
        token[at] = rank;
        let after = next[right] as usize;
        next[at] = after as u8;
        key[at] = if after < n {
            prev[after] = at as u8;
            key_of(rank, token[after], at)
        } else {
            i32::MAX
        };
        let before = prev[at];
        if before != NONE {
            key[before as usize] = key_of(token[before as usize], rank, before as usize);
        }
    }
    let mut i = 0;
    while i < n {
        out.push(token[i]);
        i = next[i] as usize;
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
fn merge_by_levels(vocab: &Vocab, piece: &[u8], out: &mut Vec<Rank>) {
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
        if let Some(rank) = vocab.pair_rank(token[i], token[i + 1]) {
            pending.add(rank, i as u32);
        }
    }
    // The current rank's positions, and how many have been taken.
    let (mut sweep, mut taken) = (Vec::new(), 0);
    loop {
        let swept = sweep.get(taken).map(|&at| key(pending.current.unwrap_or(0), at));
        let packed = match (pending.urgent.peek(), swept) {
            (Some(&Reverse(u)), s) if !s.is_some_and(|s| s <= u) => {
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
                pending.add(r, left as u32);
            }
        }
        let before = prev[left];
        if before != NONE {
            if let Some(r) = vocab.pair_rank(token[before as usize], rank) {
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

    fn vocab(extra: &[&[u8]]) -> Vocab {
        let mut ranks: Vec<(Vec<u8>, Rank)> = (0..=255u8).map(|b| (vec![b], b as Rank)).collect();
        for (i, t) in extra.iter().enumerate() {
            ranks.push((t.to_vec(), 256 + i as Rank));
        }
        Vocab::from_ranks(ranks, &[]).unwrap()
    }

    /// A piece merger of this module.
    type Merger = fn(&Vocab, &[u8], &mut Vec<Rank>);

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
    fn scan_levels_and_bytes_agree() {
        let v = vocab(&[b"ab", b"bc", b"abc", b"aa", b"aaaa", b"cab", b"bca", b"aaa"]);
        for piece in [&b"abcabcaab"[..], b"aaaaaaaaaab", b"cabcabcab", b"bcbcbcab", b"aaaaaaa"] {
            let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
            merge_by_scan::<LONG_PIECE>(&v, piece, &mut a);
            merge_by_levels(&v, piece, &mut b);
            merge_by_scan::<32>(&v, piece, &mut c);
            let mins: [Merger; 5] = [
                merge_by_min::<8>,
                merge_by_min::<16>,
                merge_by_min::<32>,
                merge_by_min::<64>,
                merge_by_min::<LONG_PIECE>,
            ];
            for (limit, min) in [8, 16, 32, 64, LONG_PIECE].into_iter().zip(mins) {
                if piece.len() <= limit {
                    let mut d = Vec::new();
                    min(&v, piece, &mut d);
                    assert_eq!(d, a, "{limit}: {:?}", String::from_utf8_lossy(piece));
                }
            }
            assert_eq!(a, by_bytes(&v, piece), "{:?}", String::from_utf8_lossy(piece));
            assert_eq!(b, a, "{:?}", String::from_utf8_lossy(piece));
            assert_eq!(c, a, "{:?}", String::from_utf8_lossy(piece));
        }
    }

    /// A small deterministic generator for the randomized tests.
    pub(super) fn lcg(seed: u64) -> impl FnMut() -> usize {
        let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        move || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) as usize
        }
    }

    /// A vocabulary of `merges` random merges of tokens made of `alphabet` (at most
    /// `max_len` bytes each), as training would record them, so pieces of those letters
    /// merge in many steps and merges can create lower-ranked pairs.
    pub(super) fn random_vocab(seed: u64, alphabet: &[u8], merges: usize, max_len: usize) -> Vocab {
        let mut next = lcg(seed);
        let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        let usable: Vec<usize> = alphabet.iter().map(|&b| b as usize).collect();
        let mut usable = usable;
        let mut records = Vec::new();
        let mut tries = 0;
        while records.len() < merges && tries < 100 * merges {
            tries += 1;
            let (l, r) = (usable[next() % usable.len()], usable[next() % usable.len()]);
            let joined = [tokens[l].as_slice(), &tokens[r]].concat();
            if joined.len() > max_len || tokens.contains(&joined) {
                continue;
            }
            let token = tokens.len() as Rank;
            records.push(crate::vocab::MergeRecord {
                left: l as Rank,
                right: r as Rank,
                token,
                count: 1,
            });
            usable.push(tokens.len());
            tokens.push(joined);
        }
        Vocab::from_merges(records, &[]).unwrap()
    }

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
                        (0..len).map(|_| if next() % 4 == 0 { y } else { x }).collect()
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
