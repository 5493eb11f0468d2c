//! Counting words: documents are pre-tokenized in parallel and each piece's bytes counted.

use ahash::AHashMap;
use rayon::prelude::*;

use super::budget::{self, Budget, CostByCount};
use crate::error::{Error, Result};
use crate::ledger::Ledger;
use crate::parallel;
use crate::pretokenize::Pattern;
use crate::special::{Part, SpecialTokens};

/// Word bytes -> number of occurrences.
pub type WordCounts = AHashMap<Vec<u8>, u64>;

/// One document to count. `is_text` promises valid UTF-8 (it came from a `str`), which
/// skips validation; any other bytes go through the invalid-byte split.
#[derive(Debug, Clone, Copy)]
pub struct Document<'a> {
    pub data: &'a [u8],
    pub is_text: bool,
}

/// Accumulates word counts over any number of batches. The result depends only on the
/// multiset of documents, never on batching or thread count: counts are exact sums.
#[derive(Debug)]
pub struct WordCounter {
    pattern: Pattern,
    /// Special-token text in documents is cut out, not counted (as `encode` would do with
    /// `allowed_special="all"`).
    specials: SpecialTokens,
    /// Pieces longer than this many bytes are cut into shorter words (counted in the
    /// ledger), so no token grows longer.
    max_token_length: Option<usize>,
    /// The word table, split by a fixed hash of the word so batches can be folded in
    /// on all threads at once (each thread owns some shards).
    shards: Vec<WordCounts>,
    ledger: Ledger,
    /// A fingerprint of the documents counted, in order (see [`fingerprint`]).
    fingerprint: Fingerprinter,
    /// With a memory limit: when to check the table, and how far to prune it.
    budget: Option<Budget>,
    /// The table's estimated memory ([`budget::table_entry`] summed over its words).
    table_bytes: u64,
    /// Bytes of pre-counted words added (`add_word` checkpoints fall on this volume).
    words_added: u64,
}

/// The fingerprint of no documents.
pub const EMPTY_FINGERPRINT: u64 = 0xcbf2_9ce4_8422_2325;

/// Bytes of each end of a document that go into the fingerprint.
const FINGERPRINT_ENDS: usize = 32;

