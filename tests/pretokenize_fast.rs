//! The hand-written splitters of the built-in patterns against fancy-regex, the reference
//! (`Pattern::split_text` vs `Pattern::split_text_with_regex`): random strings over an
//! alphabet that stresses every alternative, all short strings over a small alphabet,
//! long runs, and the million-character inputs fancy-regex cannot handle.

use std::time::{Duration, Instant};

use bytebpe::pretokenize::{Pattern, CL100K, GPT2, O200K};

#[path = "../src/test_rng.rs"]
mod test_rng;
use test_rng::Rng;

const BUILTINS: [&str; 3] = ["gpt2", "cl100k", "o200k"];

fn fast(pattern: &Pattern, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    pattern.split_text(text, |p| out.push(String::from_utf8(p.to_vec()).unwrap())).unwrap();
    out
}

/// The pieces fancy-regex gives, or `None` when it fails (stack or backtrack limit).
fn reference(pattern: &Pattern, text: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    pattern
        .split_text_with_regex(text, |p| out.push(String::from_utf8(p.to_vec()).unwrap()))
        .ok()?;
    Some(out)
}

/// Asserts both paths agree on `text` (when fancy-regex succeeds); returns whether it did.
fn check(pattern: &Pattern, text: &str) -> bool {
    let Some(want) = reference(pattern, text) else { return false };
    let got = fast(pattern, text);
    if got != want {
        // Report the first differing piece, not the whole (possibly long) text.
        let at = got.iter().zip(&want).take_while(|(g, w)| g == w).count();
        let shown: String = text.chars().take(120).collect();
        panic!(
            "pattern {:?} on {shown:?} ({} bytes): piece {at} is {:?}, fancy-regex says {:?}",
            pattern.as_str(),
            text.len(),
            got.get(at),
            want.get(at),
        );
    }
    true
}

/// Pieces of text that exercise each alternative and each class boundary.
const ATOMS: &[&str] = &[
    // ASCII letters (contraction letters among them), words, digits.
    "a",
    "b",
    "s",
    "t",
    "d",
    "m",
    "l",
    "v",
    "e",
    "r",
    "S",
    "T",
    "L",
    "E",
    "Z",
    "x",
    "Hello",
    "WORLD",
    "HTTPServer",
    "camelCase",
    "0",
    "7",
    "42",
    "12345",
    // Apostrophes and contractions, any case, and the long s that folds to s.
    "'",
    "''",
    "'s",
    "'S",
    "'t",
    "'T",
    "'re",
    "'RE",
    "'rE",
    "'ve",
    "'Ve",
    "'m",
    "'M",
    "'ll",
    "'LL",
    "'lL",
    "'d",
    "'D",
    "'ſ",
    "'x",
    "don't",
    "DON'T",
    "we'll",
    "I'm",
    "ſ",
    // Whitespace: ASCII, Unicode White_Space, and U+001C (space for Python, not for \s).
    " ",
    " ",
    " ",
    "  ",
    "\t",
    "\r",
    "\n",
    "\r\n",
    "\n\n",
    " \n",
    "\u{0b}",
    "\u{0c}",
    "\u{a0}",
    "\u{3000}",
    "\u{2028}",
    "\u{2029}",
    "\u{85}",
    "\u{1680}",
    "\u{200a}",
    "\u{1c}",
    "\u{1f}",
    // Punctuation and symbols, slashes (o200k's [\r\n/]*).
    ".",
    ",",
    "!",
    "?",
    "-",
    "(",
    ")",
    "\"",
    "^",
    "/",
    "//",
    "$",
    "@",
    "#",
    "...",
    "\0",
    // Marks: combining acute, Devanagari signs, Thai vowel, ZWJ (Cf, not a mark).
    "\u{301}",
    "e\u{301}",
    "A\u{301}",
    "\u{93f}",
    "\u{94d}",
    "\u{e31}",
    "\u{200d}",
    // Letters of other scripts and categories.
    "中",
    "文字",
    "한국어",
    "بالعربية",
    "हिन्दी",
    "क",
    "ภาษาไทย",
    "ก",
    "ǅ",
    "ǈ",
    "ʰ",
    "ー",
    "ª",
    "ß",
    "İ",
    "\u{212a}",
    "Σ",
    "ς",
    "Ω",
    // Numbers of other scripts and kinds.
    "٣",
    "४",
    "①",
    "²",
    "Ⅻ",
    "½",
    // Emoji (symbols: "other"), with a skin tone and a ZWJ sequence.
    "😀",
    "👍🏽",
    "👩\u{200d}💻",
    "\u{feff}",
];

