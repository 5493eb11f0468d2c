//! The merge loop's candidates: a 4-ary max-heap of (count, pair) in the contract's tie-break
//! order: the highest count first, then the lexicographically smallest (left bytes, right
//! bytes). Tokens are compared through their keys in [`ByteOrder`] (bytes only when the
//! first 8 are equal), so an entry is 16 bytes and a tie rarely reads token bytes.

use super::order::{ByteOrder, Tokens};
use super::rewrite::Pair;

/// A heap entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// The pair's count when the entry was pushed (stale once the count changed).
    pub count: u64,
    /// The pair.
    pub pair: Pair,
}

/// Children per node: 4 entries of 16 bytes are one cache line. Measured on 2 MB of
/// multilingual text at vocab 32,768: 4 children 1,187.8 M instructions, 2 1,192.5 M,
/// 8 1,208.5 M.
const ARITY: usize = 4;

/// The bytes of one heap entry; [`super::budget::merge_entry`] is derived from it.
pub const CANDIDATE_BYTES: u64 = std::mem::size_of::<Candidate>() as u64;

/// A d-ary max-heap of candidates (the merge loop queues through [`super::queue`], which
/// keeps only the highest counts here).
///
/// Entry `i` of the heap sits at slot `i + ARITY - 1` of an array of cache lines, so the
/// children of entry `i` (`ARITY * i + 1` on) fill line `i + 1` exactly: a sift reads one
/// line per level. In a plain array of 16-byte entries each group of children starts 16
/// bytes into a line and spans two.
#[derive(Default)]
pub struct CandidateHeap {
    lines: Vec<Line>,
    /// Entries held.
    len: usize,
}

/// `ARITY` entries, one cache line.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([Candidate; ARITY]);

/// What the slots before the root and past the last entry hold (never read as an entry).
const UNUSED: Candidate = Candidate { count: 0, pair: (0, 0) };

/// What ties are broken by: the tokens and their byte order.
#[derive(Clone, Copy)]
pub struct Order<'a> {
    pub keys: &'a ByteOrder,
    pub tokens: &'a Tokens,
}

/// True when `a` is merged before `b`.
#[inline(always)]
fn before(a: &Candidate, b: &Candidate, order: Order<'_>) -> bool {
    if a.count != b.count {
        return a.count > b.count;
    }
    let (keys, tokens) = (order.keys, order.tokens);
    keys.cmp(a.pair.0, b.pair.0, tokens).then_with(|| keys.cmp(a.pair.1, b.pair.1, tokens)).is_lt()
}

impl CandidateHeap {
    /// The heap of `entries` (built in linear time, with no copy of them on the way).
    pub fn of(entries: impl Iterator<Item = Candidate>, order: Order<'_>) -> Self {
        let mut heap = Self::default();
        let (least, _) = entries.size_hint();
        heap.lines.reserve(least.div_ceil(ARITY) + 1);
        for entry in entries {
            heap.append(entry);
        }
        let n = heap.len;
        if n > 1 {
            for i in (0..=(n - 2) / ARITY).rev() {
                heap.sift_down(i, order);
            }
        }
        heap
    }

    #[inline(always)]
    fn get(&self, i: usize) -> Candidate {
        let slot = i + ARITY - 1;
        self.lines[slot / ARITY].0[slot % ARITY]
    }

    #[inline(always)]
    fn set(&mut self, i: usize, entry: Candidate) {
        let slot = i + ARITY - 1;
        self.lines[slot / ARITY].0[slot % ARITY] = entry;
    }

    /// Puts `entry` past the last one, where it may not belong yet.
    fn append(&mut self, entry: Candidate) {
        // The new entry's slot is the first of a line not there yet.
        let slot = self.len + ARITY - 1;
        if slot / ARITY == self.lines.len() {
            self.lines.push(Line([UNUSED; ARITY]));
        }
        self.len += 1;
        self.set(self.len - 1, entry);
    }

    pub fn push(&mut self, entry: Candidate, order: Order<'_>) {
        let mut i = self.len;
        self.append(entry);
        while i > 0 {
            let parent = (i - 1) / ARITY;
            let above = self.get(parent);
            if !before(&entry, &above, order) {
                break;
            }
            self.set(i, above);
            i = parent;
        }
        self.set(i, entry);
    }

    /// Takes the entry merged first.
    pub fn pop(&mut self, order: Order<'_>) -> Option<Candidate> {
        let top = *self.peek()?;
        self.len -= 1;
        if self.len > 0 {
            self.set(0, self.get(self.len));
            self.sift_down(0, order);
        }
        Some(top)
    }

