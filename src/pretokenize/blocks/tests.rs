use super::*;
use crate::pretokenize::classes::{NUMBER, SPACE};
use crate::pretokenize::Each;
use crate::test_rng::Rng;

/// `R::piece_end` piece by piece: the reference.
fn one_by_one<R: Rules>(text: &str) -> Vec<&[u8]> {
    let scan = Text::new(text);
    let mut out = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let end = R::piece_end(&scan, start);
        assert!(end > start && text.is_char_boundary(end));
        out.push(&text.as_bytes()[start..end]);
        start = end;
    }
    out
}

/// A sink that takes a window's pieces in a loop of its own, as the counting and
/// encoding sinks do, checking what [`Sink::pieces`] promises them.
struct Checked<'a, 't>(&'a mut Vec<&'t [u8]>);

impl<'t> Sink<'t> for Checked<'_, 't> {
    fn piece(&mut self, piece: &'t [u8]) {
        self.0.push(piece);
    }

    fn pieces(&mut self, bytes: &'t [u8], mut from: usize, pos: usize, mut ends: u64) -> usize {
        assert!(ends != 0 && from == pos && pos + 63 < bytes.len());
        while ends != 0 {
            let to = pos + ends.trailing_zeros() as usize;
            assert!(from < to);
            self.0.push(&bytes[from..to]);
            from = to;
            ends &= ends - 1;
        }
        from
    }
}

/// The pieces by windows, taken one by one (the default `Sink::pieces`) and a
/// window at a time: both the same.
fn by_windows<R: Rules>(text: &str) -> Vec<&[u8]> {
    let mut out = Vec::new();
    split::<R>(text, &mut Each(|p| out.push(p)));
    let mut taken = Vec::new();
    split::<R>(text, &mut Checked(&mut taken));
    assert_eq!(out, taken);
    out
}

fn check<R: Rules>(text: &str) {
    let (want, got) = (one_by_one::<R>(text), by_windows::<R>(text));
    if got != want {
        let at = got.iter().zip(&want).take_while(|(g, w)| g == w).count();
        panic!(
            "{} {text:?}: piece {at} is {:?}, piece by piece it is {:?}",
            std::any::type_name::<R>(),
            got.get(at).map(|p| String::from_utf8_lossy(p)),
            want.get(at).map(|p| String::from_utf8_lossy(p)),
        );
    }
}

/// Atoms that cross every rule: contractions and their near misses, lone and runs of
/// punctuation, each kind of whitespace with and without newlines, digit runs of
/// every length mod 3, non-ASCII letters, spaces, digits, punctuation and marks, and
/// for o200k case changes (ASCII, Latin, Greek, titlecase `ǅ`, `ʰ` and CJK, which are
/// both cases), slashes after newlines, and contractions in either case.
// Kept compact by hand: rustfmt puts one atom a line once any is over 10 characters.
#[rustfmt::skip]
const ATOMS: &[&str] = &[
    "a", "Ab", "word", "s", "ll", "ve", "re", "'", "'s", "'S", "'t", "'d", "'m", "'ll", "'LL",
    "'Ve", "'re", "'x", "'l", "'v", "'r", "'e", ".", ",", "!?", "...", "\"", "(", " ", "  ",
    "   ", "\t", "\n", "\r\n", "\n\n", " \n", "\n ", "\x0b", "\x0c", " \t", "1", "12", "123",
    "1234", "12345", "é", "ß", "中文", "\u{a0}", "\u{3000}", "\u{85}", "٣", "—", "’", "ſ",
    "\u{301}", "'ſ", "'é", "слово", " мир", "λόγος", "𝐀", "😀", "e\u{301}", "ǅ", "ʰ", "«", "…",
    "—x", "ที่", "किताब", "\u{301}\u{301}", "a\u{301}b", "ABc", "aBC", "HTML", "É", "Σσ",
    "ǅa", "中A", "Aʰ", "/", "\n/", "'rE", "'Ll", "'S", "\u{301}A",
];

/// Which atoms a random text is made of.
#[derive(Clone, Copy)]
enum Pool {
    Ascii,
    /// Atoms whose non-ASCII characters are neither numbers nor spaces: windows
    /// that decide text of several scripts ([`take_chars`]).
    Taken,
    All,
}

fn random_text(rng: &mut Rng, atoms: usize, pool: Pool) -> String {
    let taken =
        |c: char| crate::pretokenize::classes::table().get(c as u32) & (NUMBER | SPACE) == 0;
    let pool: Vec<&str> = (ATOMS.iter().copied())
        .filter(|a| match pool {
            Pool::Ascii => a.is_ascii(),
            Pool::Taken => a.chars().all(|c| c.is_ascii() || taken(c)),
            Pool::All => true,
        })
        .collect();
    (0..atoms).map(|_| pool[rng.below(pool.len())]).collect()
}

fn random_texts_split_as_piece_by_piece<R: Rules>() {
    let mut rng = Rng(0xB10C);
    for round in 0..30_000 {
        let atoms = 10 + rng.below(120);
        let pool = [Pool::Ascii, Pool::Ascii, Pool::Taken, Pool::All][round % 4];
        check::<R>(&random_text(&mut rng, atoms, pool));
    }
}

/// Every atom pair at every offset around the window edges, in text otherwise of
/// plain words, so each rule meets the edge of a window and of a first non-ASCII byte.
fn rules_at_every_offset_split_as_piece_by_piece<R: Rules>() {
    for a in ATOMS {
        for b in ATOMS {
            for offset in 0..70 {
                let mut text: String = "x".repeat(offset % 3) + &" y".repeat(offset / 2);
                text.truncate(offset);
                text.push_str(a);
                text.push_str(b);
                text.push_str(" tail of plain words to fill the window, and then more");
                check::<R>(&text);
            }
        }
    }
}

/// A test per pattern for each check above.
macro_rules! tests {
    ($($name:ident: $check:ident::<$rules:ty>,)*) => {
        $(
            #[test]
            fn $name() {
                $check::<$rules>();
            }
        )*
    };
}

tests! {
    cl100k_windows_split_as_piece_by_piece: random_texts_split_as_piece_by_piece::<Cl100k>,
    o200k_windows_split_as_piece_by_piece: random_texts_split_as_piece_by_piece::<O200k>,
    gpt2_windows_split_as_piece_by_piece: random_texts_split_as_piece_by_piece::<Gpt2>,
    cl100k_rules_at_every_offset: rules_at_every_offset_split_as_piece_by_piece::<Cl100k>,
    o200k_rules_at_every_offset: rules_at_every_offset_split_as_piece_by_piece::<O200k>,
    gpt2_rules_at_every_offset: rules_at_every_offset_split_as_piece_by_piece::<Gpt2>,
}

#[test]
fn vector_masks_are_the_byte_classes() {
    let mut bytes = [0u8; 64];
    for start in (0..=255u8).step_by(64) {
        for (k, b) in bytes.iter_mut().enumerate() {
            *b = start.wrapping_add(k as u8);
        }
        assert_eq!(Masks::of(&bytes, 0), Masks::of_bytes(&bytes), "bytes from {start}");
    }
}
