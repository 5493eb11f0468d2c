//! Pre-tokenization: splitting a document into pieces (the words BPE works within).
//!
//! Text is split by the pattern; bytes that are not valid UTF-8 become one-byte pieces of
//! their own; text a custom pattern does not cover becomes pieces too (nothing is dropped).
//!
//! The three built-in patterns are split by hand-written, linear-time code (`gpt2.rs`,
//! `cl100k.rs`, `o200k.rs`, over the classes of `classes.rs`, each piece tried first by
//! an ASCII fast path over the byte kinds of `ascii.rs`, ASCII runs scanned 16 bytes at
//! a time by `runs.rs`; all three 64 bytes at a time as bit masks by `blocks/`, where
//! the masks can hold the text) that gives exactly the pieces fancy-regex gives;
//! fancy-regex backtracks on them (a few MB/s) and fails on long runs of spaces. Custom
//! patterns use fancy-regex. `tests/pretokenize_fast.rs` compares the two paths.

use std::sync::OnceLock;

use crate::error::{Error, Result};
use crate::utf8::{for_each_utf8_run, Utf8Run};

pub use sink::{each_end, each_piece, Each, Sink};

mod ascii;
mod blocks;
mod cl100k;
mod classes;
mod gpt2;
mod o200k;
mod runs;
mod scan;
mod sink;

/// tiktoken's r50k_base / gpt2 `pat_str`.
pub const GPT2: &str =
    r"'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s";
/// tiktoken's cl100k_base `pat_str` (GPT-4).
pub const CL100K: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";
/// tiktoken's o200k_base `pat_str` (GPT-4o).
pub const O200K: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|\p{N}{1,3}",
    r"| ?[^\s\p{L}\p{N}]+[\r\n/]*",
    r"|\s*[\r\n]+",
    r"|\s+(?!\S)",
    r"|\s+",
);

/// The regex string for a built-in name (`gpt2`, `r50k`, `cl100k`, `o200k`, also with the
/// `_base` suffix), or the argument itself when it is not a built-in name.
pub fn resolve(name_or_regex: &str) -> &str {
    match name_or_regex {
        "gpt2" | "r50k" | "r50k_base" => GPT2,
        "cl100k" | "cl100k_base" => CL100K,
        "o200k" | "o200k_base" => O200K,
        other => other,
    }
}

/// A built-in pattern with a hand-written splitter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Builtin {
    Gpt2,
    Cl100k,
    O200k,
}

impl Builtin {
    /// The built-in whose regex string is exactly `source`.
    fn of(source: &str) -> Option<Self> {
        match source {
            GPT2 => Some(Builtin::Gpt2),
            CL100K => Some(Builtin::Cl100k),
            O200K => Some(Builtin::O200k),
            _ => None,
        }
    }

    /// fancy-regex compiled from the built-in's regex string, once per process (only the
    /// reference path, `split_text_with_regex`, needs it).
    fn regex(self) -> &'static fancy_regex::Regex {
        static COMPILED: [OnceLock<fancy_regex::Regex>; 3] =
            [OnceLock::new(), OnceLock::new(), OnceLock::new()];
        let (slot, source) = match self {
            Builtin::Gpt2 => (&COMPILED[0], GPT2),
            Builtin::Cl100k => (&COMPILED[1], CL100K),
            Builtin::O200k => (&COMPILED[2], O200K),
        };
        slot.get_or_init(|| fancy_regex::Regex::new(source).expect("built-in patterns compile"))
    }

    /// Sends the pieces of `text` to `sink`, compiled for the bit instructions of
    /// x86-64-v3 (BMI1, BMI2, LZCNT, POPCNT) where the CPU has them: the splitter and the
    /// sinks inlined into it are mostly bit scans and masks, which then take fewer
    /// instructions (`lzcnt` for `bsr` and its fix-up, `blsr`, `andn`, shifts by a
    /// register without `cl`): 1% fewer in counting code beside the portable build
    /// (benches/RESULTS.md, "2026-12-07 03:10–03:55 UTC").
    fn split<'t>(self, text: &'t str, sink: &mut impl Sink<'t>) {
        #[cfg(target_arch = "x86_64")]
        if has_bit_instructions() {
            // SAFETY: the CPU has the features the function is compiled for.
            return unsafe { self.split_with_bit_instructions(text, sink) };
        }
        self.split_portable(text, sink);
    }

    /// [`Builtin::split_portable`] compiled with x86-64-v3's bit instructions. Safety:
    /// the CPU must have them ([`has_bit_instructions`]).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "bmi1,bmi2,lzcnt,popcnt")]
    unsafe fn split_with_bit_instructions<'t>(self, text: &'t str, sink: &mut impl Sink<'t>) {
        self.split_portable(text, sink);
    }

    /// [`Builtin::split`] for any CPU (inlined into each caller, so it is compiled for the
    /// caller's target features).
    #[inline(always)]
    fn split_portable<'t>(self, text: &'t str, sink: &mut impl Sink<'t>) {
        match self {
            Builtin::Gpt2 => blocks::split::<blocks::Gpt2>(text, sink),
            Builtin::Cl100k => blocks::split::<blocks::Cl100k>(text, sink),
            Builtin::O200k => blocks::split::<blocks::O200k>(text, sink),
        }
    }
}

