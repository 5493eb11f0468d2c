//! What counting and batch encoding take in: whole documents, and the segments a long
//! document is read in.

/// One document. `is_text` promises valid UTF-8 (it came from a `str`), which skips
/// validation; any other bytes go through the invalid-byte split.
#[derive(Debug, Clone, Copy)]
pub struct Document<'a> {
    /// The document's bytes.
    pub data: &'a [u8],
    /// `data` is valid UTF-8.
    pub is_text: bool,
}

/// A part of a document: all of it, or one of the chunks a long document was read in
/// (cut only where splitting the parts gives the pieces of the whole, see
/// `crate::read::cut`).
#[derive(Debug, Clone, Copy)]
pub struct Segment<'a> {
    /// The segment's bytes.
    pub data: &'a [u8],
    /// Valid UTF-8 promised (see [`Document`]).
    pub is_text: bool,
    /// Where `data` starts in its document (offsets in the ledger are the document's).
    pub offset: u64,
    /// The document ends with this segment.
    pub ends: bool,
}

impl<'a> From<&Document<'a>> for Segment<'a> {
    fn from(doc: &Document<'a>) -> Self {
        Segment { data: doc.data, is_text: doc.is_text, offset: 0, ends: true }
    }
}

impl<'a> Segment<'a> {
    /// The bytes `range` of a whole document `doc`, as one of its segments.
    pub fn part(doc: &Document<'a>, range: std::ops::Range<usize>) -> Self {
        let ends = range.end == doc.data.len();
        Segment {
            data: &doc.data[range.clone()],
            is_text: doc.is_text,
            offset: range.start as u64,
            ends,
        }
    }
}
