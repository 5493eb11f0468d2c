//! UTF-8 helpers, in one place: walking bytes as runs of text and invalid bytes, naming
//! why a sequence is invalid, finding an unfinished character at the end of a chunk, and
//! cutting at character boundaries.

/// A stretch of a byte string: valid text, or bytes that are not part of valid UTF-8.
pub enum Utf8Run<'t> {
    /// Valid UTF-8.
    Text(&'t str),
    /// Bytes that are not part of valid UTF-8 (one invalid sequence).
    Invalid(&'t [u8]),
}

/// `data` as text, if it is valid UTF-8. Checked 32 bytes at a time where the CPU allows
/// (`simdutf8`): the standard library's check goes a byte at a time through non-ASCII
/// text, and reading a megabyte of multilingual bytes took it about a millisecond, a
/// sixth of counting them.
#[inline]
pub fn as_utf8(data: &[u8]) -> Option<&str> {
    simdutf8::basic::from_utf8(data).ok()
}

/// Whether `data` is valid UTF-8 ([`as_utf8`]).
#[inline]
pub fn is_utf8(data: &[u8]) -> bool {
    as_utf8(data).is_some()
}

/// `std::str::from_utf8`'s answer for `data` (where the valid part ends, how long the
/// invalid sequence after it is), found as fast as [`as_utf8`]. Both walks over invalid
/// bytes ([`for_each_utf8_run`], [`invalid_sequences`]) ask it, so they agree.
#[inline]
fn checked(data: &[u8]) -> Result<&str, simdutf8::compat::Utf8Error> {
    simdutf8::compat::from_utf8(data)
}

/// Walks `data` as alternating runs of valid UTF-8 and invalid bytes, in order.
pub fn for_each_utf8_run<'t, E>(
    mut data: &'t [u8],
    mut visit: impl FnMut(Utf8Run<'t>) -> Result<(), E>,
) -> Result<(), E> {
    while !data.is_empty() {
        match checked(data) {
            Ok(text) => return visit(Utf8Run::Text(text)),
            Err(e) => {
                let valid = e.valid_up_to();
                if valid > 0 {
                    // SAFETY: from_utf8 just checked that data[..valid] is UTF-8.
                    visit(Utf8Run::Text(unsafe { std::str::from_utf8_unchecked(&data[..valid]) }))?;
                }
                // None: an incomplete sequence at the very end; all of it is invalid.
                let bad = e.error_len().unwrap_or(data.len() - valid);
                visit(Utf8Run::Invalid(&data[valid..valid + bad]))?;
                data = &data[valid + bad..];
            }
        }
    }
    Ok(())
}

/// Why a stretch of bytes is not valid UTF-8.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum InvalidKind {
    /// A continuation byte (0x80-0xBF) with no lead byte before it.
    StrayContinuation = 0,
    /// 0xC0, 0xC1 or 0xF5-0xFF, which never occur in UTF-8.
    NeverValid = 1,
    /// A lead byte whose sequence is cut short.
    Truncated = 2,
    /// A longer encoding of a character than needed (0xE0 0x80-0x9F, 0xF0 0x80-0x8F).
    Overlong = 3,
    /// An encoded UTF-16 surrogate (0xED 0xA0-0xBF ..), as "surrogatepass" writes.
    Surrogate = 4,
    /// A code point above U+10FFFF (0xF4 0x90-0xBF ..).
    TooLarge = 5,
}

/// Every kind, in the order of their values.
pub const INVALID_KINDS: [InvalidKind; 6] = [
    InvalidKind::StrayContinuation,
    InvalidKind::NeverValid,
    InvalidKind::Truncated,
    InvalidKind::Overlong,
    InvalidKind::Surrogate,
    InvalidKind::TooLarge,
];

impl InvalidKind {
    /// The kind's name in the loss report.
    pub fn name(self) -> &'static str {
        match self {
            InvalidKind::StrayContinuation => "stray_continuation",
            InvalidKind::NeverValid => "never_valid",
            InvalidKind::Truncated => "truncated",
            InvalidKind::Overlong => "overlong",
            InvalidKind::Surrogate => "surrogate",
            InvalidKind::TooLarge => "too_large",
        }
    }
}

/// One invalid sequence: where it starts in the data, its kind and how many bytes it spans.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Invalid {
    /// Byte offset of the sequence's first byte.
    pub start: usize,
    /// Why the sequence is invalid.
    pub kind: InvalidKind,
    /// Bytes it spans (1 to 4).
    pub len: usize,
}

