//! The building blocks the hand-written splitters share: a cursor over valid UTF-8 that
//! classifies characters, maximal runs of a class, whitespace runs, contractions.
//!
//! Every function here looks at each character it passes once, so a splitter that calls
//! them a bounded number of times per piece (over the text that piece and its neighbours
//! cover) runs in linear time.

use super::classes::{self, Table, FOLDS, SPACE, WORDISH};

/// A text being split. Positions are byte offsets on character boundaries.
#[derive(Clone, Copy)]
pub struct Text<'t> {
    /// The text's bytes (valid UTF-8).
    pub bytes: &'t [u8],
    /// Flags of the ASCII characters (block 0 of the table), for the fast path.
    ascii: &'static [u8; 128],
    /// Flags of every character.
    table: &'static Table,
}

/// What a run of `\s` starting at some position looks like.
pub struct Spaces {
    /// End of the maximal run.
    pub end: usize,
    /// Start of its last character (> start when the run has two or more characters).
    pub last: usize,
    /// End of its last `\r` or `\n`, if it has one.
    pub newline_end: Option<usize>,
}

impl<'t> Text<'t> {
    pub fn new(text: &'t str) -> Self {
        let table = classes::table();
        Self { bytes: text.as_bytes(), ascii: table.ascii(), table }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// The flags and UTF-8 length of the character at `i` (`i < len`).
    #[inline(always)]
    pub fn class(&self, i: usize) -> (u8, usize) {
        let b = self.bytes[i];
        if b < 0x80 {
            return (self.ascii[b as usize], 1);
        }
        let (cp, len) = decode(self.bytes, i);
        (self.table.get(cp), len)
    }

    /// Whether a character starts at `i` (not the end) and has one of the `mask` flags.
    #[inline]
    pub fn is(&self, i: usize, mask: u8) -> bool {
        i < self.len() && self.class(i).0 & mask != 0
    }

    /// Whether a character starts at `i` and is in `[^\s\p{L}\p{N}]`.
    #[inline]
    pub fn is_other(&self, i: usize) -> bool {
        i < self.len() && self.class(i).0 & WORDISH == 0
    }

    /// End of the maximal run from `i` of characters with one of the `mask` flags.
    #[inline]
    pub fn run(&self, mut i: usize, mask: u8) -> usize {
        while i < self.len() {
            // ASCII first: most runs in most text are ASCII.
            let b = self.bytes[i];
            if b < 0x80 {
                if self.ascii[b as usize] & mask == 0 {
                    break;
                }
                i += 1;
                continue;
            }
            let (flags, len) = self.class(i);
            if flags & mask == 0 {
                break;
            }
            i += len;
        }
        i
    }

    /// End of the run from `i` of at most `max` characters with one of the `mask` flags.
    #[inline]
    pub fn run_at_most(&self, mut i: usize, mask: u8, max: usize) -> usize {
        for _ in 0..max {
            if !self.is(i, mask) {
                break;
            }
            i += self.class(i).1;
        }
        i
    }

    /// End of the maximal run from `i` of `[^\s\p{L}\p{N}]`.
    #[inline]
    pub fn run_other(&self, mut i: usize) -> usize {
        while i < self.len() {
            let (flags, len) = self.class(i);
            if flags & WORDISH != 0 {
                break;
            }
            i += len;
        }
        i
    }

    /// End of the maximal run from `i` of the ASCII bytes in `set` (`[\r\n]*`, `[\r\n/]*`).
    #[inline]
    pub fn run_bytes(&self, mut i: usize, set: &[u8]) -> usize {
        while i < self.len() && set.contains(&self.bytes[i]) {
            i += 1;
        }
        i
    }

    /// The maximal `\s` run from `i` (the character at `i` must be `\s`).
    pub fn spaces(&self, start: usize) -> Spaces {
        let (mut i, mut last, mut newline_end) = (start, start, None);
        while i < self.len() {
            let (flags, len) = self.class(i);
            if flags & SPACE == 0 {
                break;
            }
            if matches!(self.bytes[i], b'\r' | b'\n') {
                newline_end = Some(i + 1);
            }
            last = i;
            i += len;
        }
        Spaces { end: i, last, newline_end }
    }

    /// The end of `'s`, `'t`, `'re`, `'ve`, `'m`, `'ll` or `'d` at `i`, if one is there.
    /// With `fold`, letters match as under `(?i:...)` (so `'S`, `'LL` and `'ſ` count).
    /// The alternatives start with different letters, so their order does not matter.
    #[inline]
    pub fn contraction(&self, i: usize, fold: bool) -> Option<usize> {
        if self.bytes.get(i) != Some(&b'\'') {
            return None;
        }
        let (first, after) = self.letter_at(i + 1, fold)?;
        let second = match first {
            's' | 't' | 'd' | 'm' => return Some(after),
            'r' | 'v' => 'e',
            'l' => 'l',
            _ => return None,
        };
        match self.letter_at(after, fold)? {
            (c, end) if c == second => Some(end),
            _ => None,
        }
    }

    /// The contraction letter at `i` (folded to lowercase ASCII) and the end of its char.
    #[inline]
    fn letter_at(&self, i: usize, fold: bool) -> Option<(char, usize)> {
        let b = *self.bytes.get(i)?;
        if b.is_ascii_lowercase() || (fold && b.is_ascii_uppercase()) {
            return Some((b.to_ascii_lowercase() as char, i + 1));
        }
        if fold && b >= 0x80 {
            // Non-ASCII members of the fold sets (only U+017F ſ for `s`).
            let (cp, len) = decode(self.bytes, i);
            let c = char::from_u32(cp)?;
            let (letter, _) = FOLDS.iter().find(|(_, set)| !c.is_ascii() && set.contains(&c))?;
            return Some((*letter, i + len));
        }
        None
    }
}

/// Decodes the character at `i` of valid UTF-8 (`bytes[i] >= 0x80` or not).
#[inline(always)]
fn decode(bytes: &[u8], i: usize) -> (u32, usize) {
    let b0 = bytes[i] as u32;
    let cont = |k: usize| (bytes[i + k] & 0x3F) as u32;
    if b0 < 0x80 {
        (b0, 1)
    } else if b0 < 0xE0 {
        (((b0 & 0x1F) << 6) | cont(1), 2)
    } else if b0 < 0xF0 {
        (((b0 & 0x0F) << 12) | (cont(1) << 6) | cont(2), 3)
    } else {
        (((b0 & 0x07) << 18) | (cont(1) << 12) | (cont(2) << 6) | cont(3), 4)
    }
}