/// Whether the CPU has the bit instructions [`Builtin::split`] is compiled for where it
/// can (each check reads a flag the standard library caches).
#[cfg(target_arch = "x86_64")]
#[inline]
fn has_bit_instructions() -> bool {
    std::arch::is_x86_feature_detected!("bmi1")
        && std::arch::is_x86_feature_detected!("bmi2")
        && std::arch::is_x86_feature_detected!("lzcnt")
        && std::arch::is_x86_feature_detected!("popcnt")
}

/// A compiled pre-tokenization pattern.
#[derive(Debug, Clone)]
pub struct Pattern {
    /// The regex source, built-in names already resolved.
    source: String,
    /// Set when `source` is exactly one of the built-in regex strings: split by hand.
    builtin: Option<Builtin>,
    /// The compiled regex of a custom pattern (built-ins share `Builtin::regex`).
    regex: Option<fancy_regex::Regex>,
}

/// The longest pattern accepted (tiktoken's are under 400 bytes); longer ones are
/// refused before the regex compiler sees them.
pub const MAX_PATTERN_BYTES: usize = 1 << 16;

impl Pattern {
    pub fn new(name_or_regex: &str) -> Result<Self> {
        if name_or_regex.len() > MAX_PATTERN_BYTES {
            // Refused before compiling (and before copying it into the error).
            let head: String = name_or_regex.chars().take(60).collect();
            return Err(Error::InvalidPattern {
                pattern: format!("{head}..."),
                message: format!(
                    "the pattern is {} bytes long; at most {MAX_PATTERN_BYTES} bytes",
                    name_or_regex.len()
                ),
            });
        }
        let source = resolve(name_or_regex).to_owned();
        let builtin = Builtin::of(&source);
        let regex = match builtin {
            Some(_) => None,
            None => Some(fancy_regex::Regex::new(&source).map_err(|e| Error::InvalidPattern {
                pattern: source.clone(),
                message: e.to_string(),
            })?),
        };
        Ok(Self { source, builtin, regex })
    }

    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// True for the built-in patterns (split by hand, with safe cuts for long documents).
    pub fn is_builtin(&self) -> bool {
        self.builtin.is_some()
    }

    /// The compiled fancy-regex.
    fn regex(&self) -> &fancy_regex::Regex {
        match (self.builtin, &self.regex) {
            (Some(builtin), _) => builtin.regex(),
            (None, Some(regex)) => regex,
            (None, None) => unreachable!("a custom pattern is compiled in new()"),
        }
    }

    /// Calls `emit` with every piece of `text`: each non-empty match, and each maximal run
    /// of text between matches (only custom patterns leave such gaps). Built-in patterns
    /// never fail; a custom one fails when fancy-regex hits its limits.
    pub fn split_text<'t>(
        &self,
        text: &'t str,
        emit: impl FnMut(&'t [u8]),
    ) -> Result<(), fancy_regex::Error> {
        self.split_text_counting_gaps(text, emit, &mut 0)
    }

    /// `split_text`, adding the bytes of the gaps (text the pattern did not match, kept
    /// as pieces of their own) to `gap_bytes`, for the loss ledger.
    pub fn split_text_counting_gaps<'t>(
        &self,
        text: &'t str,
        emit: impl FnMut(&'t [u8]),
        gap_bytes: &mut u64,
    ) -> Result<(), fancy_regex::Error> {
        self.split_text_into(text, &mut Each(emit), gap_bytes)
    }

