//! The merge loop's words in one flat array: every word's token ids back to back, each
//! word at a fixed start with its current length and its count. A merge only shortens a
//! word, so it is rewritten in place: no allocation per word, and 20 bytes of bookkeeping
//! per word instead of a vector each.
//!
//! A word's start, length and count sit together in one 20-byte entry: a merge visits
//! words scattered over the arena, and each entry is then one cache line to wait for
//! instead of three (separate arrays of starts, lengths and counts).
//!
//! Tokens are kept as `u16` when every id the run can make is below 65,536 (vocabularies
//! of up to 65,536 tokens, see [`ArenaToken`]), else as `u32`: a visit then reads half the
//! bytes, and a word of 20 tokens (multilingual text's mean) fits one cache line more often
//! than two. Ids go in and come out as [`Rank`].

use rayon::prelude::*;

use super::sorted_words::SortedWords;
use crate::error::{Error, Result};
use crate::prefetch::prefetch;
use crate::{interrupt, Rank};

/// How the arena holds a token id: `u16` or `u32` ([`Rank`]). The merge loop is compiled
/// for both; `train::train` takes `u16` when its ids cannot pass 65,535.
pub trait ArenaToken: Copy + Eq + Default + Send + Sync + Into<Rank> + 'static {
    /// The ids this type holds are those below it.
    const LIMIT: u64;

    /// `rank` as this type, if it holds it.
    fn narrow(rank: Rank) -> Option<Self>;
}

impl ArenaToken for u16 {
    const LIMIT: u64 = 1 << 16;

    #[inline(always)]
    fn narrow(rank: Rank) -> Option<Self> {
        u16::try_from(rank).ok()
    }
}

impl ArenaToken for Rank {
    const LIMIT: u64 = 1 << 32;

    #[inline(always)]
    fn narrow(rank: Rank) -> Option<Self> {
        Some(rank)
    }
}

/// `rank` as an arena token, or an error naming it and `whose` it is (an id the run's
/// choice of width should have ruled out).
fn narrow_or_err<T: ArenaToken>(rank: Rank, whose: impl Fn() -> String) -> Result<T> {
    T::narrow(rank).ok_or_else(|| {
        Error::InvalidConfig(format!(
            "{} is token id {rank}, past the {}-bit ids of the merge loop's words",
            whose(),
            T::LIMIT.trailing_zeros()
        ))
    })
}

/// Where a word is, how long it is now, and how often it occurs. Packed to 4-byte
/// alignment: 20 bytes, not 24.
#[derive(Clone, Copy)]
#[repr(C, packed(4))]
struct Entry {
    start: u64,
    count: u64,
    len: u32,
}

/// The bytes of one entry; [`super::budget::merge_entry`] is derived from it.
pub const ENTRY_BYTES: u64 = std::mem::size_of::<Entry>() as u64;

/// How many words ahead [`WordArena::of_bytes`] fetches a word's bytes.
const AHEAD_WORDS: usize = 8;

/// Tokens [`WordArena::of_bytes`] writes in one run on one thread (1 MiB). (Fewer in
/// tests, so small inputs take many runs and rounds.)
const FILL_TOKENS: usize = if cfg!(test) { 1 << 12 } else { 1 << 18 };

/// Writes the ranks of words `ids` of `words` into their places in `run` (which holds
/// them).
fn fill<T: ArenaToken>(
    words: &SortedWords,
    ids: std::ops::Range<u32>,
    run: &mut WordsMut<'_, T>,
    ranks: &[T; 256],
) {
    for w in ids.clone() {
        if w as usize + AHEAD_WORDS < ids.end as usize {
            words.prefetch(w as usize + AHEAD_WORDS);
        }
        let (word, _) = words.get(w as usize);
        for (token, &b) in run.word_mut(w).iter_mut().zip(word) {
            *token = ranks[usize::from(b)];
        }
    }
}

/// Token ids and counts of every distinct word.
pub struct WordArena<T = Rank> {
    /// All words' tokens; word `w` occupies `tokens[start..start + len]` of its entry.
    tokens: Vec<T>,
    /// Each word's entry.
    entries: Vec<Entry>,
}

impl<T> Default for WordArena<T> {
    fn default() -> Self {
        Self { tokens: Vec::new(), entries: Vec::new() }
    }
}