fn random_text(rng: &mut Rng, max_atoms: usize) -> String {
    let n = rng.below(max_atoms + 1);
    let mut s = String::new();
    for _ in 0..n {
        match rng.below(20) {
            // Any scalar value now and then, BMP more often.
            0 => s.extend(char::from_u32(rng.below(0x11_0000) as u32)),
            1 => s.extend(char::from_u32(rng.below(0x1_0000) as u32)),
            _ => s.push_str(ATOMS[rng.below(ATOMS.len())]),
        }
    }
    s
}

#[test]
fn random_strings_match_fancy_regex() {
    for name in BUILTINS {
        let pattern = Pattern::new(name).unwrap();
        let mut rng = Rng(0x5EED ^ name.len() as u64);
        let mut compared = 0;
        for round in 0..6000 {
            let text = random_text(&mut rng, if round % 10 == 0 { 200 } else { 24 });
            compared += check(&pattern, &text) as usize;
        }
        assert_eq!(compared, 6000, "{name}: fancy-regex failed on some short input");
    }
}

/// ASCII-heavy text, where the splitters take their ASCII fast paths: words in both cases,
/// digits, contractions, punctuation, whitespace runs and newlines, with a non-ASCII
/// character of each kind that matters now and then (so runs switch paths mid-way).
const ASCII_ATOMS: &[&str] = &[
    "the", "The", "THE", "s", "x", "Word", "aBc", "7", "42", "2026", "'s", "'t", "'re", "'ve",
    "'m", "'ll", "'d", "'S", "'LL", "'", " ", " ", "  ", "   ", "\t", "\n", "\n\n", "\r\n", " \n",
    ".", ",", "!?", "/", "//", "(", ")", "-", "_", "\"", "#",
];
const RARE_NON_ASCII: &[&str] =
    &["é", "É", "ſ", "\u{301}", "\u{a0}", "\u{3000}", "\u{85}", "ǅ", "ʰ", "中", "²", "٣", "€", "—"];

fn ascii_heavy_text(rng: &mut Rng, max_atoms: usize) -> String {
    let n = rng.below(max_atoms + 1);
    let mut s = String::new();
    for _ in 0..n {
        if rng.below(12) == 0 {
            s.push_str(RARE_NON_ASCII[rng.below(RARE_NON_ASCII.len())]);
        } else {
            s.push_str(ASCII_ATOMS[rng.below(ASCII_ATOMS.len())]);
        }
    }
    s
}

#[test]
fn ascii_heavy_strings_match_fancy_regex() {
    for name in BUILTINS {
        let pattern = Pattern::new(name).unwrap();
        let mut rng = Rng(0xA5C11 ^ name.len() as u64);
        let mut compared = 0;
        for round in 0..6000 {
            let text = ascii_heavy_text(&mut rng, if round % 10 == 0 { 300 } else { 30 });
            compared += check(&pattern, &text) as usize;
        }
        assert_eq!(compared, 6000, "{name}: fancy-regex failed on some short input");
    }
}

