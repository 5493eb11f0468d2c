//! Characters that encoding may take as one part from the start: where a multi-byte
//! character is a token and nothing around it can merge first, its bytes merge into that
//! token whatever the rest of the piece does, so the mergers start from it instead of
//! from its bytes (a Cyrillic word of seven letters starts as 7 parts, not 14).
//!
//! Why it is exact. Encoding merges the adjacent pair of lowest rank, leftmost on ties,
//! with the pair table's splits (`canonical.rs`; different pairs have different ranks).
//! Take bytes `c` at some position of a piece that encode alone into one token `t`, by
//! merges of ranks `r1, r2, ...` in that order, `R` the largest. In the piece, `c`'s first
//! part `p` can join a part outside `c` only through a pair `(s, p)` of the table, with
//! `s` a token whose bytes end right before `c`, and that pair goes first only if it
//! ranks below one of `c`'s merges up to the one that absorbs `p`. Likewise `c`'s last
//! part and pairs `(p, s)`, `s` a token the bytes after `c` start with. If no such `s` is
//! there, all of `c`'s merges happen, in the order of `c` alone, and no other merge
//! touches its parts. Every merge elsewhere made before `t` is made ranks below `R` (it
//! went before one of `c`'s); so if every pair `(x, t)` or `(t, x)` of the table ranks
//! above `R`, having `t` from the start changes none of them, and from the moment `t` is
//! made the two runs are the same. The argument holds for any parts around `c` (tokens
//! over the piece's bytes), so characters taken this way can be next to each other.
//!
//! What is stored, per character token of 2 or 3 bytes that qualifies: the tokens `s`
//! that, ending right before it, could take its first part early ("left contexts"), and
//! those that, starting right after it, could take its last part early ("right
//! contexts"). Characters with more than [`MAX_CONTEXTS`] of either, or a context longer
//! than 4 bytes, merge from bytes, as do 4-byte characters. Pieces need not be valid
//! UTF-8: the argument is about bytes, and a character is looked up by all its bytes.
//!
//! Cost: building is linear in the pair table. Looking a character up is a read by code
//! point and 8 context checks done together without branches (whether a context is
//! there varies from character to character, so a branch on it would often be
//! mispredicted).

use std::collections::HashMap;

use super::canonical::merge_alone;
use super::pairs::PairTable;
use crate::Rank;

/// At most this many left and this many right contexts per character.
const MAX_CONTEXTS: usize = 4;

/// A character: its bytes [`pack`]ed, its token, and its contexts, checked all at once
/// without branches: lanes 0..4 hold left contexts, 4..8 right ones. A lane matches when
/// `word << pre >> post == bytes`, where `word` is the 4 bytes before the character (the
/// last one highest) for a left lane and the 4 after it for a right one; the shifts keep
/// the context's length of bytes next to the character. An unused lane never matches:
/// its bytes are more than one byte holds.
#[derive(Debug, Clone, Copy)]
#[repr(align(64))] // one cache line an entry
struct Entry {
    key: u32,
    token: Rank,
    bytes: [u32; LANES],
    pre: [u8; LANES],
    post: [u8; LANES],
}

/// Lanes of contexts: [`MAX_CONTEXTS`] a side.
const LANES: usize = 2 * MAX_CONTEXTS;

impl Default for Entry {
    fn default() -> Self {
        Self { key: 0, token: 0, bytes: [NEVER; LANES], pre: [0; LANES], post: [24; LANES] }
    }
}

/// The bytes of an unused lane.
const NEVER: u32 = 0x100;

/// The characters encoding may take whole: those of 2 or 3 bytes (4-byte characters,
/// rare, merge from bytes), looked up by code point.
#[derive(Debug, Clone)]
pub struct CharParts {
    /// The entry of each code point below its length (0: none); empty when no character
    /// qualifies.
    index: Box<[u16]>,
    /// Entry 0 is unused.
    entries: Box<[Entry]>,
}

