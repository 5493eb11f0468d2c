//! The counted words handed from the word table to the merge loop: every word's bytes in
//! one buffer and one entry (where, how long, how often) per word, the entries sorted by
//! the words' bytes. One allocation for all words instead of a vector each, which the
//! merge loop's arena would copy and free one by one.

use crate::hash_parts::prefix_key;

/// Where a word's bytes are in the buffer, and how often it occurs.
#[derive(Clone, Copy)]
struct Entry {
    start: u64,
    count: u64,
    len: u64,
}

/// The bytes of one entry; [`super::budget::merge_entry`] is derived from it.
pub const ENTRY_BYTES: u64 = std::mem::size_of::<Entry>() as u64;

/// Distinct words and their counts, in byte order (equal tables give equal lists).
#[derive(Clone, Default)]
pub struct SortedWords {
    /// All words' bytes, in the order they were added (not sorted).
    bytes: Vec<u8>,
    /// One entry per word, sorted by the word's bytes once [`SortedWords::sort`] ran.
    entries: Vec<Entry>,
}

impl SortedWords {
    /// The words of `groups` (all distinct; call [`SortedWords::sort`] after), copied on
    /// `pool` a group at a time, each into its own part of the buffers: group `g` holds
    /// `sizes[g]` = (words, bytes), and `fill` hands over exactly those, then drops the
    /// group (so each is freed as soon as its words are out).
    pub fn gathered<G: Send>(
        groups: Vec<G>,
        sizes: &[(usize, usize)],
        fill: impl Fn(G, &mut dyn FnMut(&[u8], u64)) + Sync,
        pool: &rayon::ThreadPool,
    ) -> Self {
        use rayon::prelude::*;
        assert_eq!(groups.len(), sizes.len(), "a size for every group");
        let (words, bytes) = sizes.iter().fold((0, 0), |(w, b), &(gw, gb)| (w + gw, b + gb));
        let mut out = Self {
            bytes: vec![0; bytes],
            entries: vec![Entry { start: 0, count: 0, len: 0 }; words],
        };
        let (mut bytes_left, mut entries_left) = (&mut out.bytes[..], &mut out.entries[..]);
        let mut parts = Vec::with_capacity(sizes.len());
        let mut base = 0u64;
        for &(group_words, group_bytes) in sizes {
            let (b, rest) = std::mem::take(&mut bytes_left).split_at_mut(group_bytes);
            bytes_left = rest;
            let (e, rest) = std::mem::take(&mut entries_left).split_at_mut(group_words);
            entries_left = rest;
            parts.push((base, b, e));
            base += group_bytes as u64;
        }
        pool.install(|| {
            groups.into_par_iter().zip(parts).for_each(|(group, (base, b, e))| {
                let (mut at, mut n) = (0, 0);
                fill(group, &mut |word, count| {
                    b[at..at + word.len()].copy_from_slice(word);
                    e[n] = Entry { start: base + at as u64, count, len: word.len() as u64 };
                    (at, n) = (at + word.len(), n + 1);
                });
                assert_eq!((at, n), (b.len(), e.len()), "a group gave what its size says");
            });
        });
        out
    }

    /// Sorts the entries by their words' bytes, on `pool`. The words are distinct, so
    /// the order is unique and an unstable sort is deterministic.
    ///
    /// The words lie in the buffer in the order they were counted, so comparing two reads
    /// two places at random, and waiting for them was most of a sort's time. Each entry
    /// is sorted beside its word's first 8 bytes, which decide most comparisons without
    /// that read. (The keyed copy lives only during the sort; the hand-over's memory
    /// estimate, `budget::merge_entry`, covers it.)
    pub fn sort(&mut self, pool: &rayon::ThreadPool) {
        use rayon::prelude::*;
        let bytes = &self.bytes;
        let word = |e: &Entry| &bytes[e.start as usize..e.start as usize + e.len as usize];
        pool.install(|| {
            let mut keyed: Vec<(u64, Entry)> =
                self.entries.par_iter().map(|e| (prefix_key(word(e)), *e)).collect();
            keyed.par_sort_unstable_by(|a, b| {
                a.0.cmp(&b.0).then_with(|| word(&a.1).cmp(word(&b.1)))
            });
            self.entries.clear();
            self.entries.par_extend(keyed.par_iter().map(|&(_, e)| e));
        });
    }

    /// Number of words.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when there are no words.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Bytes of all words.
    pub fn total_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// Word `i` (in byte order) and its count.
    #[inline]
    pub fn get(&self, i: usize) -> (&[u8], u64) {
        let Entry { start, count, len } = self.entries[i];
        (&self.bytes[start as usize..start as usize + len as usize], count)
    }

    /// Asks for the first bytes of word `i` ahead of their use (nothing past the end).
    #[inline]
    pub fn prefetch(&self, i: usize) {
        if let Some(e) = self.entries.get(i) {
            crate::prefetch::prefetch(self.bytes.as_ptr().wrapping_add(e.start as usize));
        }
    }

    /// The words and counts in byte order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], u64)> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }
}

impl std::fmt::Debug for SortedWords {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shown = self.iter().map(|(w, n)| (String::from_utf8_lossy(w), n));
        f.debug_list().entries(shown).finish()
    }
}

