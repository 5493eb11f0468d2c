//! The pair table again, as a perfect hash in 4-byte slots, for vocabularies of at most
//! 2^16 ids: half the bytes of [`super::pairs::PairTable`]'s compact slots, so that a
//! vocabulary of 32,768 tokens takes 264 KiB, inside a core's L2 cache, where the compact
//! table's 512 KiB filled it and many lookups waited for L3.
//!
//! Built once from the pairs (CHD, "hash and displace"):
//! - a pair `(left, right)` is the 32-bit key `left << 16 | right`, mixed by a bijection
//!   `h` of 32 bits;
//! - ids get `I` bits (15 or 16) and the table 2^S slots, `S = I + 1`, so it is at most
//!   half full (a vocabulary has no more pairs than ids);
//! - the top bits of `h` pick a bucket (8 keys at most on average), whose displacement
//!   `d` is chosen at build so that each of its keys has a free slot of its own at
//!   `slot(h, d)`: `h`'s low S bits plus `d`, xored with `h >> S`'s bits;
//! - a slot holds a taken bit, `h >> S` (31 - I bits) and the id: one 32-bit word.
//!
//! A lookup reads the bucket's displacement (8 or 16 KiB of them, mostly in L1) and one
//! slot, with no branch. It is exact with no key stored: a slot and the `h >> S` it holds
//! give `h` back (the bucket is in `h >> S`, so `d` is known, and the low bits are the
//! slot undone), and `h` is a bijection, so a slot holding this pair's `h >> S` holds
//! this pair. A free slot (taken bit 0) matches no pair.

/// The most bits an id may take here, and the fewest a table gives them.
const MAX_ID_BITS: u32 = 16;
const MIN_ID_BITS: u32 = 15;

/// Odd, so multiplying by it is a bijection of 32 bits.
const MIX: u32 = 0x9E37_79B1;

/// Buckets are this power of two fewer than the slots: at most 8 keys a bucket on
/// average, as the table is at most half full.
const BUCKET_SHIFT: u32 = 4;

/// A slot's taken bit.
const TAKEN: u32 = 1 << 31;

#[derive(Debug, Clone)]
pub struct PerfectPairs {
    /// `TAKEN | (h >> S) << I | id`, or 0: free; 2^S of them, `S = I + 1`.
    slots: Box<[u32]>,
    /// Each bucket's displacement.
    shifts: Box<[u16]>,
    /// `2^S - 1`: a slot index's bits of `h`.
    slot_mask: u32,
    /// `2^I - 1`: an id's bits of a slot.
    id_mask: u32,
    /// `32 - log2(buckets)`: `h >> bucket_shift` is a bucket.
    bucket_shift: u32,
}

impl PerfectPairs {
    /// The table of `pairs` (left, right, id), every id below `id_bound`; None when the ids
    /// take more than [`MAX_ID_BITS`] or a bucket finds no displacement (the caller keeps
    /// the general table).
    pub fn build(pairs: &[(u32, u32, u32)], id_bound: usize) -> Option<Self> {
        let id_bits = id_bits(id_bound)?;
        // A vocabulary has no more pairs than ids, so at most half of 2^(I+1) slots are
        // taken.
        if pairs.len() > 1 << id_bits {
            return None;
        }
        let slot_bits = id_bits + 1;
        let mut table = Self {
            slots: vec![0; 1 << slot_bits].into_boxed_slice(),
            shifts: vec![0; 1 << (slot_bits - BUCKET_SHIFT)].into_boxed_slice(),
            slot_mask: (1 << slot_bits) - 1,
            id_mask: (1 << id_bits) - 1,
            bucket_shift: 32 - (slot_bits - BUCKET_SHIFT),
        };
        let mut buckets: Vec<Vec<(u32, u32)>> = vec![Vec::new(); table.shifts.len()];
        for &(left, right, id) in pairs {
            debug_assert!(left.max(right).max(id) <= table.id_mask, "ids below the bound");
            let h = mix(left, right);
            buckets[(h >> table.bucket_shift) as usize].push((h, id));
        }
        // The largest buckets first, while most slots are free.
        let mut order: Vec<usize> =
            (0..buckets.len()).filter(|&b| !buckets[b].is_empty()).collect();
        order.sort_by_key(|&b| std::cmp::Reverse(buckets[b].len()));
        let mut wanted: Vec<usize> = Vec::new();
        for b in order {
            let keys = &buckets[b];
            let shift = (0..=u16::MAX).find(|&d| {
                wanted.clear();
                keys.iter().all(|&(h, _)| {
                    let s = table.slot(h, d) as usize;
                    let free = table.slots[s] == 0 && !wanted.contains(&s);
                    wanted.push(s);
                    free
                })
            })?;
            table.shifts[b] = shift;
            for (&(h, id), &s) in keys.iter().zip(&wanted) {
                table.slots[s] = table.tag(h) | id;
            }
        }
        Some(table)
    }

