//! The kinds of ASCII bytes the piece-level fast paths dispatch on: one table lookup tells
//! a letter's case, a digit, which sort of whitespace, an apostrophe or other punctuation,
//! and, as "no kind", a byte from 0x80 (the fast paths hand such text to the general path).
//!
//! The kinds are finer than the class flags of `classes.rs` where the patterns tell bytes
//! apart: U+0020 from other `\s` (` ?` takes only U+0020), `\r` and `\n` from other `\s`
//! (cl100k's and o200k's prefix excludes them), the apostrophe from other punctuation
//! (contractions). The test checks each kind against the class flags.

/// `a`-`z` (`\p{Ll}`).
pub const LOWER: u8 = 1 << 0;
/// `A`-`Z` (`\p{Lu}`).
pub const UPPER: u8 = 1 << 1;
/// `0`-`9` (`\p{N}`).
pub const DIGIT: u8 = 1 << 2;
/// U+0020.
pub const SPACE: u8 = 1 << 3;
/// `\r`, `\n`.
pub const NEWLINE: u8 = 1 << 4;
/// The other ASCII `\s`: `\t`, U+000B, U+000C.
pub const TAB: u8 = 1 << 5;
/// `'`.
pub const APOSTROPHE: u8 = 1 << 6;
/// Every other ASCII byte: punctuation, symbols and the controls that are not `\s`
/// (`[^\s\p{L}\p{N}]`, like the apostrophe).
pub const PUNCT: u8 = 1 << 7;

pub const LETTER: u8 = LOWER | UPPER;
/// ASCII `[^\s\p{L}\p{N}]`.
pub const OTHER: u8 = APOSTROPHE | PUNCT;
/// ASCII `\s`.
pub const WHITESPACE: u8 = SPACE | NEWLINE | TAB;
/// ASCII `\S`: a byte with one of these kinds ends a whitespace run.
pub const NOT_SPACE: u8 = LETTER | DIGIT | OTHER;

/// The kind of every byte; none (0) from 0x80.
pub static KIND: [u8; 256] = kinds();

const fn kinds() -> [u8; 256] {
    let mut kind = [0u8; 256];
    let mut b = 0;
    while b < 0x80 {
        kind[b] = match b as u8 {
            b'a'..=b'z' => LOWER,
            b'A'..=b'Z' => UPPER,
            b'0'..=b'9' => DIGIT,
            b' ' => SPACE,
            b'\r' | b'\n' => NEWLINE,
            b'\t' | 0x0B | 0x0C => TAB,
            b'\'' => APOSTROPHE,
            _ => PUNCT,
        };
        b += 1;
    }
    kind
}

#[cfg(test)]
mod tests {
    use super::super::classes::{self, LL, LU, NUMBER, SPACE as WHITE_SPACE, WORDISH};
    use super::*;

    #[test]
    fn kinds_agree_with_the_class_table() {
        for b in 0..=0xFFu8 {
            let kind = KIND[b as usize];
            if b >= 0x80 {
                assert_eq!(kind, 0, "byte {b:#04x}");
                continue;
            }
            assert_eq!(kind.count_ones(), 1, "byte {b:#04x} has one kind");
            let flags = classes::table().get(b as u32);
            let want = match flags {
                LL => LOWER,
                LU => UPPER,
                NUMBER => DIGIT,
                WHITE_SPACE if b == b' ' => SPACE,
                WHITE_SPACE if b == b'\r' || b == b'\n' => NEWLINE,
                WHITE_SPACE => TAB,
                f if f & WORDISH == 0 && b == b'\'' => APOSTROPHE,
                f if f & WORDISH == 0 => PUNCT,
                f => panic!("byte {b:#04x} has flags {f:#x}"),
            };
            assert_eq!(kind, want, "byte {b:#04x}");
        }
    }
}