/// Equal when the same words have the same counts (the buffer's order does not matter).
impl PartialEq for SortedWords {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

#[cfg(test)]
impl SortedWords {
    /// Adds a word (distinct from every other; call [`SortedWords::sort`] after the last).
    pub fn push(&mut self, word: &[u8], count: u64) {
        self.entries.push(Entry { start: self.bytes.len() as u64, count, len: word.len() as u64 });
        self.bytes.extend_from_slice(word);
    }

    /// The sorted list of `words` (distinct).
    pub fn of(words: &[(Vec<u8>, u64)]) -> Self {
        let mut sorted = Self::default();
        for (w, n) in words {
            sorted.push(w, *n);
        }
        sorted.sort(&crate::parallel::pool(Some(1)));
        sorted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_come_out_in_byte_order_whatever_order_they_went_in() {
        let words =
            [(b"b".to_vec(), 1), (b"".to_vec(), 2), (b"ab".to_vec(), 3), (b"a".to_vec(), 4)];
        let sorted = SortedWords::of(&words);
        let got: Vec<(&[u8], u64)> = sorted.iter().collect();
        assert_eq!(got, [(&b""[..], 2), (b"a", 4), (b"ab", 3), (b"b", 1)]);
        assert_eq!((sorted.len(), sorted.total_bytes(), sorted.is_empty()), (4, 4, false));
        assert!(SortedWords::default().is_empty());
        let mut reversed = words.to_vec();
        reversed.reverse();
        assert_eq!(SortedWords::of(&reversed), sorted);
        assert_ne!(SortedWords::of(&words[1..]), sorted);
        assert_eq!(format!("{:?}", SortedWords::of(&words[..1])), r#"[("b", 1)]"#);
    }

    /// Words gathered from groups on several threads, each into its own part of the
    /// buffers, sort into the list of pushing them one by one; a group that gives other
    /// than its size says is a bug, refused.
    #[test]
    fn gathered_groups_give_the_words_pushed_one_by_one() {
        // Group g's words end with the byte g, so no two groups share a word.
        let groups: Vec<Vec<(Vec<u8>, u64)>> = (0..7u8)
            .map(|g| {
                (0..g * 3)
                    .map(|i| {
                        let mut word = vec![b'a' + i % 5; 1 + usize::from(i / 5)];
                        word.push(g);
                        (word, u64::from(i) + 1)
                    })
                    .collect()
            })
            .collect();
        let sizes: Vec<(usize, usize)> =
            groups.iter().map(|g| (g.len(), g.iter().map(|(w, _)| w.len()).sum())).collect();
        let all: Vec<(Vec<u8>, u64)> = groups.iter().flatten().cloned().collect();
        for threads in [1, 2, 3] {
            let pool = crate::parallel::pool(Some(threads));
            let give = |group: Vec<(Vec<u8>, u64)>, push: &mut dyn FnMut(&[u8], u64)| {
                group.iter().for_each(|(w, n)| push(w, *n))
            };
            let mut gathered = SortedWords::gathered(groups.clone(), &sizes, give, &pool);
            gathered.sort(&pool);
            assert_eq!(gathered, SortedWords::of(&all), "{threads} threads");
        }
        let short = std::panic::catch_unwind(|| {
            let pool = crate::parallel::pool(Some(1));
            let mut sizes = sizes.clone();
            sizes[3].0 += 1;
            sizes[3].1 += 2;
            SortedWords::gathered(
                groups.clone(),
                &sizes,
                |g, push| g.iter().for_each(|(w, n)| push(w, *n)),
                &pool,
            )
        });
        assert!(short.is_err(), "a group that gives fewer words than its size");
    }

    /// The sort compares 8-byte prefixes first: words that tie on them (zero bytes,
    /// shorter words, a shared first 8 bytes) and words that differ only past them must
    /// still come out in byte order, on one thread and on several.
    #[test]
    fn prefixes_decide_only_what_the_bytes_decide() {
        let mut words: Vec<Vec<u8>> = [
            &b""[..],
            b"\0",
            b"\0\0",
            b"\0\x01",
            b"a",
            b"a\0",
            b"a\0\0",
            b"a\x01",
            b"\xff",
            b"abcdefgh",
            b"abcdefgh\0",
            b"abcdefgh\x01",
            b"abcdefgi",
            b"abcdefg",
            b"abcdefg\0",
            b"abcdefghijklmnop",
            b"abcdefghijklmnoo",
            b"\xff\xff\xff\xff\xff\xff\xff\xff\0",
        ]
        .map(<[u8]>::to_vec)
        .to_vec();
        let mut rng = crate::test_rng::Rng(7);
        for _ in 0..2000 {
            let len = rng.below(14);
            words.push((0..len).map(|_| b"\0ab\xff"[rng.below(4)]).collect());
        }
        words.sort();
        words.dedup();
        let counted: Vec<(Vec<u8>, u64)> =
            words.iter().enumerate().rev().map(|(i, w)| (w.clone(), i as u64)).collect();
        for threads in [1, 2, 4] {
            let mut sorted = SortedWords::default();
            for (w, n) in &counted {
                sorted.push(w, *n);
            }
            sorted.sort(&crate::parallel::pool(Some(threads)));
            let got: Vec<&[u8]> = sorted.iter().map(|(w, _)| w).collect();
            assert_eq!(got, words.iter().map(Vec::as_slice).collect::<Vec<_>>(), "{threads}");
            assert!(sorted.iter().enumerate().all(|(i, (_, n))| n == i as u64));
        }
    }
}
