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

impl Entry {
    fn of<'b>(&self, bytes: &'b [u8]) -> &'b [u8] {
        &bytes[self.start as usize..self.start as usize + self.len as usize]
    }
}

/// Sorts `keyed` (entries beside their words' [`prefix_key`]) by the words' bytes, on the
/// current pool, and returns the entries alone.
///
/// The words lie in the buffer in the order they were counted, so comparing two reads
/// two places at random, and waiting for them was most of a sort's time. The prefix keys
/// decide most comparisons without that read. (The keyed copy lives only during the sort;
/// the hand-over's memory estimate, `budget::merge_entry`, covers it.)
fn sort_keyed(mut keyed: Vec<(u64, Entry)>, bytes: &[u8]) -> Vec<Entry> {
    use rayon::prelude::*;
    keyed.par_sort_unstable_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.of(bytes).cmp(b.1.of(bytes))));
    keyed.par_iter().map(|&(_, e)| e).collect()
}

/// Where [`SortedWords::gather`] has one part push its words: that part's share of the
/// buffer and of the entries.
pub struct PartWriter<'a> {
    bytes: &'a mut [u8],
    keyed: &'a mut [(u64, Entry)],
    /// Where `bytes` begins in the whole buffer.
    offset: usize,
    /// Bytes and words pushed.
    at: usize,
    i: usize,
}

impl PartWriter<'_> {
    /// Adds a word (distinct from every other word of every part).
    #[inline]
    pub fn push(&mut self, word: &[u8], count: u64) {
        let end = self.at + word.len();
        self.bytes[self.at..end].copy_from_slice(word);
        let entry = Entry { start: (self.offset + self.at) as u64, count, len: word.len() as u64 };
        self.keyed[self.i] = (prefix_key(word), entry);
        (self.at, self.i) = (end, self.i + 1);
    }
}

/// The bytes of one entry; [`super::budget::merge_entry`] is derived from it.
pub const ENTRY_BYTES: u64 = std::mem::size_of::<Entry>() as u64;

/// The bytes of one entry beside its sort key, as [`SortedWords::gather`] holds them
/// until they are sorted.
pub const KEYED_BYTES: u64 = std::mem::size_of::<(u64, Entry)>() as u64;

/// Distinct words and their counts, in byte order (equal tables give equal lists).
#[derive(Clone, Default)]
pub struct SortedWords {
    /// All words' bytes, in the order they were added (not sorted).
    bytes: Vec<u8>,
    /// One entry per word, sorted by the word's bytes.
    entries: Vec<Entry>,
}

impl SortedWords {
    /// The sorted list of the words of `parts` (distinct across all of them), gathered
    /// on `pool`: `size` gives a part's words and bytes, and `fill` pushes exactly those
    /// into the [`PartWriter`] it is given, on some thread of the pool, each part into a
    /// place of its own, and drops the part there once it is copied.
    pub fn gather<P: Send + Sync>(
        parts: Vec<P>,
        size: impl Fn(&P) -> (usize, usize) + Sync,
        fill: impl Fn(P, &mut PartWriter<'_>) + Sync,
        pool: &rayon::ThreadPool,
    ) -> Self {
        use rayon::prelude::*;
        pool.install(|| {
            let sizes: Vec<(usize, usize)> = parts.par_iter().map(&size).collect();
            let words = sizes.iter().map(|s| s.0).sum();
            let mut bytes = vec![0u8; sizes.iter().map(|s| s.1).sum()];
            let mut keyed = vec![(0, Entry { start: 0, count: 0, len: 0 }); words];
            let mut writers = Vec::with_capacity(parts.len());
            let (mut rest_bytes, mut rest_keyed, mut offset) = (&mut bytes[..], &mut keyed[..], 0);
            for &(words, len) in &sizes {
                let (part_bytes, tail_bytes) = std::mem::take(&mut rest_bytes).split_at_mut(len);
                let (part_keyed, tail_keyed) = std::mem::take(&mut rest_keyed).split_at_mut(words);
                writers.push(PartWriter {
                    bytes: part_bytes,
                    keyed: part_keyed,
                    offset,
                    at: 0,
                    i: 0,
                });
                (rest_bytes, rest_keyed, offset) = (tail_bytes, tail_keyed, offset + len);
            }
            parts.into_par_iter().zip(writers).for_each(|(part, mut writer)| {
                fill(part, &mut writer);
                assert!(
                    writer.i == writer.keyed.len() && writer.at == writer.bytes.len(),
                    "a part pushed fewer words or bytes than its size said"
                );
            });
            let entries = sort_keyed(keyed, &bytes);
            Self { bytes, entries }
        })
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
        let e = &self.entries[i];
        (e.of(&self.bytes), e.count)
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
    /// The sorted list of `words` (distinct).
    pub fn of(words: &[(Vec<u8>, u64)]) -> Self {
        Self::of_parts(vec![words.to_vec()], 1)
    }

    /// The sorted list of the words of `parts` (distinct across all), on `threads`.
    pub fn of_parts(parts: Vec<Vec<(Vec<u8>, u64)>>, threads: usize) -> Self {
        let size = |p: &Vec<(Vec<u8>, u64)>| (p.len(), p.iter().map(|(w, _)| w.len()).sum());
        let fill = |p: Vec<(Vec<u8>, u64)>, out: &mut PartWriter<'_>| {
            for (w, n) in p {
                out.push(&w, n);
            }
        };
        Self::gather(parts, size, fill, &crate::parallel::pool(Some(threads)))
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
            // Parts of uneven sizes, one empty, gathered into one list.
            let (a, rest) = counted.split_at(counted.len() / 3);
            let (b, c) = rest.split_at(7);
            let parts = vec![a.to_vec(), vec![], b.to_vec(), c.to_vec()];
            let sorted = SortedWords::of_parts(parts, threads);
            let got: Vec<&[u8]> = sorted.iter().map(|(w, _)| w).collect();
            assert_eq!(got, words.iter().map(Vec::as_slice).collect::<Vec<_>>(), "{threads}");
            assert!(sorted.iter().enumerate().all(|(i, (_, n))| n == i as u64));
        }
    }

    #[test]
    #[should_panic(expected = "fewer words or bytes")]
    fn a_part_that_gives_less_than_its_size_is_refused() {
        let size = |_: &u8| (2, 2);
        let fill = |_: u8, out: &mut PartWriter<'_>| out.push(b"ab", 1);
        SortedWords::gather(vec![0], size, fill, &crate::parallel::pool(Some(1)));
    }
}