impl CharParts {
    /// The characters of `tokens` that qualify, with `pairs` the vocabulary's pair table
    /// and `byte_ids` its single bytes' ids.
    pub(super) fn new(tokens: &[Vec<u8>], byte_ids: &[Rank; 256], pairs: &PairTable) -> Self {
        let mut chars: Vec<(u32, Rank, Rank, Parts, Parts)> = Vec::new();
        for (id, bytes) in tokens.iter().enumerate() {
            if !is_short_char(bytes) {
                continue;
            }
            if let Some((highest, first, last)) = merges_alone(bytes, byte_ids, pairs, id as Rank) {
                chars.push((pack(bytes), id as Rank, highest, first, last));
            }
        }
        if chars.is_empty() {
            return Self { index: Box::new([]), entries: Box::new([]) };
        }
        // The pairs that could take a boundary part early, by that part.
        let mut ending_with: HashMap<Rank, Vec<(Rank, Rank)>> = HashMap::new();
        let mut starting_with: HashMap<Rank, Vec<(Rank, Rank)>> = HashMap::new();
        for (_, token, _, first, last) in &chars {
            for part in first.iter().map(|&(part, _)| part).chain([*token]) {
                ending_with.entry(part).or_default();
            }
            for part in last.iter().map(|&(part, _)| part).chain([*token]) {
                starting_with.entry(part).or_default();
            }
        }
        for (left, right, joined) in pairs.entries() {
            if let Some(list) = ending_with.get_mut(&right) {
                list.push((joined, left));
            }
            if let Some(list) = starting_with.get_mut(&left) {
                list.push((joined, right));
            }
        }
        let mut index = Vec::new();
        let mut entries = vec![Entry::default()];
        for (key, token, highest, first, last) in chars {
            // A pair with the whole token that ranks below its merges: having it early
            // could change what merges first.
            let early = |list: &[(Rank, Rank)]| list.iter().any(|&(joined, _)| joined < highest);
            if early(&ending_with[&token]) || early(&starting_with[&token]) {
                continue;
            }
            let gather = |parts: &[(Rank, Rank)], by_part: &HashMap<Rank, Vec<(Rank, Rank)>>| {
                let mut found = Vec::new();
                for &(part, below) in parts {
                    for &(joined, other) in &by_part[&part] {
                        if joined < below {
                            found.push(&tokens[other as usize]);
                        }
                    }
                }
                (found.len() <= MAX_CONTEXTS && found.iter().all(|c| c.len() <= 4)).then_some(found)
            };
            let (Some(left), Some(right)) =
                (gather(&first, &ending_with), gather(&last, &starting_with))
            else {
                continue;
            };
            let Ok(at) = u16::try_from(entries.len()) else { break };
            let cp = decode(key).expect("a character of 2 or 3 bytes") as usize;
            if index.len() <= cp {
                index.resize(cp + 1, 0);
            }
            index[cp] = at;
            let mut entry = Entry { key, token, ..Entry::default() };
            for (k, c) in left.iter().enumerate() {
                (entry.bytes[k], entry.post[k]) = (pack(c), 32 - 8 * c.len() as u8);
            }
            for (k, c) in right.iter().enumerate() {
                let shift = 32 - 8 * c.len() as u8;
                let lane = MAX_CONTEXTS + k;
                (entry.bytes[lane], entry.pre[lane], entry.post[lane]) = (pack(c), shift, shift);
            }
            entries.push(entry);
        }
        Self { index: index.into(), entries: entries.into() }
    }

