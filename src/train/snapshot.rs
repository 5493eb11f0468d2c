//! The word table serialized for the run store: a header, the number of words, then each
//! word (length, bytes) and its count as varints, sorted by bytes so equal tables give
//! equal snapshots.

use super::table::WordTable;
use super::varint::{put_varint, take_varint};
use crate::error::{Error, Result};

pub(super) const MAGIC: &[u8] = b"BBPEWC1\0";

/// Serializes `table`.
pub fn write(table: &WordTable) -> Vec<u8> {
    let words = table.sorted();
    let mut out = Vec::with_capacity(MAGIC.len() + 8 + words.len() * 16);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(words.len() as u64).to_le_bytes());
    for (word, count) in words {
        put_varint(&mut out, word.len() as u64);
        out.extend_from_slice(word);
        put_varint(&mut out, count);
    }
    out
}

/// The table `snapshot` holds; an error names what is wrong with it.
pub fn read(snapshot: &[u8]) -> Result<WordTable> {
    let corrupt = |what: &str| Error::Corrupt(format!("word-count snapshot: {what}"));
    let body = snapshot.strip_prefix(MAGIC).ok_or_else(|| corrupt("bad header"))?;
    let (n, mut rest) = body.split_at_checked(8).ok_or_else(|| corrupt("cut short"))?;
    let n = u64::from_le_bytes(n.try_into().expect("8 bytes"));
    let mut table = WordTable::default();
    for _ in 0..n {
        let len = take_varint(&mut rest).ok_or_else(|| corrupt("cut short"))?;
        let len = usize::try_from(len).map_err(|_| corrupt("cut short"))?;
        let (word, after) = rest.split_at_checked(len).ok_or_else(|| corrupt("cut short"))?;
        rest = after;
        let count = take_varint(&mut rest).ok_or_else(|| corrupt("cut short"))?;
        if !table.insert_new(word, count) {
            return Err(corrupt("a word appears twice"));
        }
    }
    if !rest.is_empty() {
        return Err(corrupt("trailing bytes"));
    }
    Ok(table)
}