    /// Entries held.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when no entry is held.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Puts `entries` in, when none is held (built in linear time).
    pub fn fill(&mut self, entries: impl Iterator<Item = Candidate>, order: Order<'_>) {
        debug_assert!(self.is_empty());
        *self = Self::of(entries, order);
    }

    /// The entries that follow the first (its children: one of them, or the entry
    /// that replaces it, comes first next).
    pub fn after_first(&self) -> &[Candidate] {
        match self.lines.get(1) {
            Some(line) => &line.0[..self.len.saturating_sub(1).min(ARITY)],
            None => &[],
        }
    }

    /// The entry merged first, if any.
    pub fn peek(&self) -> Option<&Candidate> {
        (self.len > 0).then(|| &self.lines[0].0[ARITY - 1])
    }

    /// Replaces the entry merged first by `entry`, which must not come before it (a
    /// stale entry's lower count): one sift instead of a pop and a push.
    pub fn replace_top(&mut self, entry: Candidate, order: Order<'_>) {
        debug_assert!(self.peek().is_some_and(|top| !before(&entry, top, order)));
        self.set(0, entry);
        self.sift_down(0, order);
    }

    /// Moves the entry at `i` down to its place.
    fn sift_down(&mut self, mut i: usize, order: Order<'_>) {
        let n = self.len;
        let entry = self.get(i);
        loop {
            let first = i * ARITY + 1;
            if first >= n {
                break;
            }
            // The children of `i` are line `i + 1`.
            let children = &self.lines[i + 1].0[..(n - first).min(ARITY)];
            let (mut best, mut best_entry) = (0, children[0]);
            for (k, child) in children.iter().enumerate().skip(1) {
                if before(child, &best_entry, order) {
                    (best, best_entry) = (k, *child);
                }
            }
            if !before(&best_entry, &entry, order) {
                break;
            }
            self.set(i, best_entry);
            i = first + best;
        }
        self.set(i, entry);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::Vocab;

    /// Pops come out by count, then by the tokens' bytes, whether pushed or built at once.
    #[test]
    fn pops_follow_the_tie_break_rule() {
        let mut tokens: Tokens = Vocab::bytes_only().growth(&[]);
        let ab = tokens.join(97, 98).unwrap().token;
        // "b", "a", "ab", "c": byte order a < ab < b < c.
        let ids = [98, 97, ab, 99];
        let keys = ByteOrder::of(&tokens);
        let order = Order { keys: &keys, tokens: &tokens };
        let mut seed = 5u64;
        let mut entries = Vec::new();
        for _ in 0..300 {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let r = seed >> 33;
            let pair = (ids[(r % 4) as usize], ids[((r / 4) % 4) as usize]);
            entries.push(Candidate { count: (r / 16) % 5, pair });
        }
        let bytes = |id: u32| tokens.bytes(id).clone();
        let mut want = entries.clone();
        want.sort_by(|a, b| {
            b.count.cmp(&a.count).then_with(|| {
                (bytes(a.pair.0), bytes(a.pair.1)).cmp(&(bytes(b.pair.0), bytes(b.pair.1)))
            })
        });
        let mut built = CandidateHeap::of(entries.iter().copied(), order);
        let mut pushed = CandidateHeap::default();
        for &e in &entries {
            pushed.push(e, order);
        }
        // Replacing the top by a lower entry equals popping it and pushing that one.
        let mut replaced = CandidateHeap::of(entries.iter().copied(), order);
        let mut popped_pushed = CandidateHeap::of(entries.iter().copied(), order);
        for _ in 0..100 {
            let top = *replaced.peek().unwrap();
            let lower = Candidate { count: top.count.saturating_sub(1), pair: top.pair };
            replaced.replace_top(lower, order);
            popped_pushed.pop(order);
            popped_pushed.push(lower, order);
        }
        let drain = |heap: &mut CandidateHeap| -> Vec<Candidate> {
            std::iter::from_fn(|| heap.pop(order)).collect()
        };
        assert_eq!(drain(&mut replaced), drain(&mut popped_pushed));
        // The next first entry after a pop is always one `after_first` named.
        let mut heap = CandidateHeap::of(entries.iter().copied(), order);
        while heap.len() > 1 {
            let next = heap.after_first().to_vec();
            heap.pop(order);
            assert!(next.contains(heap.peek().unwrap()), "{next:?}");
        }
        for heap in [&mut built, &mut pushed] {
            let popped: Vec<Candidate> = std::iter::from_fn(|| heap.pop(order)).collect();
            assert_eq!(popped, want);
        }
    }
}