/// Where the piece-level ASCII fast paths hand over to the general path, or decide alone:
/// contractions in both cases (and `'ſ`, which folds to `'s`), digit runs of 1 to 5,
/// whitespace runs before letters, punctuation, newlines and the end, `\r\n`, words in
/// every case mix (o200k's U*W+ / U+W*), ASCII controls, and a non-ASCII character of
/// each class right next to them (a letter, a mark, a number, whitespace, a symbol).
const BOUNDARY_ATOMS: &[&str] = &[
    "'s",
    "'S",
    "'t",
    "'T",
    "'re",
    "'Re",
    "'rE",
    "'RE",
    "'ve",
    "'VE",
    "'vE",
    "'m",
    "'M",
    "'ll",
    "'LL",
    "'Ll",
    "'lL",
    "'d",
    "'D",
    "'ſ",
    "'",
    "'r",
    "'l",
    "'v",
    "1",
    "12",
    "123",
    "1234",
    "12345",
    " ",
    "  ",
    "   ",
    "\t",
    "\r\n",
    "\n",
    "\r",
    " \n",
    "\n ",
    "\n\n",
    "\r\r\n",
    "\u{0b}",
    "\u{0c}",
    "a",
    "A",
    "ab",
    "AB",
    "Ab",
    "aB",
    "word",
    "Word",
    "WORD",
    "camelCase",
    "HTTPServer",
    "don",
    "x",
    ".",
    ",",
    "/",
    "//",
    "(",
    "-",
    "\"",
    "\0",
    "\u{1c}",
    "\u{7f}",
    "é",
    "É",
    "ǅ",
    "ʰ",
    "\u{301}",
    "中",
    "ſ",
    "٣",
    "²",
    "\u{a0}",
    "\u{3000}",
    "\u{85}",
    "€",
    "—",
];

fn boundary_text(rng: &mut Rng, max_atoms: usize) -> String {
    let n = rng.below(max_atoms + 1);
    let mut s: String = (0..n).map(|_| BOUNDARY_ATOMS[rng.below(BOUNDARY_ATOMS.len())]).collect();
    // Trailing whitespace now and then (`\s++$`, and o200k's newline rule at the end).
    if rng.below(4) == 0 {
        s.push_str([" ", "  ", "\n", " \n", "\t", "\r\n "][rng.below(6)]);
    }
    s
}

/// Random boundary strings; `rounds` per pattern, from `seed`.
fn check_boundary_strings(seed: u64, rounds: usize) {
    for name in BUILTINS {
        let pattern = Pattern::new(name).unwrap();
        let mut rng = Rng(seed ^ name.len() as u64);
        for round in 0..rounds {
            let text = boundary_text(&mut rng, if round % 10 == 0 { 200 } else { 12 });
            assert!(check(&pattern, &text), "{name}: fancy-regex failed on {text:?}");
        }
    }
}

#[test]
fn fast_path_boundaries_match_fancy_regex() {
    check_boundary_strings(0xB0DA, 8000);
}

/// Every string of 4 characters from an alphabet of the fast paths' switches: ASCII
/// letters of both cases and contraction letters, the apostrophe, a digit, each kind of
/// ASCII whitespace, punctuation, and non-ASCII letter, mark, number and space.
#[test]
fn all_short_boundary_strings_match_fancy_regex() {
    let alphabet =
        ['a', 'S', 'l', '\'', '1', ' ', '\t', '\r', '\n', '.', 'é', '\u{301}', '٣', '\u{a0}', 'ſ'];
    let texts: Vec<String> =
        all_strings(&alphabet, 4).into_iter().filter(|t| t.chars().count() >= 3).collect();
    for name in BUILTINS {
        let pattern = Pattern::new(name).unwrap();
        for text in &texts {
            assert!(check(&pattern, text), "{name}: fancy-regex failed on {text:?}");
        }
    }
}

/// The long seeded property loop (minutes): `cargo test --release --test pretokenize_fast
/// -- --ignored`, with `PRETOKENIZE_SEED` and `PRETOKENIZE_ROUNDS` to vary it.
#[test]
#[ignore]
fn long_seeded_property_loop() {
    let var = |name: &str, default: u64| {
        std::env::var(name).map_or(default, |v| v.parse().expect("a number"))
    };
    let (seed, rounds) = (var("PRETOKENIZE_SEED", 1), var("PRETOKENIZE_ROUNDS", 200_000));
    check_boundary_strings(seed, rounds as usize);
    for name in BUILTINS {
        let pattern = Pattern::new(name).unwrap();
        let mut rng = Rng(seed.wrapping_mul(31) ^ name.len() as u64);
        for round in 0..rounds {
            let text = if round % 2 == 0 {
                ascii_heavy_text(&mut rng, 40)
            } else {
                random_text(&mut rng, 30)
            };
            check(&pattern, &text);
        }
    }
}

