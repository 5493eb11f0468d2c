//! Encoding one piece: byte-pair merging by rank of the merged bytes, as tiktoken does.
//!
//! Parts are always tokens, so "the rank of two adjacent parts' joined bytes" is a lookup
//! in [`Vocab::pair_rank`] (each token's one split that merging can take), with no byte
//! slicing or hashing of byte strings. Every piece is first looked up whole (every byte is
//! a token). Pieces under 128 bytes follow tiktoken's scan (O(n^2), fastest for
//! small n) on arrays on the stack: the lowest packed `rank << log2(N) | position` key
//! over 8, 16, 32, 64 or 128 slots, a minimum the compiler vectorizes; long ones merge rank
//! by rank over a linked list (`levels.rs`: a bucket of candidates per rank, swept left to
//! right), so a million repeated characters is about a tenth of a second. Pieces that are
//! not whole tokens are merged once per thread and then come from [`PieceCache`], kept
//! between calls.

use crate::vocab::{PieceKey, Vocab};
use crate::Rank;

/// Pieces at least this long merge rank by rank (`merge_by_levels`).
const LONG_PIECE: usize = 128;

mod batch;
mod cache;
mod flat;
mod levels;
mod min;

pub use batch::{PieceBatch, ToBatch};
pub use cache::PieceCache;
pub use flat::{write_ids, FlatBatch};
use levels::merge_by_levels;
use min::{fits_keys, merge_by_min};

/// Appends the tokens of `piece` to `out`.
#[inline]
pub fn encode_piece(vocab: &Vocab, piece: &[u8], out: &mut Vec<Rank>) {
    match vocab.rank(piece) {
        Some(rank) => out.push(rank),
        None => encode_piece_parts(vocab, piece, out),
    }
}

/// [`encode_piece`], merging a piece that is not a whole token only the first time
/// `cache` sees it (the same ids: the cache holds what merging gave). The piece is hashed
/// once, for the whole-token lookup and the cache.
#[inline]
pub fn encode_piece_cached(
    vocab: &Vocab,
    piece: &[u8],
    out: &mut Vec<Rank>,
    cache: &mut PieceCache,
) {
    encode_piece_keyed(vocab, piece, &PieceKey::of(piece), out, cache);
}

/// [`encode_piece_cached`] with the piece's key computed (`PieceKey::of(piece)`). Every
/// piece, of any length, is first looked up whole: a byte is always a token, so only the
/// pieces that are not tokens branch on their length.
#[inline(always)]
fn encode_piece_keyed(
    vocab: &Vocab,
    piece: &[u8],
    key: &PieceKey,
    out: &mut Vec<Rank>,
    cache: &mut PieceCache,
) {
    match vocab.rank_keyed(piece, key) {
        Some(rank) => out.push(rank),
        None => encode_not_token(vocab, piece, key, out, cache),
    }
}

