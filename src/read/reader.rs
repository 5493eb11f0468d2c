//! `DocumentReader`: documents of one file or one fed stream, handed out in batches.

use rayon::prelude::*;

use super::jsonl;
use super::open::Source;
use super::split::{Batch, Delimit, Splitter};
use crate::document::Segment;
use crate::error::{Error, Result};
use crate::fingerprint::Fingerprinter;
use crate::parallel;

/// How to read an input.
#[derive(Debug, Clone)]
pub struct ReadOptions {
    /// Where documents end.
    pub delimit: Delimit,
    /// JSON Lines: the field holding the text (then `delimit` must be `Lines`).
    pub jsonl_field: Option<String>,
    /// Long documents may be cut at safe points (see `cut.rs`).
    pub cuts: bool,
    /// Bytes read at a time, and the size past which a long document is cut (0 acts as 1).
    pub chunk_size: usize,
    /// Threads for parsing JSON Lines (default: all cores).
    pub threads: Option<usize>,
    /// Under a memory limit: the most bytes of one document held at once (a document
    /// with no end and no safe cut in that many bytes is an error, not a buffer that
    /// grows with it). Also caps the chunk size at a quarter of it.
    pub hold_bytes: Option<usize>,
}

impl ReadOptions {
    /// Refuses what the splitter cannot work with: an empty separator (every position
    /// would end a document).
    fn check(&self) -> Result<()> {
        if self.delimit == Delimit::Separator(Vec::new()) {
            return Err(Error::InvalidConfig("the document separator is empty".into()));
        }
        Ok(())
    }
}

pub struct DocumentReader {
    /// The file name (or a stream's name), for errors.
    name: String,
    /// The file; `None` when bytes are fed (`feed`, `finish`).
    source: Option<Source>,
    /// How to read it.
    options: ReadOptions,
    /// Cuts the byte stream into documents (and long ones into parts).
    splitter: Splitter,
    /// Split but not yet handed out (raw lines for JSON Lines).
    ready: Batch,
    /// Handed back by `skip`: the rest of a batch, already processed.
    carry: Option<Batch>,
    /// Lines handed out so far (JSON Lines line numbers).
    lines: u64,
    /// Decompressed bytes read so far.
    offset: u64,
    /// The input has ended (end of file, an error, or `finish`).
    ended: bool,
    /// The fingerprint of skipped documents (kept across `skip` calls mid-document).
    skipped: Option<Fingerprinter>,
    /// An error to report after the documents before it were handed out.
    deferred: Option<Error>,
}

impl DocumentReader {
    /// A reader of the file at `path`, decompressed by its extension.
    pub fn open(path: impl AsRef<std::path::Path>, options: ReadOptions) -> Result<Self> {
        options.check()?;
        let path = path.as_ref();
        let source = Source::open(path)?;
        Ok(Self::new(path.to_string_lossy().into_owned(), Some(source), options))
    }

    /// A reader of bytes given by `feed`, up to `finish`.
    pub fn fed(name: &str, options: ReadOptions) -> Result<Self> {
        options.check()?;
        Ok(Self::new(name.to_owned(), None, options))
    }

