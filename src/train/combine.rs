//! Combining counts made apart (one counter per block of a cluster's dataset) into the
//! counts of the whole input, exactly: word-count snapshots are summed (u64, checked),
//! ledgers are joined in input order (each block's document numbers shifted by the
//! documents before it, so the kept examples are the earliest of the whole input), and
//! fingerprints are joined so the result depends only on the documents and their order,
//! never on where the input was cut into blocks.
//!
//! Every join here is associative, so partial results may be combined in any tree of
//! consecutive blocks and give the same bytes.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::snapshot::MAGIC;
use super::varint::{put_varint, take_varint};
use crate::document::Document;
use crate::error::{Error, Result};
use crate::fingerprint::{fingerprint, EMPTY_FINGERPRINT};
use crate::ledger::Ledger;

/// The entries of one snapshot, read in order (snapshots are sorted by word bytes).
struct Entries<'a> {
    /// What is left to read.
    rest: &'a [u8],
    /// Entries left.
    left: u64,
}

fn corrupt(what: &str) -> Error {
    Error::Corrupt(format!("word-count snapshot: {what}"))
}

impl<'a> Entries<'a> {
    fn new(snapshot: &'a [u8]) -> Result<Self> {
        let body = snapshot.strip_prefix(MAGIC).ok_or_else(|| corrupt("bad header"))?;
        let (n, rest) = body.split_at_checked(8).ok_or_else(|| corrupt("cut short"))?;
        Ok(Self { rest, left: u64::from_le_bytes(n.try_into().expect("8 bytes")) })
    }

    /// The next (word, count), None at the end.
    fn next_entry(&mut self) -> Result<Option<(&'a [u8], u64)>> {
        if self.left == 0 {
            return if self.rest.is_empty() { Ok(None) } else { Err(corrupt("trailing bytes")) };
        }
        self.left -= 1;
        let len = take_varint(&mut self.rest).ok_or_else(|| corrupt("cut short"))?;
        let len = usize::try_from(len).map_err(|_| corrupt("cut short"))?;
        let (word, after) = self.rest.split_at_checked(len).ok_or_else(|| corrupt("cut short"))?;
        self.rest = after;
        let count = take_varint(&mut self.rest).ok_or_else(|| corrupt("cut short"))?;
        Ok(Some((word, count)))
    }
}

/// The snapshot of the summed tables of `snapshots`: a k-way merge of their sorted
/// entries, so it takes memory for the output only. A total above u64 is an error, as
/// is a snapshot that is damaged or not sorted.
pub fn merge_snapshots(snapshots: &[&[u8]]) -> Result<Vec<u8>> {
    let mut readers = snapshots.iter().map(|s| Entries::new(s)).collect::<Result<Vec<_>>>()?;
    let mut heap = BinaryHeap::with_capacity(readers.len());
    for (i, reader) in readers.iter_mut().enumerate() {
        if let Some((word, count)) = reader.next_entry()? {
            heap.push(Reverse((word, i, count)));
        }
    }
    let size: usize = snapshots.iter().map(|s| s.len()).sum();
    let mut out = Vec::with_capacity(size.min(1 << 30));
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&0u64.to_le_bytes());
    let mut words = 0u64;
    let mut current: Option<(&[u8], u64)> = None;
    while let Some(Reverse((word, i, count))) = heap.pop() {
        if let Some((next, next_count)) = readers[i].next_entry()? {
            if next <= word {
                return Err(corrupt("entries are not sorted"));
            }
            heap.push(Reverse((next, i, next_count)));
        }
        current = match current {
            Some((w, total)) if w == word => {
                let total = total.checked_add(count).ok_or_else(|| {
                    Error::InvalidConfig(format!(
                        "the total count of word {:?} exceeds 2**64-1",
                        String::from_utf8_lossy(word)
                    ))
                })?;
                Some((w, total))
            }
            Some((w, total)) => {
                put_entry(&mut out, w, total);
                words += 1;
                Some((word, count))
            }
            None => Some((word, count)),
        };
    }
    if let Some((w, total)) = current {
        put_entry(&mut out, w, total);
        words += 1;
    }
    out[MAGIC.len()..MAGIC.len() + 8].copy_from_slice(&words.to_le_bytes());
    Ok(out)
}

fn put_entry(out: &mut Vec<u8>, word: &[u8], count: u64) {
    put_varint(out, word.len() as u64);
    out.extend_from_slice(word);
    put_varint(out, count);
}

/// The ledger of consecutive parts of the input, given in input order: counters are
/// summed; each part's document numbers (its own, from 0) are shifted by the documents
/// of the parts before it, and the earliest examples of the whole are kept.
pub fn merge_ledgers(parts: &[Ledger]) -> Ledger {
    let mut out = Ledger::default();
    for part in parts {
        let mut shifted = part.clone();
        for example in &mut shifted.invalid_examples {
            example.1 += out.documents;
        }
        out.absorb(&shifted);
    }
    out
}

