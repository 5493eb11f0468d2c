//! A fingerprint of a sequence of documents: cheap, and enough to tell a resumed run that
//! it was given other input. The same for whole documents and for the same documents
//! read in segments.

use crate::document::{Document, Segment};

/// The fingerprint of no documents.
pub const EMPTY_FINGERPRINT: u64 = 0xcbf2_9ce4_8422_2325;

/// Bytes of each end of a document that go into the fingerprint.
const ENDS: usize = 32;

/// Extends `seed` with documents, in order: their length and first and last 32 bytes.
pub fn fingerprint(seed: u64, docs: &[Document<'_>]) -> u64 {
    let mut h = seed;
    for doc in docs {
        let d = doc.data;
        h = eat(h, &(d.len() as u64).to_le_bytes());
        h = eat(h, &d[..d.len().min(ENDS)]);
        h = eat(h, &d[d.len().saturating_sub(ENDS)..]);
    }
    h
}

/// FNV-1a over `bytes`, continuing from `h`.
pub fn eat(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// [`fingerprint`] fed segment by segment, for documents read in chunks: equal to the
/// fingerprint of the whole documents however they were cut.
#[derive(Debug, Clone)]
pub struct Fingerprinter {
    /// The fingerprint of the documents finished so far.
    pub hash: u64,
    /// The document being read: its length so far and its first and last bytes.
    open: Option<(u64, Vec<u8>, Vec<u8>)>,
}

impl Fingerprinter {
    /// Starts from fingerprint `seed` (the documents before these).
    pub fn new(seed: u64) -> Self {
        Self { hash: seed, open: None }
    }

    /// True between the first and the last segment of a document.
    pub fn in_document(&self) -> bool {
        self.open.is_some()
    }

    /// Bytes read so far of the document not yet finished (0 between documents).
    pub fn open_bytes(&self) -> u64 {
        self.open.as_ref().map_or(0, |(len, ..)| *len)
    }

    /// Adds the next segment.
    pub fn add(&mut self, segment: &Segment<'_>) {
        let data = segment.data;
        if segment.ends && self.open.is_none() {
            self.hash = fingerprint(self.hash, &[Document { data, is_text: false }]);
            return;
        }
        let (len, head, tail) = self.open.get_or_insert_with(Default::default);
        *len += data.len() as u64;
        let room = ENDS - head.len();
        head.extend_from_slice(&data[..data.len().min(room)]);
        tail.extend_from_slice(&data[data.len().saturating_sub(ENDS)..]);
        tail.drain(..tail.len().saturating_sub(ENDS));
        if segment.ends {
            let (len, head, tail) = self.open.take().expect("set above");
            self.hash = eat(eat(eat(self.hash, &len.to_le_bytes()), &head), &tail);
        }
    }
}
