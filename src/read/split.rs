//! Splitting a byte stream into documents, pushed in chunks of any size.
//!
//! Complete documents come out whole. A document longer than the chunk size with no end
//! in sight is emitted in parts, cut only at safe points (`cut.rs`) when cutting is
//! allowed; otherwise it is buffered whole (memory grows with that one document, up to
//! the reader's `hold_bytes` under a memory limit).

use memchr::memmem;

use super::cut;

/// How a stream is divided into documents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delimit {
    /// One document per line, the line ending kept (as `for line in file` gives).
    Lines,
    /// The whole stream is one document.
    Whole,
    /// Documents are the bytes between separators (the separator is not part of them).
    Separator(Vec<u8>),
}

/// A batch of documents or document parts, in one buffer.
#[derive(Debug, Default)]
pub struct Batch {
    /// The documents' bytes, one after another.
    pub data: Vec<u8>,
    /// Where each document (or part) is in `data`, in order.
    pub spans: Vec<Span>,
}

/// One document, or a part of one, in `Batch::data`.
#[derive(Debug, Clone, Copy)]
pub struct Span {
    /// Where the part starts in `Batch::data`.
    pub start: usize,
    /// Where it ends (exclusive).
    pub end: usize,
    /// Valid UTF-8 promised (JSON text).
    pub is_text: bool,
    /// Where this part starts in its document.
    pub offset: u64,
    /// The document ends with this part.
    pub ends: bool,
}

impl Batch {
    pub fn push(&mut self, bytes: &[u8], is_text: bool, offset: u64, ends: bool) {
        let start = self.data.len();
        self.data.extend_from_slice(bytes);
        self.spans.push(Span { start, end: self.data.len(), is_text, offset, ends });
    }

    pub fn bytes(&self, span: &Span) -> &[u8] {
        &self.data[span.start..span.end]
    }

    /// Documents that end in this batch.
    pub fn documents(&self) -> u64 {
        self.spans.iter().filter(|s| s.ends).count() as u64
    }
}

#[derive(Debug)]
pub struct Splitter {
    /// Where documents end.
    delimit: Delimit,
    /// Cut long documents at safe points.
    cuts: bool,
    /// A document longer than this is cut at the last safe point (with `cuts`).
    chunk_size: usize,
    /// The current document's bytes not emitted yet (with a possible partial separator).
    pending: Vec<u8>,
    /// `pending[..searched]` holds no document end (no separator starts there).
    searched: usize,
    /// `pending[..cut_searched]` holds no safe cut.
    cut_searched: usize,
    /// Bytes of the current document already emitted.
    emitted: u64,
    /// Documents emitted whole so far (the current one's number, from 0).
    documents: u64,
}

impl Splitter {
    pub fn new(delimit: Delimit, cuts: bool, chunk_size: usize) -> Self {
        Self {
            delimit,
            cuts,
            chunk_size: chunk_size.max(1),
            pending: Vec::new(),
            searched: 0,
            cut_searched: 0,
            emitted: 0,
            documents: 0,
        }
    }

    /// Whether long documents are cut at safe points.
    pub fn cuts(&self) -> bool {
        self.cuts
    }

    /// The current document: its number (from 0) and how many of its bytes were emitted.
    pub fn current(&self) -> (u64, u64) {
        (self.documents, self.emitted)
    }

    /// Drops the bytes held for the current document (after an error).
    pub fn abandon(&mut self) {
        self.pending = Vec::new();
        self.searched = 0;
        self.cut_searched = 0;
    }

    /// Bytes held for the current document.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Adds bytes; complete documents (and safe parts of a long one) go to `out`.
    pub fn push(&mut self, input: &[u8], out: &mut Batch) {
        self.pending.extend_from_slice(input);
        let mut start = 0;
        while let Some((end, next)) = self.find_end(start) {
            out.push(&self.pending[start..end], false, self.emitted, true);
            self.emitted = 0;
            self.documents += 1;
            start = next;
            self.searched = next;
        }
        if start > 0 {
            self.pending.drain(..start);
            self.searched -= start;
            self.cut_searched = 0;
        }
        if self.cuts && self.pending.len() >= self.chunk_size {
            self.cut(out);
        }
    }

    /// The stream ended: the last document, if any, goes to `out`.
    pub fn finish(&mut self, out: &mut Batch) {
        let last = match self.delimit {
            // A stream is one document even when empty.
            Delimit::Whole => true,
            _ => !self.pending.is_empty() || self.emitted > 0,
        };
        if last {
            out.push(&self.pending, false, self.emitted, true);
        }
        self.pending.clear();
        self.searched = 0;
        self.cut_searched = 0;
        self.emitted = 0;
    }