/// A small alphabet with one character of each kind that matters to some pattern.
const SMALL: &[char] = &[
    'a', 'A', 's', '\'', '1', ' ', '\t', '\r', '\n', '\u{a0}', '!', '/', '\u{301}', 'ǅ', 'ʰ', '中',
    'ſ',
];

/// Fewer characters, for length 4: o200k's word alternatives (U*W+ backtracking, the
/// optional prefix that may be a mark) and contractions need a few characters to show.
const TINY: &[char] = &['a', 'A', 's', '\'', ' ', '\n', '!', '\u{301}', 'ǅ', 'ʰ', '中'];

/// Every string of at most `max_len` characters from `alphabet`.
fn all_strings(alphabet: &[char], max_len: usize) -> Vec<String> {
    let mut texts = vec![String::new()];
    let mut last = vec![String::new()];
    for _ in 0..max_len {
        last = last.iter().flat_map(|s| alphabet.iter().map(move |&c| format!("{s}{c}"))).collect();
        texts.extend(last.iter().cloned());
    }
    texts
}

#[test]
fn all_short_strings_match_fancy_regex() {
    let mut texts = all_strings(SMALL, 3);
    texts.extend(all_strings(TINY, 4).into_iter().filter(|t| t.chars().count() == 4));
    for name in BUILTINS {
        let pattern = Pattern::new(name).unwrap();
        for text in &texts {
            assert!(check(&pattern, text), "{name}: fancy-regex failed on {text:?}");
        }
    }
}

/// Long runs of one kind, alone and between other text (a few thousand characters: within
/// fancy-regex's limits).
fn long_texts(n: usize) -> Vec<String> {
    let runs = [
        " ", "\n", "\r\n", " \n", "\n ", "\t", "\u{a0}", "\u{3000}", "a", "A", "aA", "Aa", "1",
        "^", "'", "'s", "/", "\u{301}", "A\u{301}", "\u{301}A", "ǅ", "ʰ", "中", "ـ", "٣", "😀",
        "  x", " \u{301}",
    ];
    let mut out = Vec::new();
    for run in runs {
        let body = run.repeat(n);
        for (before, after) in
            [("", ""), ("", "x"), ("x", " "), (" ", "!"), ("'", "'s\n"), ("\u{301}", "a")]
        {
            out.push(format!("{before}{body}{after}"));
        }
    }
    out
}

#[test]
fn long_runs_match_fancy_regex() {
    for name in BUILTINS {
        let pattern = Pattern::new(name).unwrap();
        for text in long_texts(3000) {
            assert!(check(&pattern, &text), "{name}: fancy-regex failed on a long run");
        }
    }
}

#[test]
fn million_character_runs_are_fast_and_lossless() {
    let runs = [
        " ", "\n", " \n", "\r\n", "\t", "\u{3000}", "a", "A", "aA", "1", "^", "'", "'s", "/",
        "\u{301}", "A\u{301}", "\u{301}A", "中", "ǅ", "😀",
    ];
    for name in BUILTINS {
        let pattern = Pattern::new(name).unwrap();
        for run in runs {
            // Ending in "x", so the run is not at the end (`$`) and must be backed off from.
            let text = format!("{}x", run.repeat(1_000_000));
            let start = Instant::now();
            let mut joined = Vec::with_capacity(text.len());
            pattern.split_text(&text, |p| joined.extend_from_slice(p)).unwrap();
            let took = start.elapsed();
            assert_eq!(joined, text.as_bytes(), "{name} on {run:?} x 1e6");
            // Generous for unoptimized builds under load; a quadratic split would take hours.
            assert!(took < Duration::from_secs(5), "{name} on {run:?} x 1e6 took {took:?}");
        }
    }
}

