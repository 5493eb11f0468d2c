//! The character classes of the built-in patterns, exactly as the `regex` crate defines them.
//!
//! Every code point gets one byte of flags, one bit per class below. The table is built
//! once, on first use, from the Unicode tables of `regex-syntax` (the parser both `regex`
//! and `fancy-regex` use), so the hand-written splitters and the regex path always agree,
//! Unicode version included. The test at the bottom checks every code point against
//! `regex::Regex` itself.
//!
//! Layout: a two-level table. `index[cp >> 8]` names a 256-byte block of flags; identical
//! blocks are stored once (141 blocks, 45 KB with the index), and block 0 (U+0000..U+00FF)
//! is stored first. ASCII bytes are looked up in `by_byte`, which also stops ASCII loops
//! at the first non-ASCII byte.

use std::collections::HashMap;
use std::sync::OnceLock;

use regex_syntax::hir::{Class, HirKind};

/// `\p{Lu}`, uppercase letter.
pub const LU: u8 = 1 << 0;
/// `\p{Ll}`, lowercase letter.
pub const LL: u8 = 1 << 1;
/// `\p{Lt}`, titlecase letter (e.g. U+01C5 ǅ).
pub const LT: u8 = 1 << 2;
/// `\p{Lm}`, modifier letter (e.g. U+02B0 ʰ).
pub const LM: u8 = 1 << 3;
/// `\p{Lo}`, other letter (CJK, Arabic, Thai, ...).
pub const LO: u8 = 1 << 4;
/// `\p{M}`, mark (combining accents, Devanagari vowel signs, ...). Not a letter.
pub const MARK: u8 = 1 << 5;
/// `\p{N}`, number (any script's digits, U+00B2 ², U+2460 ①, ...).
pub const NUMBER: u8 = 1 << 6;
/// `\s`: in Unicode mode the regex crate's `\s` is the White_Space property (so U+0085,
/// U+00A0, U+2028, U+3000 are spaces; U+001C..U+001F, which Python's `isspace` accepts,
/// are not).
pub const SPACE: u8 = 1 << 7;

/// `\p{L}` = Lu | Ll | Lt | Lm | Lo (the test checks this union against `\p{L}`).
pub const LETTER: u8 = LU | LL | LT | LM | LO;
/// o200k's `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`: characters that may start a word.
pub const UPPERISH: u8 = LU | LT | LM | LO | MARK;
/// o200k's `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`: characters that may continue a word.
pub const LOWERISH: u8 = LL | LM | LO | MARK;
/// A character with none of these bits is in `[^\s\p{L}\p{N}]` ("other").
pub const WORDISH: u8 = LETTER | NUMBER | SPACE;

/// The regex class each flag bit stands for; the table is built from exactly these.
const SOURCES: [(&str, u8); 8] = [
    (r"\p{Lu}", LU),
    (r"\p{Ll}", LL),
    (r"\p{Lt}", LT),
    (r"\p{Lm}", LM),
    (r"\p{Lo}", LO),
    (r"\p{M}", MARK),
    (r"\p{N}", NUMBER),
    (r"\s", SPACE),
];

/// The characters each letter of the contractions matches under `(?i:...)`: Unicode
/// simple case folding, as regex-syntax closes a case-insensitive literal. Only `s` has
/// a non-ASCII member, U+017F LATIN SMALL LETTER LONG S (U+212A KELVIN SIGN folds to `k`,
/// which no contraction uses). The test checks each set against `(?i:x)` over all code
/// points.
pub const FOLDS: [(char, &[char]); 8] = [
    ('s', &['S', 's', '\u{17F}']),
    ('t', &['T', 't']),
    ('d', &['D', 'd']),
    ('m', &['M', 'm']),
    ('l', &['L', 'l']),
    ('v', &['V', 'v']),
    ('r', &['R', 'r']),
    ('e', &['E', 'e']),
];

/// The two-level flag table (see the module comment).
pub struct Table {
    /// `index[cp >> 8]`: the block holding the flags of the 256 code points from
    /// `cp & !0xFF`.
    index: Box<[u16]>,
    /// 256-byte blocks of flags, identical blocks stored once, block 0 first.
    blocks: Box<[[u8; 256]]>,
    /// Flags by byte: the ASCII characters' own, none for the bytes of multi-byte
    /// characters, so a loop over ASCII stops at the first non-ASCII byte without a
    /// test of its own.
    by_byte: [u8; 256],
}

impl Table {
    /// The flags of code point `cp` (any `char` as u32).
    #[cfg(test)]
    pub fn get(&self, cp: u32) -> u8 {
        assert!(cp <= MAX_CODE_POINT, "U+{cp:X} is beyond Unicode");
        // SAFETY: checked just above.
        unsafe { self.get_unchecked(cp) }
    }

    /// `get` without its two bounds checks, for the splitters' loops over non-ASCII text
    /// (each character costs ~25 instructions; the checks were 4 of them).
    ///
    /// # Safety
    /// `cp <= 0x10FFFF` (any code point decoded from valid UTF-8).
    #[inline(always)]
    pub unsafe fn get_unchecked(&self, cp: u32) -> u8 {
        debug_assert!(cp <= MAX_CODE_POINT);
        // SAFETY: `index` has an entry for every `cp >> 8` up to 0x10FFFF's, and `build`
        // stores every block an entry names before naming it, so `block` is in `blocks`.
        unsafe {
            let block = *self.index.get_unchecked((cp >> 8) as usize) as usize;
            self.blocks.get_unchecked(block)[(cp & 0xFF) as usize]
        }
    }