impl<T: ArenaToken> WordArena<T> {
    /// The arena of `words` (token ids, count), in the same order. Each word's own vector
    /// is freed as soon as it is copied.
    pub fn new(words: Vec<(Vec<Rank>, u64)>) -> Result<Self> {
        let total = words.iter().map(|(w, _)| w.len()).sum();
        let mut arena = Self::with_capacity(words.len(), total);
        for (i, (word, count)) in words.into_iter().enumerate() {
            arena.push(i, count, &word)?;
        }
        Ok(arena)
    }

    /// The arena of `words` (bytes, count), each byte as its token `rank(byte)`, in the
    /// same order: no vector of ids per word on the way. The tokens are written on
    /// `pool`, in runs of about [`FILL_TOKENS`] ([`WordArena::even_runs`] cut by
    /// [`WordArena::runs_mut`]; the words lie in the list's buffer in
    /// counting order, so each is a read at random, and two threads wait for twice as
    /// many at once); four runs per thread at a time, so Ctrl-C is looked for between
    /// those rounds (see [`interrupt`]).
    pub fn of_bytes(
        words: &SortedWords,
        rank: impl Fn(u8) -> Rank,
        pool: &rayon::ThreadPool,
    ) -> Result<Self> {
        let mut ranks = [T::default(); 256];
        for (b, slot) in ranks.iter_mut().enumerate() {
            *slot = narrow_or_err(rank(b as u8), || format!("byte {b:#04x}"))?;
        }
        let mut entries = Vec::with_capacity(words.len());
        let mut total = 0u64;
        for (i, (word, count)) in words.iter().enumerate() {
            let len = Self::checked_len(i, word.len())?;
            entries.push(Entry { start: total, count, len });
            total += u64::from(len);
        }
        // Zeroed pages come from the OS untouched, so each is first written (and faulted
        // in) by the thread that fills it.
        let mut arena = Self { tokens: vec![T::default(); total as usize], entries };
        let ids = arena.even_runs((total as usize).div_ceil(FILL_TOKENS));
        let cuts: Vec<u32> = ids.iter().skip(1).map(|r| r.start).collect();
        let mut runs: Vec<_> = arena.runs_mut(&cuts).into_iter().zip(ids).collect();
        for round in runs.chunks_mut(4 * pool.current_num_threads()) {
            pool.install(|| {
                round.par_iter_mut().for_each(|(run, ids)| fill(words, ids.clone(), run, &ranks));
            });
            interrupt::step(round.iter().map(|(run, _)| run.tokens.len()).sum())?;
        }
        Ok(arena)
    }

    /// Word `i`'s length as the merge loop keeps it, if it fits.
    fn checked_len(i: usize, len: usize) -> Result<u32> {
        u32::try_from(len).map_err(|_| {
            Error::InvalidConfig(format!(
                "word {i} has {len} tokens; the merge loop takes words of at most 2**32-1"
            ))
        })
    }

    fn with_capacity(words: usize, tokens: usize) -> Self {
        Self { tokens: Vec::with_capacity(tokens), entries: Vec::with_capacity(words) }
    }

    /// Appends word `i` (its place in the input, for the errors), if the merge loop takes
    /// its length and `T` holds its ids (else the arena is left half-written: the caller
    /// drops it).
    fn push(&mut self, i: usize, count: u64, word: &[Rank]) -> Result<()> {
        let len = Self::checked_len(i, word.len())?;
        self.entries.push(Entry { start: self.tokens.len() as u64, count, len });
        for &rank in word {
            self.tokens.push(narrow_or_err(rank, || format!("a token of word {i}"))?);
        }
        Ok(())
    }

    /// The mean length of the words shorter than `limit` tokens (0 if there are none).
    pub fn mean_len_below(&self, limit: usize) -> f64 {
        let (mut words, mut tokens) = (0u64, 0u64);
        for e in self.entries.iter().filter(|e| (e.len as usize) < limit) {
            (words, tokens) = (words + 1, tokens + u64::from(e.len));
        }
        tokens as f64 / words.max(1) as f64
    }

    /// Number of words.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// The tokens of word `w`.
    #[inline]
    pub fn word(&self, w: u32) -> &[T] {
        let Entry { start, len, .. } = self.entries[w as usize];
        &self.tokens[start as usize..start as usize + len as usize]
    }

    /// How often word `w` occurs.
    #[inline]
    pub fn count(&self, w: u32) -> u64 {
        self.entries[w as usize].count
    }