#[test]
fn a_million_spaces_fail_in_fancy_regex_but_not_here() {
    let text = format!("{}x", " ".repeat(1_000_000));
    let pattern = Pattern::new("cl100k").unwrap();
    assert!(reference(&pattern, &text).is_none(), "fancy-regex got better: drop this test");
    let pieces = fast(&pattern, &text);
    assert_eq!(pieces, [" ".repeat(999_999), " x".to_string()]);
}

#[test]
fn the_fast_path_is_used_exactly_for_the_builtin_regexes() {
    // The built-in regex strings themselves (not only their names) take the fast path...
    for source in [GPT2, CL100K, O200K] {
        let pattern = Pattern::new(source).unwrap();
        let text = format!("{}x", " ".repeat(1_000_000));
        assert_eq!(fast(&pattern, &text).concat(), text);
    }
    // ...and any other pattern, even an equivalent one, goes through fancy-regex.
    let custom = Pattern::new(&format!("(?:{CL100K})")).unwrap();
    let mut result = Ok(());
    let text = format!("{}x", " ".repeat(1_000_000));
    if let Err(e) = custom.split_text(&text, |_| {}) {
        result = Err(e);
    }
    assert!(result.is_err());
}

/// Runs of every kind the splitters scan 16 bytes at a time (letters of each case,
/// digits, whitespace of each sort, punctuation, apostrophes), of every length from 1 to
/// 40 (ending inside the first block, on its last byte or the next block's first, and
/// past a second block), after a short lead-in that shifts them against the blocks, and
/// ended by an ASCII or non-ASCII character of every class, a control byte, or the end.
#[test]
fn runs_across_vector_blocks_match_fancy_regex() {
    let runs = ["a", "Z", "aB", "7", " ", "\t", "\n", "\r\n", ".", "'", "/", "\u{7f}", "\0"];
    let lead_ins = ["", " ", "x", "é ", "0123456789abcde"];
    let terminators = [
        "", "x", "X", " ", "  x", "\n", "'s", "'LL", "0", ".", "\0", "\u{7f}", "é", "É", "\u{301}",
        "中", "٣", "\u{a0}", "\u{3000}", "€", "ſ",
    ];
    for name in BUILTINS {
        let pattern = Pattern::new(name).unwrap();
        for run in runs {
            for n in 1..=40 {
                let body = run.repeat(n);
                for lead_in in lead_ins {
                    for end in terminators {
                        let text = format!("{lead_in}{body}{end}");
                        assert!(check(&pattern, &text), "{name}: fancy-regex failed on {text:?}");
                    }
                }
            }
        }
    }
}

/// Text of 48 ASCII bytes with one character or short sequence written over it at every
/// offset: a non-ASCII character of each class (so the vector scan meets a byte from 0x80
/// at every position of a block), contractions, `\r\n`, a lone space before a letter, and
/// the bytes 0x00 and 0x7F.
#[test]
fn a_switch_at_every_offset_of_a_block_matches_fancy_regex() {
    let fills = [
        "the quick brown fox's 123 jumps  over\r\n the lazy",
        "    if (x == 10) {\n        return y;\n    }\n     ",
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        "                                                ",
    ];
    let inserts = [
        "é", "É", "\u{301}", "中", "٣", "\u{a0}", "\u{3000}", "\u{85}", "€", "😀", "ſ", "ǅ", "ʰ",
        "'s", "'S", "'ll", "'LL", "'ve", "\r\n", " a", " A", " 1", "\0", "\u{7f}", "\n ",
    ];
    for name in BUILTINS {
        let pattern = Pattern::new(name).unwrap();
        for fill in fills {
            assert_eq!(fill.len(), 48, "{fill:?}");
            for at in 0..=fill.len() {
                for insert in inserts {
                    for text in [
                        format!("{}{insert}{}", &fill[..at], &fill[at..]),
                        format!("{}{insert}{}", &fill[..at], &fill[(at + 1).min(48)..]),
                    ] {
                        assert!(check(&pattern, &text), "{name}: fancy-regex failed on {text:?}");
                    }
                }
            }
        }
    }
}
