//! The merge loop's occurrence lists (the words each pair occurs in), in one pool.
//!
//! A pair's list holds up to 4 words in its 24-byte header (about half of all pairs occur
//! in one word), and longer ones in a block of the pool: blocks of 8, 16, 32, ... words,
//! carved from 256 KiB pages, and a block a list leaves (it grew, it was merged, its pair
//! went) is kept on a free list of its size for the next list of that size. So a list
//! that grows costs a copy into the next block, never an allocator call (a `SmallVec` per
//! list called `realloc` at every doubling and `free` at every merge). Lists longer than a
//! page (the few top pairs) get a vector of their own, which goes back to the system when
//! the pair is merged, as a large block kept in the pool would not.

/// Words held in a list's header.
const INLINE: usize = 4;
/// Words in the smallest block; block class `c` holds `SMALLEST << c`.
const SMALLEST: usize = 8;
/// Words in a page of the pool (256 KiB); the largest block fills one.
const PAGE: usize = 1 << 16;
/// Block classes: 8, 16, ..., `PAGE` words.
const CLASSES: usize = (PAGE / SMALLEST).trailing_zeros() as usize + 1;
/// `Head::class` of a list held in its header.
const IN_HEAD: u32 = 0;
/// `Head::class` of a list in a vector of its own (`data[0]` is its index in `huge`).
const HUGE: u32 = u32::MAX;

/// A list's header: its length, where it is (`IN_HEAD`, `HUGE`, or block class + 1), and
/// either the words themselves or where its block starts (`data[0] | data[1] << 32`).
#[derive(Clone, Copy, Default)]
struct Head {
    len: u32,
    class: u32,
    data: [u32; INLINE],
}

impl Head {
    fn start(&self) -> usize {
        (u64::from(self.data[0]) | u64::from(self.data[1]) << 32) as usize
    }
}

/// One occurrence list per pair id.
#[derive(Default)]
pub struct WordLists {
    heads: Vec<Head>,
    /// Blocks, `PAGE` words a page; a block never straddles two.
    pages: Vec<Box<[u32]>>,
    /// Where the next block is carved in the last page.
    bump: usize,
    /// The starts of free blocks, by class.
    free: [Vec<usize>; CLASSES],
    /// The lists longer than a page.
    huge: Vec<Vec<u32>>,
    /// Indexes of `huge` free for reuse.
    huge_free: Vec<u32>,
}

impl WordLists {
    /// Adds an empty list; its id is the number of lists before it.
    pub fn push_empty(&mut self) {
        self.heads.push(Head::default());
    }

    /// The words of list `id`.
    #[inline]
    pub fn get(&self, id: u32) -> &[u32] {
        let head = &self.heads[id as usize];
        let len = head.len as usize;
        match head.class {
            IN_HEAD => &head.data[..len],
            HUGE => &self.huge[head.data[0] as usize],
            _ => {
                let start = head.start();
                &self.pages[start / PAGE][start % PAGE..start % PAGE + len]
            }
        }
    }

    /// Appends word `w` to list `id`, unless it is the last word there already.
    #[inline]
    pub fn append(&mut self, id: u32, w: u32) {
        let head = &mut self.heads[id as usize];
        let len = head.len as usize;
        if head.class == IN_HEAD && len < INLINE {
            if len == 0 || head.data[len - 1] != w {
                head.data[len] = w;
                head.len += 1;
            }
            return;
        }
        self.append_spilled(id, w);
    }

    /// [`WordLists::append`] to a list that is full in its header, in a block or huge.
    fn append_spilled(&mut self, id: u32, w: u32) {
        let head = self.heads[id as usize];
        let len = head.len as usize;
        match head.class {
            IN_HEAD if head.data[INLINE - 1] == w => return,
            IN_HEAD => {}
            HUGE => {
                let list = &mut self.huge[head.data[0] as usize];
                if list.last() != Some(&w) {
                    list.push(w);
                    self.heads[id as usize].len += 1;
                }
                return;
            }
            class => {
                let start = head.start();
                let (page, at) = (&mut self.pages[start / PAGE], start % PAGE);
                if page[at + len - 1] == w {
                    return;
                }
                if len < SMALLEST << (class - 1) {
                    page[at + len] = w;
                    self.heads[id as usize].len += 1;
                    return;
                }
            }
        }
        // Full: moved to a larger block (or a vector), where `w` then fits.
        self.grow(id);
        self.append(id, w);
    }