    fn new(name: String, source: Option<Source>, mut options: ReadOptions) -> Self {
        let cuts = options.cuts && options.jsonl_field.is_none();
        if let Some(hold) = options.hold_bytes {
            // Read (and look for a cut) a quarter of that at a time, so a cut comes in
            // time and a document emitted whole stays near the bound.
            options.chunk_size = options.chunk_size.min((hold / 4).max(1));
        }
        let splitter = Splitter::new(options.delimit.clone(), cuts, options.chunk_size);
        Self {
            name,
            source,
            options,
            splitter,
            ready: Batch::default(),
            carry: None,
            lines: 0,
            offset: 0,
            ended: false,
            skipped: None,
            deferred: None,
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// True when everything has been handed out.
    pub fn exhausted(&self) -> bool {
        self.ended && self.ready.spans.is_empty() && self.carry.is_none() && self.deferred.is_none()
    }

    /// Keeps `error` to be reported by the next `take_deferred`.
    pub fn defer(&mut self, error: Error) {
        self.deferred = Some(error);
    }

    pub fn take_deferred(&mut self) -> Option<Error> {
        self.deferred.take()
    }

    /// Bytes buffered for the document being read (a long one without a safe cut).
    pub fn pending(&self) -> usize {
        self.splitter.pending()
    }

    pub fn feed(&mut self, data: &[u8]) {
        self.offset += data.len() as u64;
        self.splitter.push(data, &mut self.ready);
    }

    pub fn finish(&mut self) {
        if !self.ended {
            self.splitter.finish(&mut self.ready);
            self.ended = true;
        }
    }

    /// The next batch, about `target` bytes (a file is read up to that; a fed reader
    /// gives what is ready). With an error, the batch holds what came before it, and the
    /// reader is ended.
    pub fn next_batch(&mut self, target: usize) -> (Batch, Option<Error>) {
        if let Some(carry) = self.carry.take() {
            return (carry, None);
        }
        let mut error = None;
        if self.source.is_some() {
            let mut buf = vec![0; self.options.chunk_size.max(1)];
            while !self.ended && self.ready.data.len() < target {
                let source = self.source.as_mut().expect("checked above");
                match source.read(&mut buf, &self.name, self.offset) {
                    Ok(0) => {
                        self.splitter.finish(&mut self.ready);
                        self.ended = true;
                    }
                    Ok(n) => {
                        self.offset += n as u64;
                        self.splitter.push(&buf[..n], &mut self.ready);
                        if let Some(e) = self.held_too_long() {
                            error = Some(e);
                        }
                    }
                    Err(e) => {
                        // What was split so far is good; a partial document is dropped.
                        error = Some(e);
                        self.ended = true;
                    }
                }
            }
        }
        if error.is_none() {
            error = self.held_too_long();
        }
        let raw = std::mem::take(&mut self.ready);
        match self.options.jsonl_field.clone() {
            None => (raw, error),
            Some(field) => {
                let (batch, bad) = self.parse_jsonl(raw, &field);
                if bad.is_some() {
                    self.ended = true;
                    self.ready = Batch::default();
                }
                (batch, bad.or(error))
            }
        }
    }

    /// The error for a document held past `hold_bytes` with no end and no safe cut
    /// (then the reader is ended and the held bytes dropped), or None.
    fn held_too_long(&mut self) -> Option<Error> {
        let limit = self.options.hold_bytes?;
        let held = self.splitter.pending();
        if held <= limit {
            return None;
        }
        let (number, emitted) = self.splitter.current();
        let start = self.offset - held as u64 - emitted;
        let jsonl = self.options.jsonl_field.is_some();
        let lines = jsonl || self.options.delimit == Delimit::Lines;
        let what =
            if lines { format!("line {}", number + 1) } else { format!("document {number}") };
        let why = if jsonl {
            "is not cut (a JSON line is parsed whole)"
        } else if self.splitter.cuts() {
            "has no end and no point where it can be cut (a line break or a space between \
             printable ASCII characters)"
        } else {
            "has no end, and cannot be cut (documents are cut only under the built-in patterns \
             gpt2, cl100k and o200k, with no special token holding a line break or a space)"
        };
        let fix = if lines {
            "break the line, or raise memory_limit"
        } else {
            "split the input into smaller documents (documents=\"lines\", or a separator), or \
             raise memory_limit"
        };
        self.splitter.abandon();
        self.ended = true;
        Some(Error::BadInput(format!(
            "{}: {what} (from byte {start}) {why}, and is longer than {limit} bytes, the most \
             of one document memory_limit lets a reader hold at once: {fix}",
            self.name
        )))
    }

    /// Reads past `n` documents without counting them; returns how many were skipped
    /// (fewer when the input ends, or a fed reader has no more ready) and the
    /// fingerprint of all skipped so far, starting from `seed`.
    pub fn skip(&mut self, n: u64, seed: u64) -> Result<(u64, u64)> {
        let mut fp = self.skipped.take().unwrap_or_else(|| Fingerprinter::new(seed));
        let mut skipped = 0;
        while skipped < n && !(self.ended && self.ready.spans.is_empty() && self.carry.is_none()) {
            let (mut batch, error) = self.next_batch(1 << 22);
            if let Some(e) = error {
                self.skipped = Some(fp);
                return Err(e);
            }
            if batch.spans.is_empty() {
                break; // a fed reader with nothing ready
            }
            let mut taken = 0;
            for span in &batch.spans {
                if skipped == n {
                    break;
                }
                fp.add(&segment(&batch, span));
                skipped += u64::from(span.ends);
                taken += 1;
            }
            if taken < batch.spans.len() {
                batch.spans.drain(..taken);
                self.carry = Some(batch);
            }
        }
        let hash = fp.hash;
        if fp.in_document() {
            self.skipped = Some(fp);
        }
        Ok((skipped, hash))
    }

    /// The text field of each raw line, in parallel; stops at the first bad line.
    fn parse_jsonl(&mut self, raw: Batch, field: &str) -> (Batch, Option<Error>) {
        let pool = parallel::pool(self.options.threads);
        let parsed: Vec<std::result::Result<Option<String>, String>> = pool.install(|| {
            raw.spans.par_iter().map(|span| jsonl::text_field(raw.bytes(span), field)).collect()
        });
        let mut batch = Batch::default();
        for result in parsed {
            self.lines += 1;
            match result {
                Ok(Some(text)) => batch.push(text.as_bytes(), true, 0, true),
                Ok(None) => {}
                Err(why) => {
                    let line = self.lines;
                    return (
                        batch,
                        Some(Error::BadInput(format!("{}, line {line}: {why}", self.name))),
                    );
                }
            }
        }
        (batch, None)
    }
}

/// The counting view of one span of a batch.
pub fn segment<'a>(batch: &'a Batch, span: &super::split::Span) -> Segment<'a> {
    Segment { data: batch.bytes(span), is_text: span.is_text, offset: span.offset, ends: span.ends }
}

/// The segments of a batch, for `WordCounter::add_segments`.
pub fn segments(batch: &Batch) -> Vec<Segment<'_>> {
    batch.spans.iter().map(|span| segment(batch, span)).collect()
}