/// Appends the tokens of a piece that is not a whole token.
#[inline(always)]
fn encode_not_token(
    vocab: &Vocab,
    piece: &[u8],
    key: &PieceKey,
    out: &mut Vec<Rank>,
    cache: &mut PieceCache,
) {
    match piece.len() {
        // Two bytes that are not a token stay two (an empty piece has none).
        0..=2 => out.extend(piece.iter().map(|&b| vocab.byte_rank(b))),
        3..=cache::MAX_CACHED => cache.encode_parts(vocab, piece, key, out),
        _ => encode_piece_parts(vocab, piece, out),
    }
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

/// Appends the tokens of the parts, in order, from the part at 0.
#[inline(always)]
fn push_parts(token: &[Rank], next: &[u8], n: usize, out: &mut Vec<Rank>) {
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
    let joined = |l: Rank, r: Rank| vocab.join_parts(l, r).unwrap_or(Rank::MAX);
    for i in 0..n - 1 {
        join[i] = vocab.join_bytes(piece[i], piece[i + 1]); // NO_JOIN is Rank::MAX
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
    push_parts(&token, &next, n, out);
}

#[cfg(test)]
mod tests {
    use super::min::merge_by_min_portable;
    use super::*;

    pub(super) use crate::vocab::bytes_then as vocab;

    /// A piece merger of this module.
    type Merger = fn(&Vocab, &[u8], &mut Vec<Rank>);

    /// tiktoken's rule written directly on bytes: the reference for both paths.
    pub(super) fn by_bytes(v: &Vocab, piece: &[u8]) -> Vec<Rank> {
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
            assert_mergers_agree(&v, piece);
        }
    }

    /// The same on a vocabulary large enough for the perfect pair table, with pieces of
    /// every merger's lengths (and the long pieces' merger).
    #[test]
    fn mergers_agree_over_a_perfect_pair_table() {
        let v = random_vocab(7, b"abcdefgh ", 20_000, 24);
        assert!(
            matches!(v.joins(), crate::vocab::Joins::Perfect(_)),
            "a perfect table: {}",
            v.len()
        );
        let mut next = lcg(8);
        for len in (1..=140).chain([200, 300]) {
            let piece: Vec<u8> = (0..len).map(|_| b"abcdefgh "[next() % 9]).collect();
            assert_mergers_agree(&v, &piece);
        }
    }

    /// Every merger that takes `piece` gives `by_bytes`'s tokens.
    fn assert_mergers_agree(v: &Vocab, piece: &[u8]) {
        let show = String::from_utf8_lossy(piece);
        let want = by_bytes(v, piece);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        merge_by_levels(v, piece, &mut a);
        assert_eq!(a, want, "levels: {show:?}");
        if piece.len() <= LONG_PIECE {
            merge_by_scan::<LONG_PIECE>(v, piece, &mut b);
            assert_eq!(b, want, "scan: {show:?}");
        }
        if piece.len() <= 32 {
            b.clear();
            merge_by_scan::<32>(v, piece, &mut b);
            assert_eq!(b, want, "scan 32: {show:?}");
        }
        // Dispatching (AVX2 where the CPU has it) and the code for any CPU.
        let mins: [(Merger, Merger); 5] = [
            (merge_by_min::<8>, merge_by_min_portable::<8>),
            (merge_by_min::<16>, merge_by_min_portable::<16>),
            (merge_by_min::<32>, merge_by_min_portable::<32>),
            (merge_by_min::<64>, merge_by_min_portable::<64>),
            (merge_by_min::<LONG_PIECE>, merge_by_min_portable::<LONG_PIECE>),
        ];
        for (limit, (min, portable)) in [8, 16, 32, 64, LONG_PIECE].into_iter().zip(mins) {
            if piece.len() <= limit {
                let (mut d, mut e) = (Vec::new(), Vec::new());
                min(v, piece, &mut d);
                portable(v, piece, &mut e);
                assert_eq!(d, want, "{limit}: {show:?}");
                assert_eq!(e, want, "{limit}, portable: {show:?}");
            }
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
        let mut known: std::collections::HashSet<Vec<u8>> = tokens.iter().cloned().collect();
        let mut tries = 0;
        while records.len() < merges && tries < 100 * merges {
            tries += 1;
            let (l, r) = (usable[next() % usable.len()], usable[next() % usable.len()]);
            let joined = [tokens[l].as_slice(), &tokens[r]].concat();
            if joined.len() > max_len || !known.insert(joined.clone()) {
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

    /// Vocabularies of random tokens ranked in no merge order (tokens ranked before their
    /// parts, tokens no merging reaches, tokens with several splits): every merger, whose
    /// pair table holds one split a token, against the rule on bytes, which looks up the
    /// joined bytes of any split. Runs of one letter make ties.
    #[test]
    fn one_split_a_token_merges_like_every_split() {
        for seed in 0..12u64 {
            let mut next = lcg(seed + 500);
            let alphabet = b"abc ";
            let mut tokens: Vec<Vec<u8>> = Vec::new();
            while tokens.len() < 150 {
                let len = 2 + next() % 6;
                let token: Vec<u8> = (0..len).map(|_| alphabet[next() % 4]).collect();
                if !tokens.contains(&token) {
                    tokens.push(token);
                }
            }
            // Runs of "a" past the length whose split is checked (those keep every split).
            for _ in 0..10 {
                let run = vec![b'a'; 2 + next() % 90];
                if !tokens.contains(&run) {
                    tokens.push(run);
                }
            }
            let tokens: Vec<&[u8]> = tokens.iter().map(Vec::as_slice).collect();
            let v = vocab(&tokens);
            for case in 0..24 {
                let len = 1 + next() % 140;
                let piece: Vec<u8> = match case % 3 {
                    0 => vec![alphabet[next() % 4]; len],
                    1 => (0..len).map(|i| alphabet[(i / (1 + next() % 3)) % 2]).collect(),
                    _ => (0..len).map(|_| alphabet[next() % 4]).collect(),
                };
                let want = by_bytes(&v, &piece);
                let show = String::from_utf8_lossy(&piece);
                let (mut got, mut levels) = (Vec::new(), Vec::new());
                encode_piece_parts(&v, &piece, &mut got);
                assert_eq!(got, want, "seed {seed}: {show:?}");
                merge_by_levels(&v, &piece, &mut levels);
                assert_eq!(levels, want, "seed {seed}: {show:?}");
                if len < LONG_PIECE {
                    let mut scan = Vec::new();
                    merge_by_scan::<LONG_PIECE>(&v, &piece, &mut scan);
                    assert_eq!(scan, want, "seed {seed}: {show:?}");
                    let mut portable = Vec::new();
                    merge_by_min_portable::<LONG_PIECE>(&v, &piece, &mut portable);
                    assert_eq!(portable, want, "seed {seed}: {show:?}");
                }
            }
            // Each token keeps at most one split: exactly one when its bytes alone merge
            // into it; none when they do not, unless it has only one (kept unchecked).
            // Tokens past the checked length keep them all.
            let splits = v.splits().unwrap();
            for group in splits.chunk_by(|a, b| a.2 == b.2) {
                let kept = group.iter().filter(|s| v.pair_rank(s.0, s.1).is_some()).count();
                let token = v.token(group[0].2).unwrap();
                let reached = by_bytes(&v, token) == [group[0].2];
                let want = if token.len() > crate::vocab::CHECKED_SPLIT_LEN {
                    group.len()
                } else {
                    usize::from(reached || group.len() == 1)
                };
                assert_eq!(kept, want, "seed {seed}: {token:?}");
            }
        }
    }

    /// Vocabularies of random merges of the bytes of a few Cyrillic and Tamil letters and
    /// ASCII, so characters are made early or late, and their bytes also merge with their
    /// neighbours' (the contexts that make a character merge from bytes): every merger
    /// against the rule on bytes, on pieces of those letters and of their loose bytes.
    #[test]
    fn characters_taken_whole_merge_as_the_rule_on_bytes() {
        let letters = ["о", "в", "с", "ய", "க", "்", " ", "a"];
        let alphabet: Vec<u8> = {
            let mut bytes: Vec<u8> = letters.concat().into_bytes();
            bytes.sort_unstable();
            bytes.dedup();
            bytes
        };
        let (mut whole, mut refused) = (0, 0);
        for seed in 0..200u64 {
            let mut next = lcg(seed + 800);
            // Half the vocabularies as training makes them (ranks in merge order), half
            // of random tokens in random order (a token may rank before its parts).
            let v = if seed % 2 == 0 {
                random_vocab(seed + 700, &alphabet, 60 + (seed as usize % 8) * 30, 9)
            } else {
                let mut tokens: Vec<Vec<u8>> =
                    letters.iter().filter(|l| l.len() > 1).map(|l| l.as_bytes().to_vec()).collect();
                while tokens.len() < 120 {
                    let len = 2 + next() % 5;
                    let token: Vec<u8> =
                        (0..len).map(|_| alphabet[next() % alphabet.len()]).collect();
                    if !tokens.contains(&token) {
                        tokens.push(token);
                    }
                }
                for i in (1..tokens.len()).rev() {
                    tokens.swap(i, next() % (i + 1));
                }
                let tokens: Vec<&[u8]> = tokens.iter().map(Vec::as_slice).collect();
                vocab(&tokens)
            };
            for _ in 0..80 {
                let len = 1 + next() % 40;
                let piece: Vec<u8> = if next().is_multiple_of(4) {
                    (0..len * 2).map(|_| alphabet[next() % alphabet.len()]).collect()
                } else {
                    (0..len).flat_map(|_| letters[next() % letters.len()].bytes()).collect()
                };
                for i in 0..piece.len() {
                    let taken = v.char_part(&piece, i).is_some();
                    let alone = std::str::from_utf8(&piece[i..])
                        .ok()
                        .and_then(|s| s.chars().next())
                        .map(|c| c.to_string().into_bytes())
                        .and_then(|c| v.char_part(&c, 0));
                    whole += usize::from(taken);
                    refused += usize::from(!taken && alone.is_some());
                }
                let want = by_bytes(&v, &piece);
                let show = String::from_utf8_lossy(&piece);
                let mut got = Vec::new();
                encode_piece_parts(&v, &piece, &mut got);
                assert_eq!(got, want, "seed {seed}: {show:?}");
                if piece.len() < LONG_PIECE {
                    let mut portable = Vec::new();
                    merge_by_min_portable::<LONG_PIECE>(&v, &piece, &mut portable);
                    assert_eq!(portable, want, "seed {seed}: {show:?}");
                }
            }
        }
        // Both kinds of character were met: taken whole, and refused for a context.
        assert!(whole > 2000 && refused > 100, "{whole} taken whole, {refused} refused");
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
