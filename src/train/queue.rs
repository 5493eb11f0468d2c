//! The merge loop's queue of candidates: a heap of the highest counts, and every lower
//! count set aside in bands by count, unordered, until the heap runs out.
//!
//! Most queued pairs have counts far below the one being merged (a pair is queued when
//! its count reaches `min_frequency`), so in one heap of them all each pop and requeue
//! sifts through levels of entries that will not come up for thousands of merges: on 100
//! MB of multilingual text at 65,536, a heap of 760 k entries (12 MB) by merge 32,768. Here
//! the heap holds only the bands at or above the current one, and a band joins it whole
//! when the heap is empty. Entries keep the lazy heap's rule (a count may be stale, never
//! below the pair's current one), so an entry in a lower band is below every entry in
//! the heap, and the order of pops is the heap's alone.

use super::candidate::{Candidate, CandidateHeap, Order};

/// Bands per doubling of the count: counts below `2^BAND_BITS` have a band each; above,
/// each power of two is cut into `2^BAND_BITS` equal bands.
const BAND_BITS: u32 = 2;

/// The band of `count`: never lower for a higher count.
#[inline]
fn band(count: u64) -> usize {
    let top = 63 - (count | 1).leading_zeros();
    if top < BAND_BITS {
        return count as usize;
    }
    let step = top - BAND_BITS;
    (((step + 1) << BAND_BITS) | ((count >> step) as u32 & ((1 << BAND_BITS) - 1))) as usize
}

/// The candidates to merge, in the contract's order (see [`CandidateHeap`]).
#[derive(Default)]
pub struct Candidates {
    /// Every entry in a band at or above `level`.
    heap: CandidateHeap,
    /// By band below `level`: the entries of that band, in no order.
    below: Vec<Vec<Candidate>>,
    /// The least band the heap holds.
    level: usize,
}

impl Candidates {
    /// The queue of `entries`: the highest band in the heap, the rest set aside.
    pub fn of(entries: impl Iterator<Item = Candidate>, order: Order<'_>) -> Self {
        let mut queue = Self { level: usize::MAX, ..Self::default() };
        for entry in entries {
            queue.set_aside(entry);
        }
        queue.refill(order);
        queue
    }

    /// Entries held, in the heap and set aside.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.heap.len() + self.below.iter().map(Vec::len).sum::<usize>()
    }

    fn set_aside(&mut self, entry: Candidate) {
        let b = band(entry.count);
        if b >= self.below.len() {
            self.below.resize_with(b + 1, Vec::new);
        }
        self.below[b].push(entry);
    }

    /// Moves the highest band set aside into the heap, which must be empty.
    fn refill(&mut self, order: Order<'_>) {
        let Some(b) = self.below.iter().rposition(|band| !band.is_empty()) else {
            return;
        };
        let entries = std::mem::take(&mut self.below[b]);
        self.heap.fill(entries.into_iter(), order);
        self.below.truncate(b);
        self.level = b;
    }

    /// Queues `entry`.
    pub fn push(&mut self, entry: Candidate, order: Order<'_>) {
        if band(entry.count) >= self.level {
            self.heap.push(entry, order);
        } else {
            self.set_aside(entry);
        }
    }

    /// The entry merged first, if any (a band set aside joins the heap when it is empty).
    pub fn peek(&mut self, order: Order<'_>) -> Option<Candidate> {
        if self.heap.is_empty() {
            self.refill(order);
        }
        self.heap.peek().copied()
    }

    /// The entries that may come first once the first is taken or requeued.
    pub fn after_first(&self) -> &[Candidate] {
        self.heap.after_first()
    }

    /// Takes the entry merged first (call after [`Candidates::peek`]).
    pub fn pop(&mut self, order: Order<'_>) -> Option<Candidate> {
        self.heap.pop(order)
    }

    /// Replaces the entry merged first (after [`Candidates::peek`]) by `entry`, which
    /// must not come before it (a stale entry's lower count).
    pub fn replace_top(&mut self, entry: Candidate, order: Order<'_>) {
        if band(entry.count) >= self.level {
            self.heap.replace_top(entry, order);
        } else {
            self.heap.pop(order);
            self.set_aside(entry);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::Rng;
    use crate::train::order::{ByteOrder, Tokens};
    use crate::vocab::Vocab;

    #[test]
    fn bands_rise_with_the_count() {
        let counts = (0..5_000).chain((0..64).flat_map(|s| [1u64 << s, (1 << s) - 1, !0 >> s]));
        let mut counts: Vec<u64> = counts.collect();
        counts.sort_unstable();
        assert!(counts.windows(2).all(|w| band(w[0]) <= band(w[1])));
        assert_eq!((0..4).map(band).collect::<Vec<_>>(), [0, 1, 2, 3]);
        // Four bands per doubling past 4: 4-4, 5-5, 6-6, 7-7, 8-9, 10-11, ...
        assert_eq!([4, 5, 7, 8, 9, 10, 15, 16].map(band), [4, 5, 7, 8, 8, 9, 11, 12]);
        assert!(band(u64::MAX) < 256);
    }

    /// Pushes, pops and requeues in any mix come out as from one sorted list, whichever
    /// band each entry lands in: a model of the merge loop's use, with counts from a few
    /// to millions, pushed both above and below the heap's band.
    #[test]
    fn pops_follow_one_order_across_bands() {
        let mut tokens: Tokens = Vocab::bytes_only().growth(&[]);
        let ab = tokens.join(97, 98).unwrap().token;
        let keys = ByteOrder::of(&tokens);
        let order = Order { keys: &keys, tokens: &tokens };
        let ids = [98, 97, ab, 99, 32];
        let bytes = |id: u32| tokens.bytes(id).clone();
        let key = |c: &Candidate| (std::cmp::Reverse(c.count), bytes(c.pair.0), bytes(c.pair.1));
        let mut rng = Rng(11);
        let entry = |rng: &mut Rng| {
            let pair = (ids[rng.below(5)], ids[rng.below(5)]);
            let count = match rng.below(3) {
                0 => rng.below(20),
                1 => rng.below(5_000),
                _ => rng.below(1 << 30) * 1_000,
            } as u64;
            Candidate { count, pair }
        };
        let first: Vec<Candidate> = (0..2_000).map(|_| entry(&mut rng)).collect();
        let mut queue = Candidates::of(first.iter().copied(), order);
        let mut model = first;
        for step in 0..20_000 {
            model.sort_by_key(key);
            let top = queue.peek(order);
            assert_eq!(top.map(|c| key(&c)), model.first().map(key), "step {step}");
            match rng.below(4) {
                0 => {
                    let e = entry(&mut rng);
                    queue.push(e, order);
                    model.push(e);
                }
                1 if top.is_some_and(|t| t.count > 0) => {
                    let t = top.unwrap();
                    let lower = Candidate { count: rng.below(t.count as usize) as u64, ..t };
                    queue.replace_top(lower, order);
                    model[0] = lower;
                }
                _ => {
                    let popped = queue.pop(order);
                    assert_eq!(popped.map(|c| key(&c)), model.first().map(key));
                    if !model.is_empty() {
                        model.remove(0);
                    }
                }
            }
            assert_eq!(queue.len(), model.len());
        }
    }
}