    /// The bytes of a table of ids below `id_bound`, if it can hold them.
    pub fn bytes_for(id_bound: usize) -> Option<usize> {
        let slot_bits = id_bits(id_bound)? + 1;
        Some(4 << slot_bits | 2 << (slot_bits - BUCKET_SHIFT))
    }

    /// The slot of the key of mix `h` in a bucket of displacement `d`: `h`'s low S bits
    /// moved by `d`, xored with its high bits, so that two keys of a bucket with the same
    /// low bits still take two slots (and keys with the same high bits take two slots
    /// whatever `d`). The slot and the high bits give `h` back.
    #[inline(always)]
    fn slot(&self, h: u32, d: u16) -> u32 {
        // The high bits shifted down by 16 (S >= 16): below 2^S, one value for each.
        (h.wrapping_add(u32::from(d)) ^ (h & !self.slot_mask) >> 16) & self.slot_mask
    }

    /// The bits above a slot's id for the key of mix `h`: taken, and `h >> S` (`S = I + 1`).
    #[inline(always)]
    fn tag(&self, h: u32) -> u32 {
        TAKEN | (h & !self.slot_mask) >> 1
    }

    /// The id of (left, right)'s joined token, if they make one; any ids.
    #[inline]
    pub fn get(&self, left: u32, right: u32) -> Option<u32> {
        // Ids past the slots' bits are in no slot, and would alias another pair.
        if left.max(right) > self.id_mask {
            return None;
        }
        self.get_below_bound(left, right)
    }

    /// [`Self::get`] for ids below the table's bound, unchecked.
    #[inline]
    pub fn get_below_bound(&self, left: u32, right: u32) -> Option<u32> {
        Some(self.join(left, right, u32::MAX)).filter(|&id| id != u32::MAX)
    }

    /// The id of (left, right)'s joined token, or `none`; both ids below the table's bound
    /// (past it the answer may be another pair's). No branch: whether a pair is held
    /// follows no pattern a predictor learns.
    #[inline(always)]
    pub fn join(&self, left: u32, right: u32, none: u32) -> u32 {
        let h = mix(left, right);
        // SAFETY: `h >> bucket_shift` is below 2^(32 - bucket_shift), the buckets' number.
        let d = unsafe { *self.shifts.get_unchecked((h >> self.bucket_shift) as usize) };
        // SAFETY: a slot is masked to the 2^S slots.
        let word = unsafe { *self.slots.get_unchecked(self.slot(h, d) as usize) };
        // The pair's slot holds its tag above its id: with the tag taken away, only the id.
        super::pairs::at_most_or(word ^ self.tag(h), self.id_mask, none)
    }
}

/// The bits a table gives ids below `id_bound` (`I`): `h >> S` (31 - I bits with
/// `S = I + 1`), the id and the taken bit fill one word.
fn id_bits(id_bound: usize) -> Option<u32> {
    let bits = id_bound.next_power_of_two().trailing_zeros().max(MIN_ID_BITS);
    (bits <= MAX_ID_BITS).then_some(bits)
}

/// The key's bijection: a multiply (its top bits depend on every bit of the key), then
/// the top half folded onto the bottom (so the low bits do too).
#[inline(always)]
fn mix(left: u32, right: u32) -> u32 {
    let x = (left << 16 | right).wrapping_mul(MIX);
    x ^ x >> 16
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::Rng;
    use std::collections::HashMap;

    /// Every pair held is found, and no other pair is, for vocabularies from tiny to
    /// 2^16 ids, full (every id a pair's) and sparse.
    #[test]
    fn finds_exactly_what_it_holds() {
        let mut rng = Rng(5);
        for (bound, n) in [
            (16usize, 10usize),
            (300, 44),
            (1000, 700),
            (32_768, 32_512),
            (65_536, 65_000),
            (50_000, 3_000),
        ] {
            let mut held: HashMap<(u32, u32), u32> = HashMap::new();
            while held.len() < n {
                let (l, r) = (rng.next() as u32 % bound as u32, rng.next() as u32 % bound as u32);
                held.insert((l, r), rng.next() as u32 % bound as u32);
            }
            let pairs: Vec<_> = held.iter().map(|(&(l, r), &id)| (l, r, id)).collect();
            let t = PerfectPairs::build(&pairs, bound).expect("placed");
            for (&(l, r), &id) in &held {
                assert_eq!(t.join(l, r, u32::MAX), id);
            }
            for _ in 0..200_000 {
                let (l, r) = (rng.next() as u32 % bound as u32, rng.next() as u32 % bound as u32);
                assert_eq!(t.join(l, r, u32::MAX), held.get(&(l, r)).copied().unwrap_or(u32::MAX));
            }
        }
        assert!(PerfectPairs::build(&[], 1 << 17).is_none());
        assert!(PerfectPairs::build(&[], 1 << 16).is_some());
    }
}