    /// Fetches word `w`'s entry into the cache (a hint).
    #[inline]
    pub fn prefetch_entry(&self, w: u32) {
        fetch_entry(&self.entries, w as usize);
    }

    /// Fetches word `w`'s tokens into the cache (a hint; reads its entry).
    #[inline]
    pub fn prefetch_tokens(&self, w: u32) {
        fetch_tokens(&self.entries, &self.tokens, w as usize, 0);
    }

    /// The tokens of word `w` as ids.
    #[cfg(test)]
    pub fn ranks(&self, w: u32) -> Vec<Rank> {
        self.word(w).iter().map(|&t| t.into()).collect()
    }

    /// `parts` runs of consecutive words with about as many tokens each, as word ranges
    /// (fewer runs where one word holds many tokens; one run for an empty arena).
    pub fn even_runs(&self, parts: usize) -> Vec<std::ops::Range<u32>> {
        let (n, total) = (self.entries.len(), self.tokens.len() as u64);
        let mut cuts: Vec<usize> = (1..parts.max(1) as u64)
            // Words lie in id order, so starts ascend with the ids.
            .map(|k| self.entries.partition_point(|e| e.start * (parts as u64) < total * k))
            .collect();
        cuts.dedup();
        cuts.retain(|&c| c > 0 && c < n);
        let starts = std::iter::once(0).chain(cuts.iter().copied());
        let ends = cuts.iter().copied().chain(std::iter::once(n));
        starts.zip(ends).map(|(a, b)| a as u32..b as u32).collect()
    }

    /// The whole arena, writable.
    pub fn all_mut(&mut self) -> WordsMut<'_, T> {
        WordsMut { tokens: &mut self.tokens, offset: 0, entries: &mut self.entries, first: 0 }
    }

    /// The arena cut into runs of consecutive words, writable, one starting at each of
    /// `cuts` (ascending word ids; the first run starts at word 0): words are laid out
    /// in id order, so the runs' tokens do not overlap and each can be rewritten on its
    /// own thread.
    pub fn runs_mut(&mut self, cuts: &[u32]) -> Vec<WordsMut<'_, T>> {
        assert!(cuts.windows(2).all(|c| c[0] < c[1]), "cuts must ascend");
        let mut runs = Vec::with_capacity(cuts.len() + 1);
        let mut rest = self.all_mut();
        for &cut in cuts {
            let at = (cut - rest.first) as usize;
            let start = rest.entries[at].start as usize;
            let (tokens, tail_tokens) =
                std::mem::take(&mut rest.tokens).split_at_mut(start - rest.offset);
            let (entries, tail_entries) = std::mem::take(&mut rest.entries).split_at_mut(at);
            runs.push(WordsMut { tokens, offset: rest.offset, entries, first: rest.first });
            rest =
                WordsMut { tokens: tail_tokens, offset: start, entries: tail_entries, first: cut };
        }
        runs.push(rest);
        runs
    }
}

/// Consecutive words of an arena, from word `first` on, writable: what one thread
/// rewrites in place. A merge only shortens a word, so it is rewritten where it lies.
pub struct WordsMut<'a, T> {
    /// The tokens from word `first`'s start on.
    tokens: &'a mut [T],
    /// Where `tokens` begins in the arena.
    offset: usize,
    /// The entries of words `first..`.
    entries: &'a mut [Entry],
    first: u32,
}

impl<T> WordsMut<'_, T> {
    /// How often word `w` occurs.
    #[inline]
    pub fn count(&self, w: u32) -> u64 {
        self.entries[(w - self.first) as usize].count
    }

    /// The tokens of word `w`, to rewrite in place (then [`WordsMut::set_len`]).
    #[inline]
    pub fn word_mut(&mut self, w: u32) -> &mut [T] {
        let Entry { start, len, .. } = self.entries[(w - self.first) as usize];
        let start = start as usize - self.offset;
        &mut self.tokens[start..start + len as usize]
    }

    /// Sets word `w`'s length to `len`, which must not exceed it (a merge only shortens).
    #[inline]
    pub fn set_len(&mut self, w: u32, len: usize) {
        let entry = &mut self.entries[(w - self.first) as usize];
        assert!(len <= entry.len as usize, "a merge lengthened a word");
        entry.len = len as u32;
    }

    /// Asks the CPU to fetch word `w`'s entry ahead of its use (a hint: no effect on
    /// results). A merge knows the words it will visit, and waiting for each entry and
    /// then each word's tokens in turn is most of the cost of visiting it.
    #[inline]
    pub fn prefetch_entry(&self, w: u32) {
        fetch_entry(self.entries, w.wrapping_sub(self.first) as usize);
    }

    /// As [`WordsMut::prefetch_entry`], for word `w`'s tokens (reads its entry).
    #[inline]
    pub fn prefetch_tokens(&self, w: u32) {
        fetch_tokens(self.entries, self.tokens, w.wrapping_sub(self.first) as usize, self.offset);
    }
}