    /// Whether no character qualifies (then no piece has a part to take whole).
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// The token of the character whose lead byte is at `i`, and its length in bytes,
    /// when it qualifies and none of its contexts is around it in `piece`.
    #[inline(always)]
    pub fn part_at(&self, piece: &[u8], i: usize) -> Option<(Rank, usize)> {
        let (len, mask) = match piece[i] {
            0xC0..=0xDF => (2, 0xFFFF),
            0xE0..=0xEF => (3, 0xFF_FFFF),
            _ => return None,
        };
        let end = i + len;
        if end > piece.len() {
            return None;
        }
        let key = load4(piece, i) & mask;
        let at = *self.index.get(decode(key)? as usize)?;
        // SAFETY: `index` holds only numbers of entries.
        let slot = unsafe { self.entries.get_unchecked(usize::from(at)) };
        if at == 0 || slot.key != key {
            // No entry, or bytes that are not UTF-8 decoded to an entry's code point.
            return None;
        }
        // Bytes outside the piece read as zeros: a context that matches only with them
        // makes the character merge from bytes, which is never wrong.
        let before = match i.checked_sub(4) {
            Some(from) => load4(piece, from),
            // Shifted so the byte before `i` is highest (nothing before the piece: 0).
            None => pack(&piece[..i]).checked_shl(8 * (4 - i) as u32).unwrap_or(0),
        };
        let after = load4(piece, end);
        let mut near = 0;
        for k in 0..LANES {
            let word = if k < MAX_CONTEXTS { before } else { after };
            near |= u32::from(word << slot.pre[k] >> slot.post[k] == slot.bytes[k]);
        }
        if near != 0 {
            return None;
        }
        Some((slot.token, len))
    }
}

/// The code point of a character of 2 or 3 bytes [`pack`]ed, from its payload bits only
/// (None for any other lead byte).
#[inline(always)]
fn decode(key: u32) -> Option<u32> {
    let payload = |shift: u32| (key >> shift) & 0x3F;
    match key as u8 {
        0xC0..=0xDF => Some((key & 0x1F) << 6 | payload(8)),
        0xE0..=0xEF => Some((key & 0x0F) << 12 | payload(8) << 6 | payload(16)),
        _ => None,
    }
}

/// The 4 bytes from `at` [`pack`]ed, zeros past the end of `bytes`: one load when all 4
/// are there (a loop over fewer would mispredict its exit).
#[inline(always)]
fn load4(bytes: &[u8], at: usize) -> u32 {
    match bytes.get(at..at + 4) {
        Some(four) => u32::from_le_bytes(four.try_into().expect("4 bytes")),
        None => pack(&bytes[at.min(bytes.len())..]),
    }
}

/// Up to 4 bytes as one number, the first lowest.
#[inline(always)]
fn pack(bytes: &[u8]) -> u32 {
    bytes.iter().rev().fold(0, |key, &b| key << 8 | u32::from(b))
}

/// Whether `bytes` are exactly one character of 2 or 3 bytes in UTF-8.
fn is_short_char(bytes: &[u8]) -> bool {
    (2..=3).contains(&bytes.len())
        && std::str::from_utf8(bytes).is_ok_and(|s| s.chars().count() == 1)
}

/// Boundary parts of a character's merges: each part that was first (or last), with the
/// highest rank of the merges up to the one that absorbed it.
type Parts = Vec<(Rank, Rank)>;

/// Encodes `bytes` alone, as the mergers do; when they end as the one token `id`: the
/// highest rank of their merges, and their first and last parts ([`Parts`]).
fn merges_alone(
    bytes: &[u8],
    byte_ids: &[Rank; 256],
    pairs: &PairTable,
    id: Rank,
) -> Option<(Rank, Parts, Parts)> {
    let (mut first, mut last, mut highest) = (Vec::new(), Vec::new(), 0);
    let mut parts = Vec::new();
    merge_alone(pairs, byte_ids, bytes, &mut parts, |parts, at, rank| {
        highest = highest.max(rank);
        if at == 0 {
            first.push((parts[0], highest));
        }
        if at + 2 == parts.len() {
            last.push((parts[at + 1], highest));
        }
    });
    (parts == [id]).then_some((highest, first, last))
}

#[cfg(test)]
mod tests {
    use crate::vocab::bytes_then as vocab;

    const O: &[u8] = "о".as_bytes(); // D0 BE