/// The invalid sequences of `data`, in order. Their bytes are exactly the bytes that
/// [`for_each_utf8_run`] reports as invalid.
pub fn invalid_sequences(data: &[u8]) -> impl Iterator<Item = Invalid> + '_ {
    let mut at = 0;
    std::iter::from_fn(move || {
        if at >= data.len() {
            return None;
        }
        let start = match checked(&data[at..]) {
            Ok(_) => {
                at = data.len();
                return None;
            }
            Err(e) => at + e.valid_up_to(),
        };
        let (kind, len) = classify(&data[start..]);
        at = start + len;
        Some(Invalid { start, kind, len })
    })
}

/// How many bytes of `data` are not part of valid UTF-8.
pub fn invalid_bytes(data: &[u8]) -> u64 {
    invalid_sequences(data).map(|s| s.len as u64).sum()
}

/// The kind of the invalid sequence at the start of `bad`, and how many bytes it spans:
/// the lead byte plus the continuation bytes that follow it (up to the sequence length).
/// Every byte it spans is invalid: a continuation byte can never start a character.
fn classify(bad: &[u8]) -> (InvalidKind, usize) {
    let lead = bad[0];
    let needed = match lead {
        0x80..=0xBF => return (InvalidKind::StrayContinuation, 1),
        0xC0 | 0xC1 | 0xF5..=0xFF => return (InvalidKind::NeverValid, 1),
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        _ => 4,
    };
    let follow = bad[1..].iter().take(needed - 1).take_while(|&&b| is_continuation(b)).count();
    let second = bad.get(1).copied().unwrap_or(0);
    let kind = match (lead, second) {
        (0xE0, 0x80..=0x9F) | (0xF0, 0x80..=0x8F) => InvalidKind::Overlong,
        (0xED, 0xA0..=0xBF) => InvalidKind::Surrogate,
        (0xF4, 0x90..=0xBF) => InvalidKind::TooLarge,
        _ => InvalidKind::Truncated,
    };
    (kind, 1 + follow)
}

/// True for 0x80-0xBF, which only ever continues a character.
#[inline]
pub fn is_continuation(byte: u8) -> bool {
    byte & 0xC0 == 0x80
}

/// The length (0..=3) of the end of `data` that starts a UTF-8 character without
/// finishing it: a streaming decoder holds those bytes back until more arrive.
pub fn incomplete_tail(data: &[u8]) -> usize {
    for len in 1..=data.len().min(3) {
        let tail = &data[data.len() - len..];
        if !is_continuation(tail[0]) {
            // A lead byte: incomplete iff decoding stops at the end without an error.
            return match std::str::from_utf8(tail) {
                Err(e) if e.valid_up_to() == 0 && e.error_len().is_none() => len,
                _ => 0,
            };
        }
    }
    0
}