    /// Moves full list `id` to a block twice its size (or of the smallest size, from its
    /// header; or to a vector of its own, past a page).
    #[cold]
    fn grow(&mut self, id: u32) {
        let head = self.heads[id as usize];
        let class = if head.class == IN_HEAD { 0 } else { head.class as usize };
        let mut moved = Head { len: head.len, ..Head::default() };
        if class == CLASSES {
            let list = self.get(id).to_vec();
            moved.class = HUGE;
            moved.data[0] = match self.huge_free.pop() {
                Some(i) => {
                    self.huge[i as usize] = list;
                    i
                }
                None => {
                    self.huge.push(list);
                    (self.huge.len() - 1) as u32
                }
            };
        } else {
            let start = self.alloc(class);
            let (page, at) = (start / PAGE, start % PAGE);
            let len = head.len as usize;
            if head.class == IN_HEAD {
                self.pages[page][at..at + len].copy_from_slice(&head.data[..len]);
            } else {
                let old = head.start();
                if old / PAGE == page {
                    self.pages[page].copy_within(old % PAGE..old % PAGE + len, at);
                } else {
                    let (from, to) = if old / PAGE < page {
                        let (before, rest) = self.pages.split_at_mut(page);
                        (&before[old / PAGE], &mut rest[0])
                    } else {
                        let (before, rest) = self.pages.split_at_mut(old / PAGE);
                        (&rest[0], &mut before[page])
                    };
                    to[at..at + len].copy_from_slice(&from[old % PAGE..old % PAGE + len]);
                }
            }
            moved.class = class as u32 + 1;
            moved.data[0] = start as u32;
            moved.data[1] = (start as u64 >> 32) as u32;
        }
        self.release(id);
        self.heads[id as usize] = moved;
    }

    /// The start of a free block of class `class`.
    fn alloc(&mut self, class: usize) -> usize {
        if let Some(start) = self.free[class].pop() {
            return start;
        }
        let size = SMALLEST << class;
        if self.pages.is_empty() || self.bump + size > PAGE {
            // The rest of the last page goes to the free lists, largest blocks first
            // (what is left is a multiple of the smallest block).
            let base = self.pages.len().saturating_sub(1) * PAGE;
            while !self.pages.is_empty() && PAGE - self.bump >= SMALLEST {
                let fits = ((PAGE - self.bump) / SMALLEST).ilog2() as usize;
                self.free[fits].push(base + self.bump);
                self.bump += SMALLEST << fits;
            }
            self.pages.push(vec![0; PAGE].into_boxed_slice());
            self.bump = 0;
        }
        let start = (self.pages.len() - 1) * PAGE + self.bump;
        self.bump += size;
        start
    }

    /// Frees list `id`'s storage and leaves it empty.
    fn release(&mut self, id: u32) {
        let head = std::mem::take(&mut self.heads[id as usize]);
        match head.class {
            IN_HEAD => {}
            HUGE => {
                self.huge[head.data[0] as usize] = Vec::new();
                self.huge_free.push(head.data[0]);
            }
            class => self.free[class as usize - 1].push(head.start()),
        }
    }

    /// Copies list `id` into `out` (replacing what it held) and empties the list.
    pub fn take(&mut self, id: u32, out: &mut Vec<u32>) {
        out.clear();
        out.extend_from_slice(self.get(id));
        self.release(id);
    }

    /// Empties list `id`.
    pub fn clear(&mut self, id: u32) {
        self.release(id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Appends, takes and clears at random against a vector per list, with lists long
    /// enough to use every class, cross pages and outgrow one.
    #[test]
    fn behaves_as_vectors() {
        let mut lists = WordLists::default();
        let mut want: Vec<Vec<u32>> = Vec::new();
        let mut seed = 11u64;
        let mut out = vec![7];
        for step in 0..400_000u32 {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let r = (seed >> 24) as usize;
            if want.len() < 3000 && r % 50 == 0 {
                lists.push_empty();
                want.push(Vec::new());
                continue;
            }
            if want.is_empty() {
                continue;
            }
            // Skewed: a few lists get most appends.
            let id = if r % 4 == 0 { r / 4 % want.len() } else { r / 4 % want.len().min(8) };
            match r % 1000 {
                0 => {
                    lists.take(id as u32, &mut out);
                    assert_eq!(out, std::mem::take(&mut want[id]), "step {step}");
                }
                1 => {
                    lists.clear(id as u32);
                    want[id].clear();
                }
                _ => {
                    // Repeats of the last word are not listed twice.
                    let w = step / 2;
                    lists.append(id as u32, w);
                    if want[id].last() != Some(&w) {
                        want[id].push(w);
                    }
                }
            }
        }
        for (id, list) in want.iter().enumerate() {
            assert_eq!(lists.get(id as u32), list.as_slice());
        }
        // One list past a page, then back to empty, and its vector reused.
        let id = want.len() as u32;
        lists.push_empty();
        let all: Vec<u32> = (0..PAGE as u32 + 5).collect();
        for &w in &all {
            lists.append(id, w);
        }
        assert_eq!(lists.get(id), all.as_slice());
        lists.take(id, &mut out);
        assert_eq!(out, all);
        assert_eq!(lists.get(id), [] as [u32; 0]);
        for &w in &all {
            lists.append(id, w);
        }
        assert_eq!((lists.get(id).len(), lists.huge.len()), (all.len(), 1));
        assert!(lists.pages.len() > 1);
    }
}