/// The modulus of sequence fingerprints (a Mersenne prime, so products fit u128).
const MODULUS: u64 = (1 << 61) - 1;
/// The base of sequence fingerprints.
const BASE: u64 = 0x1f35_a7bd_8c6d_4e29 % MODULUS;

fn mul_mod(a: u64, b: u64) -> u64 {
    ((u128::from(a) * u128::from(b)) % u128::from(MODULUS)) as u64
}

fn pow_mod(mut base: u64, mut exp: u64) -> u64 {
    let mut acc = 1;
    while exp > 0 {
        if exp & 1 == 1 {
            acc = mul_mod(acc, base);
        }
        base = mul_mod(base, base);
        exp >>= 1;
    }
    acc
}

/// A fingerprint of `docs` in order that can be joined: the polynomial
/// `sum(h_i * BASE^(n-1-i)) mod (2^61-1)` over each document's own fingerprint `h_i`
/// (its length and first and last bytes, see `crate::fingerprint`). The empty
/// sequence gives 0.
pub fn sequence_fingerprint(docs: &[Document<'_>]) -> u64 {
    docs.iter().fold(0, |acc, doc| {
        let h = fingerprint(EMPTY_FINGERPRINT, std::slice::from_ref(doc)) % MODULUS;
        (mul_mod(acc, BASE) + h) % MODULUS
    })
}

/// The sequence fingerprint of consecutive parts, each given as (its fingerprint, its
/// number of documents), in order: equal to [`sequence_fingerprint`] of all their
/// documents, however the documents were cut into parts.
pub fn join_fingerprints(parts: &[(u64, u64)]) -> u64 {
    parts.iter().fold(0, |acc, &(fp, n)| (mul_mod(acc, pow_mod(BASE, n)) + fp % MODULUS) % MODULUS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pretokenize::Pattern;
    use crate::special::SpecialTokens;
    use crate::train::WordCounter;

    fn counter() -> WordCounter {
        WordCounter::new(Pattern::new("cl100k").unwrap(), SpecialTokens::default(), None)
    }

    fn docs(texts: &[&'static [u8]]) -> Vec<Document<'static>> {
        texts.iter().map(|d| Document { data: d, is_text: false }).collect()
    }

    #[test]
    fn parts_combine_to_the_whole() {
        let texts: [&[u8]; 6] =
            [b"hello world", b"bad \xff byte", b"", b"hello \xfe\xff again", b"x", b"world \x80"];
        let all = docs(&texts);
        let mut whole = counter();
        whole.add_documents(&all, 0, Some(1)).unwrap();
        for cut in 0..=texts.len() {
            for cut2 in cut..=texts.len() {
                let ranges = [0..cut, cut..cut2, cut2..texts.len()];
                let mut snaps = Vec::new();
                let mut ledgers = Vec::new();
                let mut fps = Vec::new();
                for r in ranges {
                    let mut c = counter();
                    c.add_documents(&all[r.clone()], 0, Some(1)).unwrap();
                    snaps.push(c.snapshot());
                    ledgers.push(c.ledger().clone());
                    fps.push((sequence_fingerprint(&all[r.clone()]), r.len() as u64));
                }
                let refs: Vec<&[u8]> = snaps.iter().map(Vec::as_slice).collect();
                assert_eq!(merge_snapshots(&refs).unwrap(), whole.snapshot());
                assert_eq!(&merge_ledgers(&ledgers), whole.ledger());
                assert_eq!(join_fingerprints(&fps), sequence_fingerprint(&all));
                // Joining is associative: (a b) c == a (b c).
                let left = merge_snapshots(&[&merge_snapshots(&refs[..2]).unwrap(), refs[2]]);
                assert_eq!(left.unwrap(), whole.snapshot());
                let ab = merge_ledgers(&ledgers[..2]);
                assert_eq!(&merge_ledgers(&[ab, ledgers[2].clone()]), whole.ledger());
            }
        }
    }

    #[test]
    fn overflow_and_damage_are_errors() {
        let mut a = counter();
        a.add_word(b"w", u64::MAX).unwrap();
        let snap = a.snapshot();
        assert!(merge_snapshots(&[&snap, &snap]).is_err());
        assert!(merge_snapshots(&[&snap[..snap.len() - 1]]).is_err());
        let empty = counter().snapshot();
        assert_eq!(merge_snapshots(&[]).unwrap(), empty);
        assert_eq!(merge_snapshots(&[&empty, &snap]).unwrap(), snap);
    }
}