    /// [`Pattern::split_text_counting_gaps`] into a [`Sink`], which the built-in
    /// patterns may hand several pieces at once.
    pub fn split_text_into<'t>(
        &self,
        text: &'t str,
        sink: &mut impl Sink<'t>,
        gap_bytes: &mut u64,
    ) -> Result<(), fancy_regex::Error> {
        match self.builtin {
            Some(builtin) => {
                builtin.split(text, sink);
                Ok(())
            }
            None => self.regex_split(text, |piece| sink.piece(piece), gap_bytes),
        }
    }

    /// `split_text` through fancy-regex even for a built-in pattern: the reference the
    /// hand-written splitters are tested against (and the Python `_split` debug hook).
    pub fn split_text_with_regex<'t>(
        &self,
        text: &'t str,
        emit: impl FnMut(&'t [u8]),
    ) -> Result<(), fancy_regex::Error> {
        self.regex_split(text, emit, &mut 0)
    }

    fn regex_split<'t>(
        &self,
        text: &'t str,
        mut emit: impl FnMut(&'t [u8]),
        gap_bytes: &mut u64,
    ) -> Result<(), fancy_regex::Error> {
        let mut covered = 0;
        let mut gap = |from: usize, to: usize, emit: &mut dyn FnMut(&'t [u8])| {
            *gap_bytes += (to - from) as u64;
            emit(&text.as_bytes()[from..to]);
        };
        for m in self.regex().find_iter(text) {
            let m = m?;
            if m.start() == m.end() {
                continue;
            }
            if m.start() > covered {
                gap(covered, m.start(), &mut emit);
            }
            emit(m.as_str().as_bytes());
            covered = m.end();
        }
        if covered < text.len() {
            gap(covered, text.len(), &mut emit);
        }
        Ok(())
    }

    /// Calls `emit` with every piece of `data`: valid UTF-8 runs are split as text, each
    /// byte that is not part of valid UTF-8 is a piece of its own.
    pub fn split_bytes<'t>(
        &self,
        data: &'t [u8],
        emit: impl FnMut(&'t [u8]),
    ) -> Result<(), fancy_regex::Error> {
        self.split_bytes_counting_gaps(data, emit, &mut 0)
    }

    /// `split_bytes`, adding the bytes of gaps to `gap_bytes` (see
    /// [`Pattern::split_text_counting_gaps`]).
    pub fn split_bytes_counting_gaps<'t>(
        &self,
        data: &'t [u8],
        mut emit: impl FnMut(&'t [u8]),
        gap_bytes: &mut u64,
    ) -> Result<(), fancy_regex::Error> {
        for_each_utf8_run(data, |run| match run {
            Utf8Run::Text(text) => self.split_text_counting_gaps(text, &mut emit, gap_bytes),
            Utf8Run::Invalid(bytes) => {
                for i in 0..bytes.len() {
                    emit(&bytes[i..i + 1]);
                }
                Ok(())
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(pattern: &str, data: &[u8]) -> Vec<Vec<u8>> {
        let p = Pattern::new(pattern).unwrap();
        let mut out = Vec::new();
        p.split_bytes(data, |piece| out.push(piece.to_vec())).unwrap();
        out
    }

    #[test]
    fn cl100k_splits_like_tiktoken() {
        let got = pieces("cl100k", b"Hello world's 12345  \n\n  x");
        let want: Vec<&[u8]> =
            vec![b"Hello", b" world", b"'s", b" ", b"123", b"45", b"  \n\n", b" ", b" x"];
        assert_eq!(got, want.iter().map(|p| p.to_vec()).collect::<Vec<_>>());
    }

    #[test]
    fn invalid_bytes_are_single_pieces() {
        let got = pieces("cl100k", b"ab\xff\xfecd\xe2\x82");
        let want: Vec<&[u8]> = vec![b"ab", b"\xff", b"\xfe", b"cd", b"\xe2", b"\x82"];
        assert_eq!(got, want.iter().map(|p| p.to_vec()).collect::<Vec<_>>());
    }

    #[test]
    fn gaps_of_custom_patterns_are_kept() {
        let got = pieces(r"[a-z]+", b"--ab..cd!");
        let want: Vec<&[u8]> = vec![b"--", b"ab", b"..", b"cd", b"!"];
        assert_eq!(got, want.iter().map(|p| p.to_vec()).collect::<Vec<_>>());
    }

    /// The splitter compiled for any CPU gives the pieces of the one compiled with bit
    /// instructions (which `split` takes on this machine if it has them), and both give
    /// the regex's, on text of every class of character in every order.
    #[test]
    fn portable_and_bit_instruction_splitters_agree() {
        let parts = [
            "word",
            " Word",
            "'s",
            "'LL",
            " 12345",
            "1",
            "  ",
            "\n",
            "\n\n  ",
            "\t",
            " \r\n",
            "(x);",
            " +=",
            "}}",
            " привет",
            "日本語",
            " مرحبا",
            "é",
            "🙂",
            "    ",
            "...",
        ];
        let mut rng = crate::test_rng::Rng(0x2545_F491_4F6C_DD1D);
        let text: String = (0..6_000).map(|_| parts[rng.below(parts.len())]).collect();
        for name in ["gpt2", "cl100k", "o200k"] {
            let builtin = Builtin::of(resolve(name)).unwrap();
            let mut dispatched = Vec::new();
            builtin.split(&text, &mut Each(|p: &[u8]| dispatched.push(p.to_vec())));
            let mut portable = Vec::new();
            builtin.split_portable(&text, &mut Each(|p: &[u8]| portable.push(p.to_vec())));
            let pattern = Pattern::new(name).unwrap();
            let mut regex = Vec::new();
            pattern.split_text_with_regex(&text, |p| regex.push(p.to_vec())).unwrap();
            assert!(regex.len() > 5_000, "{}", regex.len());
            assert_eq!(portable, regex, "{builtin:?}, portable");
            assert_eq!(dispatched, regex, "{builtin:?}, dispatched");
        }
    }

    #[test]
    fn invalid_regex_names_the_pattern() {
        let err = Pattern::new("(unclosed").unwrap_err();
        assert!(err.to_string().contains("(unclosed"), "{err}");
    }
}
