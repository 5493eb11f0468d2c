//! Counting under a memory budget: a batch is cut at checkpoints that depend only on the
//! documents (document ends reaching a multiple of the budget's step, and words inside a
//! long document reaching one), and the word table is pruned at each.

use super::budget::{self, Budget};
use super::counter::WordCounter;
use super::prune::Dropped;
use super::table::{Partial, WordTable};
use crate::document::Segment;
use crate::error::{Error, Result};
use crate::ledger::Ledger;
use crate::parallel;

impl WordCounter {
    /// [`WordCounter::add_segments`] under a budget with checkpoints every `every` bytes.
    pub(super) fn count_at_checkpoints(
        &mut self,
        segments: &[Segment<'_>],
        first_index: u64,
        every: u64,
        threads: Option<usize>,
    ) -> Result<()> {
        // Cut the batch at checkpoints: after the document whose end reaches the next
        // multiple of `every` input bytes, wherever batches or segments happen to start;
        // a segment holding an in-document checkpoint is counted on its own.
        let mut start = 0;
        let mut index = first_index;
        while start < segments.len() {
            // Checkpoints fall at document ends, however documents were cut into segments.
            let mut bytes = self.ledger.bytes;
            let mut last_end = bytes - self.fingerprint.open_bytes();
            let (mut end, mut reached, mut long) = (start, false, false);
            while end < segments.len() && !reached {
                long = spans_a_multiple(&segments[end], every);
                if long && end > start {
                    long = false;
                    break;
                }
                bytes += segments[end].data.len() as u64;
                if segments[end].ends {
                    reached = bytes / every > last_end / every;
                    last_end = bytes;
                }
                end += 1;
                if long {
                    break;
                }
            }
            let part = &segments[start..end];
            if long {
                self.count_with_checkpoints(&part[0], index, every, threads)?;
            } else {
                self.count_segments(part, index, threads)?;
            }
            index += part.iter().filter(|s| s.ends).count() as u64;
            if reached {
                self.checkpoint();
            }
            start = end;
        }
        Ok(())
    }

    /// Counts one segment that spans a multiple of `every` bytes of its document, with a
    /// checkpoint right after each word whose bytes reach such a multiple (start < m <=
    /// end, in document offsets). Words are the pattern's pieces of the whole document
    /// (segments are cut only where they stay the same), so these points depend only on
    /// the document: a long document is pruned inside, whatever its segments. A word
    /// longer than the budget's `hold_bytes` is refused before it is added. On error the
    /// document's words counted so far stay in the table, so the counter is marked as
    /// inside a document (no store checkpoint is taken from it).
    fn count_with_checkpoints(
        &mut self,
        seg: &Segment<'_>,
        index: u64,
        every: u64,
        threads: Option<usize>,
    ) -> Result<()> {
        let budget = self.budget.expect("called under a budget");
        let pool = parallel::pool(threads);
        let base = seg.data.as_ptr() as usize;
        let mut partial = Partial::default();
        let mut ledger = Ledger::default();
        let (mut too_long, mut folded) = (None, false);
        let (table, own_ledger) = (&mut self.table, &mut self.ledger);
        let split = self.words.count_each(seg, index, &mut ledger, |word| {
            if too_long.is_some() {
                return;
            }
            let start = seg.offset + (word.as_ptr() as usize - base) as u64;
            let len = word.len() as u64;
            if len > budget.hold_bytes {
                too_long = Some((start, len));
                return;
            }
            partial.add_one(word);
            if (start + len) / every > start / every {
                table.fold(&pool, vec![std::mem::take(&mut partial)]);
                checkpoint(table, own_ledger, &budget);
                folded = true;
            }
        });
        self.partial_document = folded;
        split.map_err(|e| Error::PatternMatch { document: index, message: e.to_string() })?;
        if let Some((start, len)) = too_long {
            return Err(Error::BadInput(format!(
                "document {index} has a piece of {len} bytes (at byte {start}), longer than \
                 one word may be under this memory_limit ({} bytes): pass max_token_length \
                 to cut long pieces, or raise memory_limit",
                budget.hold_bytes
            )));
        }
        self.partial_document = false;
        self.table.fold(&pool, vec![partial]);
        self.ledger.absorb(&ledger);
        self.ledger.documents += u64::from(seg.ends);
        self.ledger.bytes += seg.data.len() as u64;
        self.fingerprint.add(seg);
        Ok(())
    }

    /// At a checkpoint: prunes the table when its estimate is above the high mark.
    pub(super) fn checkpoint(&mut self) {
        if let Some(b) = self.budget {
            checkpoint(&mut self.table, &mut self.ledger, &b);
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
        self.table.cost(&parallel::pool(None), budget::merge_entry)
    }

    fn prune(&mut self, target: u64, cost: fn(u64) -> u64) {
        prune(&mut self.table, &mut self.ledger, target, cost);
    }
}

/// True when `seg` spans a multiple of `every` bytes of its document (`offset < m <=
/// offset + len`): only then can a word in it hold an in-document checkpoint.
fn spans_a_multiple(seg: &Segment<'_>, every: u64) -> bool {
    (seg.offset + seg.data.len() as u64) / every > seg.offset / every
}

/// A checkpoint: prunes the table when its estimate is above the budget's high mark.
fn checkpoint(table: &mut WordTable, ledger: &mut Ledger, budget: &Budget) {
    if table.estimate() > budget.table_high {
        prune(table, ledger, budget.table_low, budget::table_entry);
    }
}

/// Prunes the table (see [`WordTable::prune`]), booking what it drops in the ledger and
/// giving the freed memory back.
fn prune(table: &mut WordTable, ledger: &mut Ledger, target: u64, cost: fn(u64) -> u64) {
    let Some(Dropped { mass, bytes }) = table.prune(&parallel::pool(None), target, cost) else {
        return;
    };
    ledger.dropped_word_mass = ledger.dropped_word_mass.saturating_add(mass);
    ledger.dropped_bytes = ledger.dropped_bytes.saturating_add(bytes);
    budget::release_free_memory();
}

#[cfg(test)]
mod budget_tests {
    use super::*;
    use crate::document::Document;
    use crate::pretokenize::Pattern;
    use crate::special::SpecialTokens;

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

#[cfg(test)]
mod long_document_tests {
    use super::*;
    use crate::document::Document;
    use crate::pretokenize::Pattern;
    use crate::read::segments;
    use crate::read::split::{Batch, Delimit, Splitter};
    use crate::special::SpecialTokens;

    /// A budget small enough to prune inside a few kilobytes of text.
    fn tiny_budget() -> Budget {
        Budget {
            limit: 64 << 20,
            table_high: 40 * budget::table_entry(9),
            table_low: 20 * budget::table_entry(9),
            checkpoint_every: 300,
            batch_bytes: 300,
            merge_bytes: u64::MAX,
            hold_bytes: 1 << 20,
        }
    }

    fn counter(pattern: &str, budget: Option<Budget>) -> WordCounter {
        let c = WordCounter::new(Pattern::new(pattern).unwrap(), SpecialTokens::default(), None);
        match budget {
            Some(b) => c.with_budget(b),
            None => c,
        }
    }

    /// Lines of distinct words (a safe cut after every line), some repeated.
    fn long_document() -> Vec<u8> {
        let mut text = String::new();
        for i in 0..2000u32 {
            text.push_str(&format!("w{i:05} the z{} ", i % 7));
            if i % 5 == 4 {
                text.push_str("end.\n");
            }
        }
        text.push_str("last");
        text.into_bytes()
    }

    fn state(c: &WordCounter) -> (Vec<u8>, Ledger) {
        (c.snapshot(), c.ledger().clone())
    }

    #[test]
    fn long_documents_are_pruned_inside_at_points_fixed_by_the_document() {
        let doc = long_document();
        let mut whole = counter("cl100k", Some(tiny_budget()));
        whole.add_documents(&[Document { data: &doc, is_text: true }], 0, Some(2)).unwrap();
        let expected = state(&whole);
        assert!(expected.1.dropped_word_mass > 0, "the budget prunes");
        for chunk in [3, 64, 1000, 1 << 20] {
            for threads in [1, 2] {
                let mut splitter = Splitter::new(Delimit::Whole, true, chunk);
                let mut batch = Batch::default();
                for piece in doc.chunks(chunk) {
                    splitter.push(piece, &mut batch);
                }
                splitter.finish(&mut batch);
                assert_eq!(batch.spans.len() > 1, chunk < doc.len(), "chunk {chunk}");
                let mut parts = counter("cl100k", Some(tiny_budget()));
                // One call per segment, and all segments in one call.
                for seg in segments(&batch) {
                    parts.add_segments(&[seg], 0, Some(threads)).unwrap();
                }
                assert_eq!(state(&parts), expected, "chunk {chunk}, threads {threads}");
                let mut at_once = counter("cl100k", Some(tiny_budget()));
                at_once.add_segments(&segments(&batch), 0, Some(threads)).unwrap();
                assert_eq!(state(&at_once), expected, "chunk {chunk}, threads {threads}");
            }
        }
    }

    #[test]
    fn without_pruning_a_long_document_counts_exactly() {
        let doc = long_document();
        let docs = [Document { data: &doc, is_text: false }];
        let mut roomy = tiny_budget();
        roomy.table_high = u64::MAX;
        for pattern in ["cl100k", r"\w+| ?[^\w\s]+|\s+"] {
            let mut limited = counter(pattern, Some(roomy));
            limited.add_documents(&docs, 0, Some(2)).unwrap();
            let mut exact = counter(pattern, None);
            exact.add_documents(&docs, 0, Some(2)).unwrap();
            assert_eq!(state(&limited), state(&exact), "{pattern}");
            assert_eq!(limited.ledger().dropped_word_mass, 0);
        }
    }

    #[test]
    fn custom_patterns_are_pruned_inside_a_document_too() {
        let doc = long_document();
        let mut c = counter(r"\w+|\s+|.", Some(tiny_budget()));
        c.add_documents(&[Document { data: &doc, is_text: true }], 0, Some(1)).unwrap();
        assert!(c.ledger().dropped_word_mass > 0);
        assert!(c.table_bytes() <= tiny_budget().table_high);
    }

    #[test]
    fn a_word_longer_than_the_budget_holds_is_refused() {
        let mut b = tiny_budget();
        b.hold_bytes = 5000;
        let mut doc = long_document();
        let at = doc.len() as u64;
        doc.extend_from_slice(b" ");
        doc.extend(std::iter::repeat_n(b'x', 6000));
        let mut c = counter("cl100k", Some(b));
        let err = c.add_documents(&[Document { data: &doc, is_text: true }], 7, Some(1));
        let Err(Error::BadInput(message)) = err else { panic!("{err:?}") };
        let want = format!("document 7 has a piece of 6001 bytes (at byte {at})");
        assert!(message.contains(&want), "{message}");
        // Words of the failed document were folded in at its checkpoints: no store
        // checkpoint may be taken from this state.
        assert!(c.in_document());
        assert_eq!(c.documents(), 0);
        // A short document with a long word fails before anything is folded in.
        let mut c = counter("cl100k", Some(b));
        let long = vec![b'y'; 6000];
        assert!(c.add_documents(&[Document { data: &long, is_text: true }], 0, Some(1)).is_err());
        assert!(!c.in_document());
    }
}
