//! Many documents' ids laid out back to back, as `encode_batch_numpy` and token files want
//! them: each document is encoded into its own vector in parallel, then every vector is
//! written once, in parallel, straight into the caller's buffer at its offset (no
//! flattened copy in between, no serial pass over the ids). The buffer need not be
//! initialized: zeroing megabytes first would be a serial pass of its own, and its page
//! faults would all fall on one thread.

use std::mem::MaybeUninit;

use rayon::prelude::*;

use crate::Rank;

/// The ids of a batch, document by document.
#[derive(Debug)]
pub struct FlatBatch {
    parts: Vec<Vec<Rank>>,
    /// `offsets[i]..offsets[i + 1]`: where document `i`'s ids go (`parts.len() + 1` long).
    offsets: Vec<u64>,
}

impl FlatBatch {
    pub fn new(parts: Vec<Vec<Rank>>) -> Self {
        let mut offsets = Vec::with_capacity(parts.len() + 1);
        offsets.push(0);
        let mut end = 0u64;
        for ids in &parts {
            end += ids.len() as u64;
            offsets.push(end);
        }
        Self { parts, offsets }
    }

    /// All the ids.
    pub fn len(&self) -> usize {
        *self.offsets.last().expect("offsets start with 0") as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn offsets(&self) -> &[u64] {
        &self.offsets
    }

    /// Writes every id as an `itemsize`-byte (2 or 4) native-endian integer into `buf`
    /// (`len() * itemsize` bytes), documents in parallel on the current pool. Returns the
    /// first document (in order) holding an id too large for `itemsize`, if any; `buf`
    /// is then partly written. On None every byte of `buf` is written.
    pub fn write(&self, buf: &mut [MaybeUninit<u8>], itemsize: usize) -> Option<usize> {
        assert!(itemsize == 2 || itemsize == 4, "itemsize 2 or 4");
        assert_eq!(buf.len(), self.len() * itemsize, "a buffer of len() * itemsize bytes");
        let mut chunks = Vec::with_capacity(self.parts.len());
        let mut rest = buf;
        for ids in &self.parts {
            let (chunk, tail) = rest.split_at_mut(ids.len() * itemsize);
            chunks.push(chunk);
            rest = tail;
        }
        self.parts
            .par_iter()
            .zip(chunks)
            .enumerate()
            .filter_map(|(doc, (ids, chunk))| {
                (!write_ids_into(ids, chunk, itemsize)).then_some(doc)
            })
            .min()
    }
}

/// Writes `ids` as `itemsize`-byte (2 or 4) native-endian integers into `out`
/// (`ids.len() * itemsize` bytes); false if an id does not fit 2 bytes (`out` is then
/// written with the ids cut to 16 bits).
pub fn write_ids(ids: &[Rank], out: &mut [u8], itemsize: usize) -> bool {
    // SAFETY: same layout, and only initialized bytes are written through it.
    let out = unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr().cast(), out.len()) };
    write_ids_into(ids, out, itemsize)
}

/// [`write_ids`] into memory not yet initialized: every byte of `out` is written.
fn write_ids_into(ids: &[Rank], out: &mut [MaybeUninit<u8>], itemsize: usize) -> bool {
    assert!(itemsize == 2 || itemsize == 4, "itemsize 2 or 4");
    assert_eq!(out.len(), ids.len() * itemsize, "a buffer of ids.len() * itemsize bytes");
    let at = out.as_mut_ptr();
    if itemsize == 2 {
        for (i, &id) in ids.iter().enumerate() {
            // SAFETY: 2 * i + 2 <= out.len() (asserted above); unaligned writes.
            unsafe { at.add(2 * i).cast::<u16>().write_unaligned(id as u16) };
        }
        ids.iter().all(|&id| id <= Rank::from(u16::MAX))
    } else {
        for (i, &id) in ids.iter().enumerate() {
            // SAFETY: as above, 4 * i + 4 <= out.len().
            unsafe { at.add(4 * i).cast::<u32>().write_unaligned(id) };
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes `write` gives a buffer of `len` uninitialized bytes, when it succeeds.
    fn written(batch: &FlatBatch, len: usize, itemsize: usize) -> Result<Vec<u8>, usize> {
        let mut buf = vec![MaybeUninit::<u8>::uninit(); len];
        match batch.write(&mut buf, itemsize) {
            // SAFETY: on None every byte is written.
            None => Ok(buf.iter().map(|b| unsafe { b.assume_init() }).collect()),
            Some(doc) => Err(doc),
        }
    }

    #[test]
    fn writes_each_document_at_its_offset() {
        let batch = FlatBatch::new(vec![vec![1, 2], vec![], vec![70_000, 3], vec![4]]);
        assert_eq!(batch.offsets(), [0, 2, 2, 4, 5]);
        let wide = written(&batch, 20, 4).unwrap();
        let ids: Vec<u32> =
            wide.chunks(4).map(|c| u32::from_ne_bytes(c.try_into().unwrap())).collect();
        assert_eq!(ids, [1, 2, 70_000, 3, 4]);
        assert_eq!(written(&batch, 10, 2), Err(2));
        let fits = FlatBatch::new(vec![vec![65_535], vec![0, 9]]);
        let narrow = written(&fits, 6, 2).unwrap();
        let ids: Vec<u16> =
            narrow.chunks(2).map(|c| u16::from_ne_bytes(c.try_into().unwrap())).collect();
        assert_eq!(ids, [65_535, 0, 9]);
    }
}
