//! Counting one batch on all cores: the batch is cut into items of consecutive segments
//! (`ordered::ranges`, by bytes), handed out in order by `ordered::run` to the pool and
//! the calling thread, and each worker counts every item it takes into one partial table
//! of its own, so a batch makes as many partial tables as it has workers (not one per
//! chunk), each folded into the run's table once, at the end. The calling thread may make
//! an item's segments ready just before it is handed out (the binding reads a non-ASCII
//! `str` as UTF-8 there), so that work overlaps the counting instead of preceding it.
//!
//! Which worker counts which item changes from run to run; the counts cannot: they are
//! exact sums, and the table's contents (never its layout) are all any reader sees. The
//! ledger is taken item by item, in order. On an error nothing of the batch is counted.

use std::ops::Range;
use std::sync::{Mutex, PoisonError};

use rayon::prelude::*;

use super::counter::WordCounter;
use super::table::Partial;
use crate::document::Segment;
use crate::error::{Error, Result};
use crate::ledger::Ledger;
use crate::{ordered, parallel};

/// A batch cut into items for [`WordCounter::count_items`].
pub struct Items {
    /// The segments of each item, consecutive and in order.
    ranges: Vec<Range<usize>>,
    /// The document index of each item's first segment.
    first_documents: Vec<u64>,
    /// Segments in the batch.
    segments: usize,
    /// The weights summed (bytes, or for text not read yet its characters).
    weight: u64,
}

impl Items {
    /// Items over segments given as (weight, whether its document ends with it), in
    /// order; `first_index` is the document index of the first.
    pub fn new(segments: &[(usize, bool)], first_index: u64, threads: usize) -> Self {
        let ranges = ordered::ranges(segments.iter().map(|s| s.0), threads);
        let mut first_documents = Vec::with_capacity(ranges.len());
        let mut index = first_index;
        for range in &ranges {
            first_documents.push(index);
            index += segments[range.clone()].iter().filter(|s| s.1).count() as u64;
        }
        let weight = segments.iter().map(|s| s.0 as u64).sum();
        Self { ranges, first_documents, segments: segments.len(), weight }
    }

    /// [`Self::new`] over segments weighed by their bytes.
    pub fn of_segments(segments: &[Segment<'_>], first_index: u64, threads: usize) -> Self {
        let weights: Vec<(usize, bool)> = segments.iter().map(|s| (s.data.len(), s.ends)).collect();
        Self::new(&weights, first_index, threads)
    }

    /// The segments of item `i`.
    pub fn range(&self, i: usize) -> Range<usize> {
        self.ranges[i].clone()
    }

    /// The items.
    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }
}