    #[test]
    fn a_character_is_one_part_unless_a_context_is_next_to_it() {
        // " \xD0" ranks before "о": after a space, the space takes the lead byte first.
        let v = vocab(&[b" \xD0", O]);
        assert_eq!(v.char_part("оо".as_bytes(), 0), Some((257, 2)));
        assert_eq!(v.char_part("оо".as_bytes(), 2), Some((257, 2)));
        assert_eq!(v.char_part(" о".as_bytes(), 1), None);
        assert_eq!(v.char_part("a о".as_bytes(), 2), None);
        assert_eq!(v.char_part("aо".as_bytes(), 1), Some((257, 2)));
        // "\xBE " ranks before "о": a space after it takes the last byte first.
        let v = vocab(&[b"\xBE ", O]);
        assert_eq!(v.char_part("о ".as_bytes(), 0), None);
        assert_eq!(v.char_part("оa".as_bytes(), 0), Some((257, 2)));
        assert_eq!(v.char_part("о".as_bytes(), 0), Some((257, 2)));
        // Ranked after the character, neither is a context.
        let v = vocab(&[O, b" \xD0", b"\xBE "]);
        assert_eq!(v.char_part(" о ".as_bytes(), 1), Some((256, 2)));
        // Not a lead byte, or a character cut off by the end of the piece.
        assert_eq!(v.char_part(O, 1), None);
        assert_eq!(v.char_part(&O[..1], 0), None);
    }

    #[test]
    fn three_byte_characters_and_bytes_that_are_not_one() {
        let ya = "ய".as_bytes(); // E0 AE AF
        let v = vocab(&[&ya[..2], ya]);
        assert_eq!(v.char_part("யய".as_bytes(), 3), Some((257, 3)));
        // Not UTF-8, with the same payload bits as "ய": looked up, and refused by its bytes.
        assert_eq!(v.char_part(&[0xE0, 0x2E, 0xAF], 0), None);
        assert_eq!(v.char_part(&[0xE0, 0xAE, 0x2F], 0), None);
        // A context of 4 bytes, right before the character (and zeros before the piece
        // never pass for it).
        let v = vocab(&[b"ab", b"abc", b"abcd", b"abcd\xE0", &ya[..2], ya]);
        assert_eq!(v.char_part(&[b"xabcd", ya].concat(), 5), None);
        assert_eq!(v.char_part(&[b"xabce", ya].concat(), 5), Some((261, 3)));
        assert_eq!(v.char_part(&[b"bcd", ya].concat(), 3), Some((261, 3)));
    }

    #[test]
    fn characters_that_could_change_other_merges_are_left_out() {
        // "aо" ranks before "о" (its split is ("a", "о")): "о" early could make it early.
        let v = vocab(&[b"a\xD0\xBE", O]);
        assert_eq!(v.char_part(O, 0), None);
        // "ய" is made by "\xAE\xAF" (rank 259) and then the lead byte (256): "xய" (257)
        // ranks below the first of them. Taken whole in "wxய", "xய" would be made before
        // "wx" (258), which encoding makes first.
        let ya = "ய".as_bytes();
        let v = vocab(&[ya, &[b"x", ya].concat(), b"wx", &ya[1..]]);
        assert_eq!(v.char_part(&[b"wx", ya].concat(), 2), None);
        // Five left contexts: more than a character keeps.
        let v = vocab(&[b" \xD0", b"a\xD0", b"b\xD0", b"c\xD0", b"d\xD0", O]);
        assert_eq!(v.char_part("оо".as_bytes(), 0), None);
        let v = vocab(&[b" \xD0", b"a\xD0", b"b\xD0", b"c\xD0", O]);
        assert_eq!(v.char_part("оо".as_bytes(), 0), Some((260, 2)));
        // A context longer than 4 bytes.
        let v = vocab(&[b"ab", b"abc", b"abcd", b"abcde", b"abcde\xD0", O]);
        assert_eq!(v.char_part("оо".as_bytes(), 0), None);
    }
}