    /// The end of the next document in `pending[start..]` and where the one after starts.
    fn find_end(&mut self, start: usize) -> Option<(usize, usize)> {
        let from = start.max(self.searched);
        let hay = &self.pending[from..];
        // A one-shot search: a `memmem::Finder` kept in the struct (via `into_owned`)
        // crashed inside memchr 2.8.3's AVX2 packed-pair search in the release extension
        // module (not reproduced under `cargo test`; cause not found). Building the
        // searcher per call costs little next to the bytes searched.
        let found = match &self.delimit {
            Delimit::Lines => memchr::memchr(b'\n', hay).map(|i| (from + i + 1, from + i + 1)),
            Delimit::Separator(sep) => {
                memmem::find(hay, sep).map(|i| (from + i, from + i + sep.len()))
            }
            Delimit::Whole => None,
        };
        if found.is_none() {
            // A separator may begin in the last len-1 bytes and end in the next push.
            let keep = match &self.delimit {
                Delimit::Separator(sep) => sep.len().saturating_sub(1),
                _ => 0,
            };
            self.searched = self.pending.len().saturating_sub(keep).max(from);
        }
        found
    }

    /// Emits the current document's bytes up to its last safe cut, if it has one.
    fn cut(&mut self, out: &mut Batch) {
        // Only bytes known to be in the document (before any separator start) may be
        // looked at or emitted; a cut needs the byte or two after it too.
        let known = &self.pending[..self.searched.min(self.pending.len())];
        let last = known.len().saturating_sub(1);
        match cut::last_safe_cut(known, self.cut_searched, last) {
            Some(p) => {
                out.push(&self.pending[..p], false, self.emitted, false);
                self.emitted += p as u64;
                self.pending.drain(..p);
                self.searched -= p;
                self.cut_searched = 0;
            }
            None => self.cut_searched = last.max(self.cut_searched),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(delimit: Delimit, cuts: bool, input: &[u8], step: usize) -> Vec<(Vec<u8>, u64, bool)> {
        let mut s = Splitter::new(delimit, cuts, step);
        let mut out = Batch::default();
        for chunk in input.chunks(step.max(1)) {
            s.push(chunk, &mut out);
        }
        s.finish(&mut out);
        out.spans.iter().map(|sp| (out.bytes(sp).to_vec(), sp.offset, sp.ends)).collect()
    }

    fn whole_documents(parts: &[(Vec<u8>, u64, bool)]) -> Vec<Vec<u8>> {
        let mut docs = vec![];
        let mut cur = vec![];
        for (bytes, offset, ends) in parts {
            assert_eq!(*offset, cur.len() as u64);
            cur.extend_from_slice(bytes);
            if *ends {
                docs.push(std::mem::take(&mut cur));
            }
        }
        docs
    }

    #[test]
    fn documents_do_not_depend_on_chunking() {
        let input = b"a1\nb2 \n\nxx<SEP>yy\nzz<SEP><SEP>last\nline";
        for step in 1..12 {
            let lines = whole_documents(&run(Delimit::Lines, true, input, step));
            assert_eq!(lines.len(), 6, "step {step}");
            assert_eq!(lines.concat(), input.to_vec());
            let sep = Delimit::Separator(b"<SEP>".to_vec());
            let docs = whole_documents(&run(sep, true, input, step));
            let expected: Vec<Vec<u8>> =
                input.split_str(b"<SEP>").map(|d: &[u8]| d.to_vec()).collect();
            assert_eq!(docs, expected, "step {step}");
            let whole = run(Delimit::Whole, true, input, step);
            assert_eq!(whole_documents(&whole), vec![input.to_vec()]);
            if step == 1 {
                // Cut at every safe point, and only there.
                assert!(whole.len() > 1);
                let mut at = 0;
                for (bytes, _, _) in &whole[..whole.len() - 1] {
                    at += bytes.len();
                    assert!(cut::is_safe_cut(input, at), "cut at {at}");
                }
            }
        }
        assert_eq!(run(Delimit::Whole, false, b"a\nb\nc", 1).len(), 1);
        assert_eq!(run(Delimit::Whole, true, b"", 1), vec![(vec![], 0, true)]);
        assert!(run(Delimit::Lines, true, b"", 1).is_empty());
    }

    trait SplitStr {
        fn split_str<'a>(&'a self, sep: &'a [u8]) -> Box<dyn Iterator<Item = &'a [u8]> + 'a>;
    }

    impl SplitStr for [u8] {
        fn split_str<'a>(&'a self, sep: &'a [u8]) -> Box<dyn Iterator<Item = &'a [u8]> + 'a> {
            let mut rest = Some(self);
            Box::new(std::iter::from_fn(move || {
                let r = rest?;
                match memmem::find(r, sep) {
                    Some(i) => {
                        rest = Some(&r[i + sep.len()..]);
                        Some(&r[..i])
                    }
                    None => {
                        rest = None;
                        Some(r)
                    }
                }
            }))
        }
    }
}