/// Fetches `entries[i]` (if there is one) into the cache: both its ends, since a 20-byte
/// entry crosses into a second cache line at 5 of the 16 places it can start.
#[inline]
fn fetch_entry(entries: &[Entry], i: usize) {
    if let Some(entry) = entries.get(i) {
        let at = std::ptr::from_ref(entry).cast::<u8>();
        prefetch(at);
        prefetch(at.wrapping_add(ENTRY_BYTES as usize - 1));
    }
}

/// Fetches the tokens of the word at `entries[i]` (if there is one; `tokens` holds the
/// arena's tokens from `offset` on) into the cache: its first and its last.
#[inline]
fn fetch_tokens<T>(entries: &[Entry], tokens: &[T], i: usize, offset: usize) {
    if let Some(&Entry { start, len, .. }) = entries.get(i) {
        if let Some(first) = (start as usize).checked_sub(offset) {
            if let Some(t) = tokens.get(first) {
                prefetch(std::ptr::from_ref(t));
            }
            if let Some(t) = tokens.get(first + (len as usize).saturating_sub(1)) {
                prefetch(std::ptr::from_ref(t));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn even_runs_cover_the_words_by_tokens() {
        let lens = [3, 1, 0, 8, 2, 2, 5, 1, 1, 9, 4];
        let words: Vec<(Vec<Rank>, u64)> = lens.iter().map(|&n| (vec![7; n], 1)).collect();
        let arena = WordArena::<Rank>::new(words).unwrap();
        for parts in 0..=14 {
            let runs = arena.even_runs(parts);
            assert_eq!(runs[0].start, 0, "{parts}");
            assert_eq!(runs.last().unwrap().end, lens.len() as u32, "{parts}");
            assert!(runs.windows(2).all(|r| r[0].end == r[1].start && r[0].start < r[0].end));
            assert!(runs.len() <= parts.max(1), "{parts}: {runs:?}");
        }
        // 36 tokens: a run ends at the first word starting at or past its share (words 4,
        // 7 and 10 start at tokens 12, 21 and 32).
        assert_eq!(arena.even_runs(2), [0..7, 7..11]);
        assert_eq!(arena.even_runs(3), [0..4, 4..10, 10..11]);
        assert_eq!(WordArena::<Rank>::default().even_runs(4), vec![0..0]);
        let one = WordArena::<Rank>::new(vec![(vec![1; 50], 1)]).unwrap();
        assert_eq!(one.even_runs(4), vec![0..1]);
    }

    #[test]
    fn words_keep_their_place_when_shortened() {
        let mut arena =
            WordArena::<Rank>::new(vec![(vec![1, 2, 3], 5), (vec![], 1), (vec![4, 5], 2)]).unwrap();
        assert_eq!((0..3).map(|w| arena.count(w)).collect::<Vec<_>>(), [5, 1, 2]);
        assert_eq!(arena.len(), 3);
        let mut all = arena.all_mut();
        all.word_mut(0)[..2].copy_from_slice(&[9, 3]);
        all.set_len(0, 2);
        // Hints only: past the end or on an empty word they do nothing.
        all.prefetch_entry(7);
        all.prefetch_tokens(1);
        all.prefetch_tokens(7);
        arena.prefetch_entry(7);
        arena.prefetch_tokens(1);
        arena.prefetch_tokens(7);
        assert_eq!(arena.word(0), [9, 3]);
        assert_eq!(arena.count(0), 5);
        assert_eq!(arena.word(1), [] as [Rank; 0]);
        assert_eq!(arena.word(2), [4, 5]);
        let words = SortedWords::of(&[(b"ab".to_vec(), 3), (vec![], 4)]);
        let pool = crate::parallel::pool(Some(2));
        let bytes = WordArena::<u16>::of_bytes(&words, |b| 300 + u32::from(b), &pool).unwrap();
        assert_eq!(bytes.ranks(1), [397, 398]);
        assert_eq!((bytes.count(0), bytes.count(1), bytes.len()), (4, 3, 2));
    }

    /// Filled in many runs and rounds (words of every length, some empty, past several
    /// rounds of runs), on one thread or several, each word's tokens are its bytes' ranks
    /// at its own place.
    #[test]
    fn filling_on_threads_puts_every_word_in_place() {
        let mut rng = crate::test_rng::Rng(11);
        let words: Vec<(Vec<u8>, u64)> = (0..4_000u32)
            .map(|i| {
                // Some words longer than a run: a run of that word alone.
                let len = if i % 997 == 0 { 3 * FILL_TOKENS } else { rng.below(60) };
                let mut w: Vec<u8> = (0..len).map(|_| rng.below(256) as u8).collect();
                w.extend_from_slice(&i.to_le_bytes()); // distinct
                (w, u64::from(i) + 1)
            })
            .collect();
        let sorted = SortedWords::of(&words);
        assert!(sorted.total_bytes() > 24 * FILL_TOKENS, "rounds of runs on 3 threads");
        let rank = |b: u8| 1000 + u32::from(b);
        for threads in [1, 2, 3] {
            let pool = crate::parallel::pool(Some(threads));
            let narrow = WordArena::<u16>::of_bytes(&sorted, rank, &pool).unwrap();
            let wide = WordArena::<Rank>::of_bytes(&sorted, rank, &pool).unwrap();
            assert_eq!((narrow.len(), wide.len()), (sorted.len(), sorted.len()));
            for (w, (bytes, count)) in sorted.iter().enumerate() {
                let want: Vec<Rank> = bytes.iter().map(|&b| rank(b)).collect();
                let w = w as u32;
                assert_eq!((narrow.ranks(w), narrow.count(w)), (want.clone(), count));
                assert_eq!((wide.ranks(w), wide.count(w)), (want, count));
            }
        }
    }

    /// An id past 65,535 is refused by a `u16` arena, with what holds it, never cut to
    /// 16 bits; a `u32` one takes it.
    #[test]
    fn ids_past_the_token_width_are_refused() {
        let words = vec![(vec![7, 65_535], 2), (vec![3, 65_536, 4], 1)];
        let err = WordArena::<u16>::new(words.clone()).err().expect("refused");
        assert_eq!(
            err.to_string(),
            Error::InvalidConfig(
                "a token of word 1 is token id 65536, past the 16-bit ids of the merge loop's \
                 words"
                    .into()
            )
            .to_string()
        );
        let wide = WordArena::<Rank>::new(words).unwrap();
        assert_eq!(wide.ranks(1), [3, 65_536, 4]);
        let sorted = SortedWords::of(&[(b"ab".to_vec(), 1)]);
        let pool = crate::parallel::pool(Some(1));
        let err = WordArena::<u16>::of_bytes(&sorted, |b| 65_500 + u32::from(b), &pool).err();
        assert!(err.expect("refused").to_string().contains("byte 0x24 is token id 65536"));
    }

    /// Runs cover their own words only, and write where the whole arena reads.
    #[test]
    fn runs_split_at_their_first_words() {
        let words = (0..6).map(|i| (vec![i; i as usize], u64::from(i) + 10)).collect();
        let mut arena = WordArena::<Rank>::new(words).unwrap();
        let mut runs = arena.runs_mut(&[2, 5]);
        assert_eq!(runs.len(), 3);
        for (run, words) in runs.iter_mut().zip([0..2, 2..5, 5..6]) {
            for w in words {
                assert_eq!(run.count(w), u64::from(w) + 10);
                assert_eq!(run.word_mut(w).len(), w as usize);
                if w > 0 {
                    run.word_mut(w)[0] = 100 + w;
                    run.set_len(w, 1);
                }
            }
        }
        for w in 1..6 {
            assert_eq!(arena.word(w), [100 + w]);
        }
    }

    #[test]
    #[should_panic(expected = "lengthened")]
    fn a_longer_word_is_refused() {
        let mut arena = WordArena::<Rank>::new(vec![(vec![1], 1)]).unwrap();
        arena.all_mut().set_len(0, 2);
    }
}