/// Extends `seed` with documents, in order: their length and first and last 32 bytes.
/// Cheap, and enough to tell a resumed run that it was given other input.
pub fn fingerprint(seed: u64, docs: &[Document<'_>]) -> u64 {
    let mut h = seed;
    for doc in docs {
        let d = doc.data;
        h = eat(h, &(d.len() as u64).to_le_bytes());
        h = eat(h, &d[..d.len().min(FINGERPRINT_ENDS)]);
        h = eat(h, &d[d.len().saturating_sub(FINGERPRINT_ENDS)..]);
    }
    h
}

fn eat(mut h: u64, bytes: &[u8]) -> u64 {
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

    pub fn add(&mut self, segment: &Segment<'_>) {
        let data = segment.data;
        if segment.ends && self.open.is_none() {
            self.hash = fingerprint(self.hash, &[Document { data, is_text: false }]);
            return;
        }
        let (len, head, tail) = self.open.get_or_insert_with(Default::default);
        *len += data.len() as u64;
        let room = FINGERPRINT_ENDS - head.len();
        head.extend_from_slice(&data[..data.len().min(room)]);
        tail.extend_from_slice(&data[data.len().saturating_sub(FINGERPRINT_ENDS)..]);
        tail.drain(..tail.len().saturating_sub(FINGERPRINT_ENDS));
        if segment.ends {
            let (len, head, tail) = self.open.take().expect("set above");
            self.hash = eat(eat(eat(self.hash, &len.to_le_bytes()), &head), &tail);
        }
    }
}

/// A part of a document: all of it, or one of the chunks a long document was read in
/// (cut only where splitting the parts gives the pieces of the whole, see `crate::read`).
#[derive(Debug, Clone, Copy)]
pub struct Segment<'a> {
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

impl WordCounter {
    pub fn new(pattern: Pattern, specials: SpecialTokens, max_token_length: Option<usize>) -> Self {
        Self {
            pattern,
            specials,
            max_token_length: max_token_length.map(|n| n.max(1)),
            shards: empty_shards(),
            ledger: Ledger::default(),
            fingerprint: Fingerprinter::new(EMPTY_FINGERPRINT),
            budget: None,
            table_bytes: 0,
            words_added: 0,
        }
    }

    /// Keeps the word table (and later the merge loop) within `budget`: at each
    /// checkpoint (every `budget.checkpoint_every` bytes of input, at the end of the
    /// document that reaches it) a table estimated above `table_high` loses its rarest
    /// words. Checkpoints depend only on the documents' order and sizes, so the result
    /// is the same for any batching or thread count.
    pub fn with_budget(mut self, budget: Budget) -> Self {
        self.budget = Some(budget);
        self
    }

    pub fn budget(&self) -> Option<&Budget> {
        self.budget.as_ref()
    }

    /// The word table's estimated memory in bytes.
    pub fn table_bytes(&self) -> u64 {
        self.table_bytes
    }

    pub fn ledger(&self) -> &Ledger {
        &self.ledger
    }

    pub fn fingerprint(&self) -> u64 {
        self.fingerprint.hash
    }

    /// True while a document read in chunks is partly counted: its words are in the
    /// table but it is not yet in `documents` (no checkpoint should be taken then).
    pub fn in_document(&self) -> bool {
        self.fingerprint.in_document()
    }

    /// Serializes the word table (sorted by bytes, so equal tables give equal bytes).
    pub fn snapshot(&self) -> Vec<u8> {
        let mut words: Vec<(&Vec<u8>, &u64)> = self.shards.iter().flatten().collect();
        words.par_sort_unstable();
        let mut out = Vec::with_capacity(SNAPSHOT_MAGIC.len() + 8 + words.len() * 16);
        out.extend_from_slice(SNAPSHOT_MAGIC);
        out.extend_from_slice(&(words.len() as u64).to_le_bytes());
        for (word, &count) in words {
            put_varint(&mut out, word.len() as u64);
            out.extend_from_slice(word);
            put_varint(&mut out, count);
        }
        out
    }

    /// Replaces the state with a snapshot and the ledger and fingerprint saved with it.
    pub fn restore(&mut self, snapshot: &[u8], ledger: Ledger, fingerprint: u64) -> Result<()> {
        let corrupt = |what: &str| Error::Corrupt(format!("word-count snapshot: {what}"));
        let body = snapshot.strip_prefix(SNAPSHOT_MAGIC).ok_or_else(|| corrupt("bad header"))?;
        let (n, mut rest) = body.split_at_checked(8).ok_or_else(|| corrupt("cut short"))?;
        let n = u64::from_le_bytes(n.try_into().expect("8 bytes"));
        let mut shards = empty_shards();
        let mut table_bytes = 0;
        for _ in 0..n {
            let len = take_varint(&mut rest).ok_or_else(|| corrupt("cut short"))? as usize;
            let (word, after) = rest.split_at_checked(len).ok_or_else(|| corrupt("cut short"))?;
            rest = after;
            let count = take_varint(&mut rest).ok_or_else(|| corrupt("cut short"))?;
            if shards[shard_of(word)].insert(word.to_vec(), count).is_some() {
                return Err(corrupt("a word appears twice"));
            }
            table_bytes += budget::table_entry(word.len() as u64);
        }
        if !rest.is_empty() {
            return Err(corrupt("trailing bytes"));
        }
        self.shards = shards;
        self.table_bytes = table_bytes;
        self.ledger = ledger;
        self.fingerprint = Fingerprinter::new(fingerprint);
        Ok(())
    }

    pub fn pattern(&self) -> &Pattern {
        &self.pattern
    }

    pub fn specials(&self) -> &SpecialTokens {
        &self.specials
    }

    /// Whether long documents may be cut (see `crate::read::cut`).
    pub fn cuts_allowed(&self) -> bool {
        let texts: Vec<&str> = self.specials.tokens().iter().map(|(t, _)| t.as_str()).collect();
        crate::read::cut::cuts_allowed(self.pattern.is_builtin(), &texts)
    }

    /// Documents counted so far.
    pub fn documents(&self) -> u64 {
        self.ledger.documents
    }

    /// Bytes of documents counted so far.
    pub fn bytes(&self) -> u64 {
        self.ledger.bytes
    }

    /// Distinct words so far.
    pub fn distinct_words(&self) -> usize {
        self.shards.iter().map(|s| s.len()).sum()
    }

    /// Counts a batch in parallel. `first_index` is the index of `docs[0]` in the whole
    /// input, used to name a failing document. On error nothing of the batch is counted
    /// (with a budget: nothing after the last checkpoint before the failing document).
    pub fn add_documents(
        &mut self,
        docs: &[Document<'_>],
        first_index: u64,
        threads: Option<usize>,
    ) -> Result<()> {
        let segments: Vec<Segment<'_>> = docs.iter().map(Segment::from).collect();
        self.add_segments(&segments, first_index, threads)
    }

    /// Counts a batch of segments in parallel: whole documents, or parts of documents
    /// read in chunks (a document is counted in `documents` with its last segment).
    /// `first_index` is the index of the document of `segments[0]`. On error nothing of
    /// the batch is counted (with a budget: nothing after the last checkpoint before the
    /// failing document).
    pub fn add_segments(
        &mut self,
        segments: &[Segment<'_>],
        first_index: u64,
        threads: Option<usize>,
    ) -> Result<()> {
        let Some(every) = self.budget.map(|b| b.checkpoint_every) else {
            return self.count_segments(segments, first_index, threads);
        };
        // Cut the batch at checkpoints: after the document whose end reaches the next
        // multiple of `every` input bytes, wherever batches or segments happen to start.
        let mut start = 0;
        let mut index = first_index;
        while start < segments.len() {
            // Checkpoints fall at document ends, however documents were cut into segments.
            let mut bytes = self.ledger.bytes;
            let mut last_end = bytes - self.fingerprint.open_bytes();
            let (mut end, mut reached) = (start, false);
            while end < segments.len() && !reached {
                bytes += segments[end].data.len() as u64;
                if segments[end].ends {
                    reached = bytes / every > last_end / every;
                    last_end = bytes;
                }
                end += 1;
            }
            let part = &segments[start..end];
            self.count_segments(part, index, threads)?;
            index += part.iter().filter(|s| s.ends).count() as u64;
            if reached {
                self.checkpoint();
            }
            start = end;
        }
        Ok(())
    }

    fn count_segments(
        &mut self,
        segments: &[Segment<'_>],
        first_index: u64,
        threads: Option<usize>,
    ) -> Result<()> {
        if segments.is_empty() {
            return Ok(());
        }
        // The document index of each segment: one more after each document's end.
        let mut index = first_index;
        let indices: Vec<u64> = segments
            .iter()
            .map(|seg| {
                let this = index;
                index += u64::from(seg.ends);
                this
            })
            .collect();
        let pool = parallel::pool(threads);
        // A few chunks per thread balances uneven documents without many partial maps.
        let chunk = segments.len().div_ceil(pool.current_num_threads() * 4).max(1);
        let partials: Vec<Result<(Vec<WordCounts>, Ledger)>> = pool.install(|| {
            segments
                .par_chunks(chunk)
                .zip(indices.par_chunks(chunk))
                .map(|(chunk_segments, chunk_indices)| {
                    let mut counts = empty_shards();
                    let mut ledger = Ledger::default();
                    for (seg, &index) in chunk_segments.iter().zip(chunk_indices) {
                        self.count_segment(seg, index, &mut counts, &mut ledger).map_err(|e| {
                            Error::PatternMatch { document: index, message: e.to_string() }
                        })?;
                    }
                    Ok((counts, ledger))
                })
                .collect()
        });
        let partials = partials.into_iter().collect::<Result<Vec<_>>>()?;
        let mut by_shard: Vec<Vec<WordCounts>> = (0..SHARDS).map(|_| Vec::new()).collect();
        for (counts, ledger) in partials {
            for (shard, partial) in by_shard.iter_mut().zip(counts) {
                shard.push(partial);
            }
            self.ledger.absorb(&ledger);
        }
        let added: u64 = pool.install(|| {
            self.shards
                .par_iter_mut()
                .zip(by_shard)
                .map(|(shard, partials)| {
                    partials.into_iter().map(|partial| absorb(shard, partial)).sum::<u64>()
                })
                .sum()
        });
        self.table_bytes += added;
        self.ledger.documents += segments.iter().filter(|s| s.ends).count() as u64;
        self.ledger.bytes += segments.iter().map(|s| s.data.len() as u64).sum::<u64>();
        for seg in segments {
            self.fingerprint.add(seg);
        }
        Ok(())
    }

    /// Adds a pre-counted word (not pre-tokenized).
    pub fn add_word(&mut self, word: &[u8], count: u64) -> Result<()> {
        if count == 0 || word.is_empty() {
            return Ok(());
        }
        let shard = &mut self.shards[shard_of(word)];
        let slot = match shard.get_mut(word) {
            Some(slot) => slot,
            None => {
                self.table_bytes += budget::table_entry(word.len() as u64);
                shard.entry(word.to_vec()).or_insert(0)
            }
        };
        *slot = slot.checked_add(count).ok_or_else(|| {
            Error::InvalidConfig(format!(
                "the total count of word {:?} exceeds 2**64-1",
                String::from_utf8_lossy(word)
            ))
        })?;
        // Pre-counted words have checkpoints of their own, on the bytes of words added
        // (so they depend on the order the words are given in).
        if let Some(every) = self.budget.map(|b| b.checkpoint_every) {
            let before = self.words_added;
            self.words_added += word.len() as u64;
            if self.words_added / every > before / every {
                self.checkpoint();
            }
        }
        Ok(())
    }

    /// At a checkpoint: prunes the table when its estimate is above the high mark.
    fn checkpoint(&mut self) {
        if let Some(b) = self.budget {
            if self.table_bytes > b.table_high {
                self.prune(b.table_low, budget::table_entry);
            }
        }
    }

    /// Before the merge loop: prunes the rarest words until the merge loop's estimate
    /// fits the budget. Returns the estimate after pruning (0 without a budget).
    pub fn fit_merge_budget(&mut self) -> u64 {
        let Some(b) = self.budget else {
            return 0;
        };
        let estimate = self.merge_bytes();
        if estimate > b.merge_bytes {
            self.prune(b.merge_bytes, budget::merge_entry);
            return self.merge_bytes();
        }
        estimate
    }

    /// The merge loop's estimated peak memory for the current table.
    pub fn merge_bytes(&self) -> u64 {
        let per_shard =
            |s: &WordCounts| -> u64 { s.keys().map(|w| budget::merge_entry(w.len() as u64)).sum() };
        parallel::pool(None).install(|| self.shards.par_iter().map(per_shard).sum())
    }

    /// Drops the rarest words until the estimate (`cost` per word length) is at most
    /// `target`: every word below the smallest count threshold `t` that fits, and of the
    /// words at `t`, those outside the tie buckets that fit (by a fixed hash of the word,
    /// see [`budget::TIE_BUCKETS`]). Dropped occurrences and bytes go to the ledger. The
    /// choice depends only on the table's contents, never on its layout in memory.
    fn prune(&mut self, target: u64, cost: fn(u64) -> u64) {
        let pool = parallel::pool(None);
        let histogram = pool.install(|| {
            self.shards
                .par_iter()
                .map(|s| {
                    let mut h = CostByCount::default();
                    for (w, &n) in s {
                        h.add(n, cost(w.len() as u64));
                    }
                    h
                })
                .reduce(CostByCount::default, CostByCount::merge)
        });
        let (threshold, above) = histogram.threshold(target);
        if threshold == 0 {
            return;
        }
        let ties = pool.install(|| {
            self.shards
                .par_iter()
                .map(|s| {
                    let mut costs = [0u64; budget::TIE_BUCKETS];
                    for (w, &n) in s {
                        if n == threshold {
                            costs[tie_bucket(w)] += cost(w.len() as u64);
                        }
                    }
                    costs
                })
                .reduce(
                    || [0u64; budget::TIE_BUCKETS],
                    |mut a, b| {
                        for (x, y) in a.iter_mut().zip(b) {
                            *x += y;
                        }
                        a
                    },
                )
        });
        let keep_ties = budget::tie_buckets(&ties, target - above);
        let (mass, bytes, kept): (u64, u64, u64) = pool.install(|| {
            self.shards
                .par_iter_mut()
                .map(|s| {
                    let (mut mass, mut bytes, mut kept) = (0u64, 0u64, 0u64);
                    s.retain(|w, &mut n| {
                        if n < threshold || (n == threshold && tie_bucket(w) >= keep_ties) {
                            mass = mass.saturating_add(n);
                            bytes = bytes.saturating_add(n.saturating_mul(w.len() as u64));
                            false
                        } else {
                            kept += budget::table_entry(w.len() as u64);
                            true
                        }
                    });
                    // Give the emptied buckets back: the estimate assumes a table no larger
                    // than its contents need.
                    s.shrink_to_fit();
                    (mass, bytes, kept)
                })
                .reduce(
                    || (0, 0, 0),
                    |a, b| (a.0.saturating_add(b.0), a.1.saturating_add(b.1), a.2 + b.2),
                )
        });
        self.ledger.dropped_word_mass = self.ledger.dropped_word_mass.saturating_add(mass);
        self.ledger.dropped_bytes = self.ledger.dropped_bytes.saturating_add(bytes);
        self.table_bytes = kept;
        budget::release_free_memory();
    }

    /// The counted words, sorted by bytes (a deterministic order for training).
    pub fn into_words(self) -> Vec<(Vec<u8>, u64)> {
        // Sized once; each shard's table is freed as soon as it is moved out.
        let mut words = Vec::with_capacity(self.distinct_words());
        for shard in self.shards {
            words.extend(shard);
        }
        words.par_sort_unstable_by(|a, b| a.0.cmp(&b.0));
        words
    }

    fn count_segment(
        &self,
        doc: &Segment<'_>,
        index: u64,
        counts: &mut [WordCounts],
        ledger: &mut Ledger,
    ) -> Result<(), fancy_regex::Error> {
        // Bytes that validate take the text path; others are tallied in the ledger first.
        let is_text = doc.is_text || std::str::from_utf8(doc.data).is_ok();
        if !is_text {
            ledger.tally_invalid_at(doc.data, index, doc.offset);
        }
        let max = self.max_token_length.unwrap_or(usize::MAX);
        let mut pieces_cut = 0;
        let mut gap_bytes = 0;
        let mut bump = |piece: &[u8]| {
            if piece.len() > max {
                pieces_cut += 1;
                for part in cut(piece, max) {
                    add_one(&mut counts[shard_of(part)], part);
                }
            } else {
                add_one(&mut counts[shard_of(piece)], piece);
            }
        };
        self.specials.split(
            doc.data,
            |_| true,
            |part| match part {
                // Special-token text is cut out of training, not counted.
                Part::Special(_) => Ok(()),
                Part::Text(segment) => {
                    if is_text {
                        // SAFETY: the document is valid UTF-8, and special tokens (valid UTF-8
                        // themselves) match only on character boundaries, so every segment
                        // between them is valid UTF-8 too.
                        let text = unsafe { std::str::from_utf8_unchecked(segment) };
                        self.pattern.split_text_counting_gaps(text, &mut bump, &mut gap_bytes)
                    } else {
                        self.pattern.split_bytes_counting_gaps(segment, &mut bump, &mut gap_bytes)
                    }
                }
            },
        )?;
        ledger.pieces_cut += pieces_cut;
        ledger.unmatched_bytes += gap_bytes;
        Ok(())
    }
}

const SNAPSHOT_MAGIC: &[u8] = b"BBPEWC1\0";

/// Shards of the word table (a power of two).
const SHARDS: usize = 64;

fn empty_shards() -> Vec<WordCounts> {
    (0..SHARDS).map(|_| WordCounts::new()).collect()
}

/// The shard of a word: a hash with fixed keys, so a word always lands in one shard.
fn shard_of(word: &[u8]) -> usize {
    static HASHER: std::sync::OnceLock<ahash::RandomState> = std::sync::OnceLock::new();
    let hasher = HASHER.get_or_init(|| ahash::RandomState::with_seeds(1, 2, 3, 4));
    (hasher.hash_one(word) as usize) & (SHARDS - 1)
}

/// The tie bucket of a word when pruning: FNV-1a with a splitmix64 finish, spelled out
/// here because the choice must be the same on every machine and build (ahash depends
/// on CPU features and its version), or a run would not resume elsewhere.
fn tie_bucket(word: &[u8]) -> usize {
    let mut h: u64 = EMPTY_FINGERPRINT;
    for &b in word {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    ((h ^ (h >> 31)) >> 56) as usize
}

/// Adds `partial` into `shard`; returns the estimated bytes of the words it added.
fn absorb(shard: &mut WordCounts, partial: WordCounts) -> u64 {
    let mut added = 0;
    if shard.is_empty() {
        added = partial.keys().map(|w| budget::table_entry(w.len() as u64)).sum();
        *shard = partial;
        return added;
    }
    for (word, n) in partial {
        // Cannot overflow: counted occurrences are bounded by the bytes of real input
        // (pre-counted words go through `add_word`, which checks).
        match shard.get_mut(&word) {
            Some(c) => *c += n,
            None => {
                added += budget::table_entry(word.len() as u64);
                shard.insert(word, n);
            }
        }
    }
    added
}

fn add_one(counts: &mut WordCounts, piece: &[u8]) {
    match counts.get_mut(piece) {
        Some(c) => *c += 1,
        None => {
            counts.insert(piece.to_vec(), 1);
        }
    }
}

/// Cuts `piece` into parts of at most `max` bytes, at character boundaries where the
/// piece is text (a character longer than `max` is cut inside).
fn cut(piece: &[u8], max: usize) -> impl Iterator<Item = &[u8]> {
    let mut rest = piece;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut end = rest.len().min(max);
        if end < rest.len() {
            // Back off continuation bytes so a character stays whole when it can.
            let boundary = (1..=end).rev().find(|&i| rest[i] & 0xC0 != 0x80).unwrap_or(end);
            end = boundary.max(1);
        }
        let (part, after) = rest.split_at(end);
        rest = after;
        Some(part)
    })
}

fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn take_varint(input: &mut &[u8]) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let (&byte, rest) = input.split_first()?;
        *input = rest;
        value |= u64::from(byte & 0x7F).checked_shl(shift)?;
        if byte < 0x80 {
            return Some(value);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counter(max: Option<usize>) -> WordCounter {
        WordCounter::new(Pattern::new("cl100k").unwrap(), SpecialTokens::default(), max)
    }

    #[test]
    fn snapshot_round_trips() {
        let mut c = counter(None);
        let docs = [Document { data: b"hello world hello \xff", is_text: false }];
        c.add_documents(&docs, 0, Some(1)).unwrap();
        c.add_word(b"big", u64::MAX - 5).unwrap();
        let snap = c.snapshot();
        let mut d = counter(None);
        d.restore(&snap, c.ledger().clone(), c.fingerprint()).unwrap();
        assert_eq!(d.snapshot(), snap);
        assert_eq!(d.into_words(), c.into_words());
        assert!(counter(None).restore(&snap[..snap.len() - 1], Ledger::default(), 0).is_err());
    }

    #[test]
    fn long_pieces_are_cut_at_character_boundaries() {
        let parts: Vec<&[u8]> = cut("aé€😀b".as_bytes(), 4).collect();
        let expected: Vec<&[u8]> = vec![b"a\xc3\xa9", "€".as_bytes(), "😀".as_bytes(), b"b"];
        assert_eq!(parts, expected);
        let mut c = counter(Some(3));
        let docs = [Document { data: b"abcdefgh xy", is_text: true }];
        c.add_documents(&docs, 0, Some(1)).unwrap();
        assert_eq!(c.ledger().pieces_cut, 1);
        let words = c.into_words();
        assert!(words.iter().all(|(w, _)| w.len() <= 3), "{words:?}");
    }

    #[test]
    fn segments_count_as_their_whole_documents() {
        let docs: [&[u8]; 3] = [b"one line\ntwo \xff lines\nend", b"", b"x\ny\n\xfe"];
        let mut whole = counter(None);
        let as_docs: Vec<Document<'_>> =
            docs.iter().map(|d| Document { data: d, is_text: false }).collect();
        whole.add_documents(&as_docs, 0, Some(1)).unwrap();
        for cut in 1..4 {
            let mut parts = counter(None);
            for (i, doc) in docs.iter().enumerate() {
                let mut offset = 0;
                for piece in doc.chunks(cut).chain(doc.is_empty().then_some(&[][..])) {
                    let ends = offset + piece.len() == doc.len();
                    let seg = Segment { data: piece, is_text: false, offset: offset as u64, ends };
                    parts.add_segments(&[seg], i as u64, Some(1)).unwrap();
                    offset += piece.len();
                    assert_eq!(parts.in_document(), !ends);
                }
            }
            assert_eq!(parts.fingerprint(), whole.fingerprint(), "cut {cut}");
            assert_eq!(parts.ledger().documents, 3);
            assert_eq!(parts.ledger().invalid_examples, whole.ledger().invalid_examples);
        }
    }
}

#[cfg(test)]
mod budget_tests {
    use super::*;

    #[test]
    fn pruning_keeps_some_words_at_the_threshold() {
        let budget = Budget::new(64 << 20).unwrap();
        let mut c =
            WordCounter::new(Pattern::new("cl100k").unwrap(), SpecialTokens::default(), None)
                .with_budget(budget);
        for i in 0..200_000u32 {
            c.add_word(format!(" w{i:08}").as_bytes(), 1).unwrap();
        }
        assert!(c.ledger().dropped_word_mass > 0);
        assert!(c.distinct_words() > 1000, "{}", c.distinct_words());
        assert!(c.table_bytes() <= budget.table_high);
        let before = c.distinct_words();
        let estimate = c.fit_merge_budget();
        assert!(estimate <= budget.merge_bytes, "{estimate}");
        assert!(c.distinct_words() > 1000, "{before} -> {}", c.distinct_words());
    }

    /// A distinct lowercase word for each number.
    fn letters(mut n: u32) -> String {
        let mut s = String::new();
        loop {
            s.push((b'a' + (n % 26) as u8) as char);
            n /= 26;
            if n == 0 {
                return s;
            }
        }
    }

    #[test]
    fn pruning_does_not_depend_on_batches_or_threads() {
        let texts: Vec<String> = (0..3000u32)
            .map(|d| (0..60u32).map(|i| format!(" {} the", letters(d * 60 + i))).collect())
            .collect();
        let docs: Vec<Document<'_>> =
            texts.iter().map(|t| Document { data: t.as_bytes(), is_text: true }).collect();
        let run = |batch: usize, threads: usize| {
            let mut c =
                WordCounter::new(Pattern::new("cl100k").unwrap(), SpecialTokens::default(), None)
                    .with_budget(Budget::new(64 << 20).unwrap());
            for (i, chunk) in docs.chunks(batch).enumerate() {
                c.add_documents(chunk, (i * batch) as u64, Some(threads)).unwrap();
            }
            c.fit_merge_budget();
            (c.snapshot(), c.ledger().clone())
        };
        let (snapshot, ledger) = run(docs.len(), 2);
        assert!(ledger.dropped_word_mass > 0);
        assert_eq!(run(1, 1), (snapshot.clone(), ledger.clone()));
        assert_eq!(run(37, 2), (snapshot, ledger));
    }
}