/// Cuts `data` into parts of at most `max` bytes (`max` at least 1), at character
/// boundaries where it is text (a character longer than `max` is cut inside).
pub fn chunks_at_chars(data: &[u8], max: usize) -> impl Iterator<Item = &[u8]> {
    let max = max.max(1);
    let mut rest = data;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut end = rest.len().min(max);
        if end < rest.len() {
            // Back off continuation bytes so a character stays whole when it can.
            let boundary = (1..=end).rev().find(|&i| !is_continuation(rest[i])).unwrap_or(end);
            end = boundary.max(1);
        }
        let (part, after) = rest.split_at(end);
        rest = after;
        Some(part)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn incomplete_tails() {
        assert_eq!(incomplete_tail(b"abc"), 0);
        assert_eq!(incomplete_tail(b"ab\xe4"), 1);
        assert_eq!(incomplete_tail(b"ab\xe4\xb8"), 2);
        assert_eq!(incomplete_tail(b"ab\xe4\xb8\xad"), 0);
        assert_eq!(incomplete_tail(b"\xf0\x9f\x98"), 3);
        assert_eq!(incomplete_tail(b"ab\xff"), 0);
        assert_eq!(incomplete_tail(b"ab\xed\xa0"), 0, "a surrogate never completes");
        assert_eq!(invalid_bytes(b"a\xffb\xed\xa0\x80"), 4);
    }

    #[test]
    fn kinds_and_spans() {
        let data = b"ok\x80\xc0 \xe2\x82x \xe0\x80\x80 \xed\xa0\x80 \xf4\x90\x80\x80 \xff";
        let found: Vec<(InvalidKind, usize)> =
            invalid_sequences(data).map(|s| (s.kind, s.len)).collect();
        use InvalidKind::*;
        let want = [
            (StrayContinuation, 1),
            (NeverValid, 1),
            (Truncated, 2),
            (Overlong, 3),
            (Surrogate, 3),
            (TooLarge, 4),
            (NeverValid, 1),
        ];
        assert_eq!(found, want);
        assert_eq!(invalid_sequences(data).next().map(|s| s.start), Some(2));
    }

    #[test]
    fn invalid_sequences_cover_the_invalid_runs() {
        let data = b"\xed\xa0\x80\xed\xbf\xbf a\xe2\x82\xe2\x82\xac \xf0\x9f\x98 \xc3";
        let mut invalid = 0;
        for_each_utf8_run(data, |run| {
            if let Utf8Run::Invalid(b) = run {
                invalid += b.len() as u64;
            }
            Ok::<(), ()>(())
        })
        .unwrap();
        assert_eq!(invalid_bytes(data), invalid);
    }

    #[test]
    fn chunks_keep_characters_whole() {
        let parts: Vec<&[u8]> = chunks_at_chars("aé€😀b".as_bytes(), 4).collect();
        let expected: Vec<&[u8]> = vec![b"a\xc3\xa9", "€".as_bytes(), "😀".as_bytes(), b"b"];
        assert_eq!(parts, expected);
        let parts: Vec<&[u8]> = chunks_at_chars("😀".as_bytes(), 2).collect();
        assert_eq!(parts, vec![&b"\xf0\x9f"[..], b"\x98\x80"]);
    }

    /// The fast checks answer as the standard library does: whether bytes are UTF-8, and
    /// where each valid run ends and how long each invalid sequence is (for both walks), on random mixes of
    /// ASCII, whole characters and every kind of invalid sequence, at every length around
    /// the 32- and 64-byte blocks the fast check reads.
    #[test]
    fn fast_checks_agree_with_the_standard_library() {
        let pieces: [&[u8]; 12] = [
            b"a",
            b" ",
            b"\xc3\xa9",
            b"\xe4\xb8\x96",
            b"\xf0\x9f\x98\x80",
            b"\x80",
            b"\xc0",
            b"\xe2\x82",
            b"\xed\xa0\x80",
            b"\xf4\x90\x80\x80",
            b"\xff",
            b"\xe0\x80\x80",
        ];
        let mut rng = crate::test_rng::Rng(17);
        for round in 0..4_000 {
            let mut data = Vec::new();
            let target = (round % 140) as usize;
            // Mostly valid text, so long valid runs end in an invalid sequence late.
            while data.len() < target {
                let pick = rng.below(40);
                data.extend_from_slice(pieces[if pick < 28 { pick % 5 } else { pick % 12 }]);
            }
            assert_eq!(as_utf8(&data), std::str::from_utf8(&data).ok(), "{data:?}");
            assert_eq!(is_utf8(&data), std::str::from_utf8(&data).is_ok(), "{data:?}");
            let mut runs = Vec::new();
            for_each_utf8_run(&data, |run| {
                runs.push(match run {
                    Utf8Run::Text(t) => (true, t.len()),
                    Utf8Run::Invalid(b) => (false, b.len()),
                });
                Ok::<(), ()>(())
            })
            .unwrap();
            assert_eq!(runs, std_runs(&data), "{data:?}");
            // The ledger's walk covers the same invalid bytes.
            let mut invalid = vec![false; data.len()];
            let mut at = 0;
            for (valid, len) in std_runs(&data) {
                invalid[at..at + len].fill(!valid);
                at += len;
            }
            let mut covered = vec![false; data.len()];
            for seq in invalid_sequences(&data) {
                covered[seq.start..seq.start + seq.len].fill(true);
            }
            assert_eq!(covered, invalid, "{data:?}");
        }
    }

    /// `for_each_utf8_run`'s runs (valid?, length) through `std::str::from_utf8`.
    fn std_runs(mut data: &[u8]) -> Vec<(bool, usize)> {
        let mut runs = Vec::new();
        while !data.is_empty() {
            match std::str::from_utf8(data) {
                Ok(_) => {
                    runs.push((true, data.len()));
                    break;
                }
                Err(e) => {
                    if e.valid_up_to() > 0 {
                        runs.push((true, e.valid_up_to()));
                    }
                    let bad = e.error_len().unwrap_or(data.len() - e.valid_up_to());
                    runs.push((false, bad));
                    data = &data[e.valid_up_to() + bad..];
                }
            }
        }
        runs
    }
}