impl WordCounter {
    /// Counts segments in parallel (whole documents, or parts of documents read in chunks); on error nothing of them is counted.
    pub(super) fn count_segments(
        &mut self,
        segments: &[Segment<'_>],
        first_index: u64,
        threads: Option<usize>,
    ) -> Result<()> {
        let items = Items::of_segments(
            segments,
            first_index,
            parallel::pool(threads).current_num_threads(),
        );
        self.count_items(&items, threads, |_| Ok(()), |j| segments[j])
    }

    /// Counts the segments of `items` (segment `j` is `segment(j)`, readable once
    /// `prepare` was called for its item: `prepare(i)` runs on the calling thread, for
    /// each item in order, before any worker reads it). On error nothing of the batch is
    /// counted: an error from `prepare` is returned as is; a failing document, the first
    /// in order, as a pattern error naming it.
    pub fn count_items<'s>(
        &mut self,
        items: &Items,
        threads: Option<usize>,
        prepare: impl FnMut(usize) -> Result<()>,
        segment: impl Fn(usize) -> Segment<'s> + Sync,
    ) -> Result<()> {
        if items.is_empty() {
            return Ok(());
        }
        let pool = parallel::pool(threads);
        let workers = pool.current_num_threads().clamp(1, items.len()) as u64;
        // Each worker's partial is sized for its share of the batch.
        let share = items.weight / workers;
        let expected = (share.saturating_mul(self.words_per_mib) >> 20) as usize;
        let partials: Mutex<Vec<Partial>> = Mutex::new(Vec::new());
        let take_partial = || {
            let spare = partials.lock().unwrap_or_else(PoisonError::into_inner).pop();
            spare.unwrap_or_else(|| Partial::with_capacity(expected))
        };
        let words = &self.words;
        let count_item = |i: usize| -> Result<Ledger> {
            let mut counts = take_partial();
            let mut ledger = Ledger::default();
            let mut index = items.first_documents[i];
            let mut result = Ok(());
            for j in items.ranges[i].clone() {
                let seg = segment(j);
                result = words
                    .count(&seg, index, &mut counts, &mut ledger)
                    .map_err(|e| Error::PatternMatch { document: index, message: e.to_string() });
                if result.is_err() {
                    break;
                }
                index += u64::from(seg.ends);
            }
            partials.lock().unwrap_or_else(PoisonError::into_inner).push(counts);
            result.map(|()| ledger)
        };
        let mut ledger = Ledger::default();
        ordered::run(&pool, items.len(), prepare, count_item, |ready| {
            for item in ready {
                ledger.absorb(&item?);
            }
            Ok(())
        })?;
        let mut partials = partials.into_inner().unwrap_or_else(PoisonError::into_inner);
        let segments: Vec<Segment<'s>> = (0..items.segments).map(segment).collect();
        let batch_bytes: u64 = segments.iter().map(|s| s.data.len() as u64).sum();
        // Batches of a run are alike: the next one's partials are sized after this one's.
        if batch_bytes >= 1 << 20 {
            let distinct: u64 =
                pool.install(|| partials.par_iter_mut().map(|p| p.distinct() as u64).sum());
            self.words_per_mib = (distinct << 20) / batch_bytes;
        }
        self.ledger.absorb(&ledger);
        self.ledger.documents += segments.iter().filter(|s| s.ends).count() as u64;
        self.ledger.bytes += batch_bytes;
        // The fingerprint reads the segments while the fold runs: neither waits for the
        // other (the fingerprint alone was about 1% of counting code, on one thread).
        let (table, fingerprint) = (&mut self.table, &mut self.fingerprint);
        pool.install(|| {
            rayon::join(
                || table.fold(&pool, partials),
                || segments.iter().for_each(|seg| fingerprint.add(seg)),
            )
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::Document;
    use crate::pretokenize::Pattern;
    use crate::special::SpecialTokens;

    /// Backtracks without end on a run of "a" not followed by "b": fancy-regex gives up.
    const PATHOLOGICAL: &str = r"(?:(a+)+\1)+b|\S|\s";

    fn counter(pattern: &str) -> WordCounter {
        WordCounter::new(Pattern::new(pattern).unwrap(), SpecialTokens::default(), None)
    }

    fn documents() -> Vec<Vec<u8>> {
        (0..300u32)
            .map(|i| {
                let mut d = format!("doc {i} says {} again\n", "word ".repeat(i as usize % 40));
                if i % 7 == 0 {
                    d.push_str("caf\u{e9} \u{4e16}\u{754c} ");
                }
                let mut d = d.into_bytes();
                if i % 11 == 0 {
                    d.extend_from_slice(b"\xff bad \xc0");
                }
                d
            })
            .collect()
    }

    fn segments(docs: &[Vec<u8>]) -> Vec<Segment<'_>> {
        let is_text = |d: &[u8]| std::str::from_utf8(d).is_ok();
        docs.iter().map(|d| Segment::from(&Document { data: d, is_text: is_text(d) })).collect()
    }

    /// Counts in items cut for `threads`, on `threads` threads, preparing each item
    /// (recorded) before it is read.
    fn count_in_items(c: &mut WordCounter, segs: &[Segment<'_>], threads: usize) -> Result<()> {
        let items = Items::of_segments(segs, 5, threads);
        let prepared: Vec<std::sync::atomic::AtomicBool> =
            (0..items.len()).map(|_| Default::default()).collect();
        let item_of = |j: usize| (0..items.len()).find(|&i| items.range(i).contains(&j)).unwrap();
        let prepare = |i: usize| {
            prepared[i].store(true, std::sync::atomic::Ordering::SeqCst);
            Ok(())
        };
        c.count_items(&items, Some(threads), prepare, |j| {
            assert!(prepared[item_of(j)].load(std::sync::atomic::Ordering::SeqCst));
            segs[j]
        })
    }

    /// Any thread count and cutting into items gives the same words, counts, ledger and
    /// fingerprint as counting the documents one by one on one thread.
    #[test]
    fn counts_do_not_depend_on_threads_or_items() {
        let docs = documents();
        let segs = segments(&docs);
        let mut one_by_one = counter("cl100k");
        for (i, seg) in segs.iter().enumerate() {
            one_by_one.add_segments(std::slice::from_ref(seg), 5 + i as u64, Some(1)).unwrap();
        }
        for threads in [1, 2, 3, 8] {
            let mut c = counter("cl100k");
            count_in_items(&mut c, &segs, threads).unwrap();
            assert!(Items::new(&[(1, true); 300], 0, threads).len() > 1, "several items");
            assert_eq!(c.snapshot(), one_by_one.snapshot(), "{threads} threads");
            assert_eq!(c.ledger(), one_by_one.ledger(), "{threads} threads");
            assert_eq!(c.fingerprint(), one_by_one.fingerprint());
            assert_eq!(c.table_bytes(), one_by_one.table_bytes());
        }
    }

    #[test]
    fn items_cover_the_segments_in_order_with_their_document_numbers() {
        // Documents of two segments each: the second ends them.
        let weights: Vec<(usize, bool)> = (0..100).map(|j| (10 + j % 3, j % 2 == 1)).collect();
        let items = Items::new(&weights, 40, 2);
        assert!(items.len() > 1);
        let mut next = 0;
        for i in 0..items.len() {
            let range = items.range(i);
            assert_eq!(range.start, next);
            assert!(!range.is_empty());
            assert_eq!(items.first_documents[i], 40 + (range.start as u64).div_ceil(2));
            next = range.end;
        }
        assert_eq!(next, 100);
        assert!(Items::new(&[], 0, 2).is_empty());
    }

    /// A failing document: the first in order is named, and nothing of the batch is
    /// counted, on any thread count.
    #[test]
    fn a_failing_document_counts_nothing_of_the_batch() {
        let mut docs: Vec<Vec<u8>> = (0..200).map(|i| format!("text {i} ").into_bytes()).collect();
        let bad = [b'a'; 300].iter().chain(b"c").copied().collect::<Vec<u8>>();
        docs[120] = bad.clone();
        docs[180] = bad;
        let segs = segments(&docs);
        for threads in [1, 2, 4] {
            let mut c = counter(PATHOLOGICAL);
            c.add_documents(&[Document { data: b"kept", is_text: true }], 0, Some(1)).unwrap();
            let before = (c.snapshot(), c.ledger().clone(), c.fingerprint());
            let err = count_in_items(&mut c, &segs, threads).unwrap_err();
            let Error::PatternMatch { document, .. } = err else { panic!("{err:?}") };
            assert_eq!(document, 5 + 120, "{threads} threads");
            assert_eq!((c.snapshot(), c.ledger().clone(), c.fingerprint()), before);
        }
    }

    /// An error while preparing an item stops the batch: nothing of it is counted.
    #[test]
    fn a_failing_preparation_counts_nothing_of_the_batch() {
        let docs = documents();
        let segs = segments(&docs);
        for threads in [1, 2] {
            let items = Items::of_segments(&segs, 0, threads);
            let fail_at = items.len() / 2;
            let mut c = counter("cl100k");
            let prepare = |i: usize| {
                if i == fail_at {
                    return Err(Error::BadInput(format!("item {i}")));
                }
                Ok(())
            };
            let err = c.count_items(&items, Some(threads), prepare, |j| segs[j]).unwrap_err();
            assert!(matches!(&err, Error::BadInput(m) if *m == format!("item {fail_at}")));
            assert_eq!(c.distinct_words(), 0);
            assert_eq!(c.documents(), 0);
            assert_eq!(c.fingerprint(), counter("cl100k").fingerprint());
        }
    }
}