    /// The flags of the ASCII characters, and no flags for bytes from 0x80.
    pub fn by_byte(&self) -> &[u8; 256] {
        &self.by_byte
    }
}

/// The largest Unicode scalar value.
const MAX_CODE_POINT: u32 = 0x10_FFFF;

/// The table, built on first use (a few milliseconds).
pub fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(build)
}

/// The flags of one character.
#[cfg(test)]
pub fn class_of(c: char) -> u8 {
    table().get(c as u32)
}

fn build() -> Table {
    let mut flat = vec![0u8; MAX_CODE_POINT as usize + 1];
    for (source, flag) in SOURCES {
        for (start, end) in ranges(source) {
            for flags in &mut flat[start as usize..=end as usize] {
                *flags |= flag;
            }
        }
    }
    let mut index = Vec::with_capacity(flat.len() >> 8);
    let mut blocks: Vec<[u8; 256]> = Vec::new();
    // Most blocks hold one value throughout (unassigned planes, CJK ideographs): those are
    // found by comparing a block with itself shifted by one (a memcmp), and looked up by
    // their value, so only the few mixed blocks are hashed (hashing all 4,352 was ~90% of
    // the build).
    let mut uniform: [Option<u16>; 256] = [None; 256];
    let mut mixed: HashMap<&[u8], u16> = HashMap::new();
    for chunk in flat.chunks(256) {
        let store = || {
            blocks.push(chunk.try_into().expect("256-byte chunks"));
            (blocks.len() - 1) as u16
        };
        let id = if chunk[1..] == chunk[..255] {
            *uniform[chunk[0] as usize].get_or_insert_with(store)
        } else {
            *mixed.entry(chunk).or_insert_with(store)
        };
        index.push(id);
    }
    debug_assert_eq!(index[0], 0, "block 0 must be stored first (ASCII lookups rely on it)");
    let mut by_byte = [0u8; 256];
    by_byte[..0x80].copy_from_slice(&blocks[0][..0x80]);
    Table { index: index.into(), blocks: blocks.into(), by_byte }
}

/// The code point ranges of a one-class regex, as regex-syntax parses it.
fn ranges(source: &str) -> Vec<(u32, u32)> {
    let hir = regex_syntax::parse(source).expect("a built-in class parses");
    match hir.kind() {
        HirKind::Class(Class::Unicode(class)) => {
            class.ranges().iter().map(|r| (r.start() as u32, r.end() as u32)).collect()
        }
        other => unreachable!("{source} parsed to {other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every Unicode scalar value, in order.
    fn all_chars() -> impl Iterator<Item = char> {
        (0..=0x10_FFFFu32).filter_map(char::from_u32)
    }

    /// The set of characters `regex::Regex::new(class)` matches, by scanning one string
    /// holding every scalar value for maximal runs of the class (a one-character class
    /// matches the same characters alone or in a run; runs are much faster to find).
    fn regex_members(class: &str, haystack: &str) -> Vec<bool> {
        let re = regex::Regex::new(&format!("(?:{class})+")).unwrap();
        let mut members = vec![false; 0x11_0000];
        for m in re.find_iter(haystack) {
            for c in m.as_str().chars() {
                members[c as usize] = true;
            }
        }
        members
    }

    /// Whether a character (with its flags) is in a class.
    type Member = fn(char, u8) -> bool;

    #[test]
    fn every_code_point_agrees_with_regex() {
        let haystack: String = all_chars().collect();
        // Every class as it is written in the built-in patterns, plus each flag alone.
        let checks: [(&str, Member); 14] = [
            (r"\p{L}", |_, f| f & LETTER != 0),
            (r"\p{Lu}", |_, f| f & LU != 0),
            (r"\p{Ll}", |_, f| f & LL != 0),
            (r"\p{Lt}", |_, f| f & LT != 0),
            (r"\p{Lm}", |_, f| f & LM != 0),
            (r"\p{Lo}", |_, f| f & LO != 0),
            (r"\p{M}", |_, f| f & MARK != 0),
            (r"\p{N}", |_, f| f & NUMBER != 0),
            (r"\s", |_, f| f & SPACE != 0),
            (r"\S", |_, f| f & SPACE == 0),
            (r"[^\s\p{L}\p{N}]", |_, f| f & WORDISH == 0),
            (r"[^\r\n\p{L}\p{N}]", |c, f| !matches!(c, '\r' | '\n') && f & (LETTER | NUMBER) == 0),
            (r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]", |_, f| f & UPPERISH != 0),
            (r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]", |_, f| f & LOWERISH != 0),
        ];
        let flags: Vec<(char, u8)> = all_chars().map(|c| (c, class_of(c))).collect();
        for (class, ours) in checks {
            let members = regex_members(class, &haystack);
            for &(c, f) in &flags {
                assert_eq!(
                    ours(c, f),
                    members[c as usize],
                    "{class} disagrees with regex on U+{:04X}",
                    c as u32
                );
            }
        }
    }

    #[test]
    fn contraction_folds_agree_with_regex() {
        let haystack: String = all_chars().collect();
        for (letter, folds) in FOLDS {
            let members = regex_members(&format!("(?i:{letter})"), &haystack);
            let want: Vec<char> = all_chars().filter(|&c| members[c as usize]).collect();
            assert_eq!(want, folds, "(?i:{letter})");
        }
    }

    #[test]
    fn byte_lookup_is_ascii_flags_then_none() {
        for b in 0..=0xFFu8 {
            let want = if b < 0x80 { table().get(b as u32) } else { 0 };
            assert_eq!(table().by_byte()[b as usize], want, "byte {b:#04x}");
        }
    }
}
