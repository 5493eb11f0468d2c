//! The pairs one merge changes, named by the token next to the merged pair: every pair a
//! merge of (a, b) into t changes is (x, a) or (b, y) (lost; besides (a, b) itself) or
//! (x, t) or (t, y) (gained), so within one merge a side and the other token name it,
//! and an array indexed by that token stands in for a hash table of pairs.

use crate::Rank;

/// Which side of a merge a changed pair is on.
#[derive(Clone, Copy)]
pub enum Side {
    /// (x, a), lost.
    LostLeft = 0,
    /// (b, y), lost.
    LostRight = 1,
    /// (x, t), gained.
    GainedLeft = 2,
    /// (t, y), gained.
    GainedRight = 3,
}

impl Side {
    /// The side and other token of `lost`, a pair a merge of `merged` took an occurrence
    /// of: (x, a) on the left by x, else (b, y) on the right by y. One slot per pair.
    #[inline]
    pub fn of_lost(lost: (Rank, Rank), merged: (Rank, Rank)) -> (Side, Rank) {
        match lost {
            (x, a) if a == merged.0 => (Side::LostLeft, x),
            (b, y) => {
                debug_assert_eq!(b, merged.1, "a lost pair not next to the merged one");
                (Side::LostRight, y)
            }
        }
    }

    /// The side and other token of `gained`, a pair a merge into `token` made an
    /// occurrence of: (x, token) on the left by x, else (token, y) on the right by y; so
    /// (token, token) is always on the left, and every such pair has one slot.
    #[inline]
    pub fn of_gained(gained: (Rank, Rank), token: Rank) -> (Side, Rank) {
        match gained {
            (x, t) if t == token => (Side::GainedLeft, x),
            (t, y) => {
                debug_assert_eq!(t, token, "a gained pair without the new token");
                (Side::GainedRight, y)
            }
        }
    }
}

/// A number for each pair one merge changes (its id in the pair index, or its place in a
/// rewrite's list of changes), by side and other token: the same neighbour recurs at many
/// occurrences (a space before a word, `e` after `th`), and an array read costs less
/// than a hash lookup. Valid until [`NearIds::forget`] (pair ids are freed after a merge).
#[derive(Default)]
pub struct NearIds {
    /// (stamp, id) by other token, for each side; current when the stamp is `stamp`.
    slots: Vec<[(u32, u32); 4]>,
    /// The current merge's stamp (bumped to forget every slot at once).
    stamp: u32,
}

impl NearIds {
    /// Forgets every id (call at the start of each merge).
    pub fn forget(&mut self) {
        self.stamp += 1;
        if self.stamp == u32::MAX {
            self.slots.fill([(0, 0); 4]);
            self.stamp = 1;
        }
    }

    /// The id of the pair on `side` with `other` as its other token, from `lookup` the
    /// first time in a merge (None, and nothing kept, if `lookup` gives none).
    #[inline]
    pub fn get(
        &mut self,
        side: Side,
        other: u32,
        lookup: impl FnOnce() -> Option<u32>,
    ) -> Option<u32> {
        let stamp = self.stamp;
        let slot = self.slot(side, other);
        if slot.0 == stamp {
            return Some(slot.1);
        }
        let id = lookup()?;
        *slot = (stamp, id);
        Some(id)
    }

    /// As [`NearIds::get`], for a lookup that always gives an id; true with it the first
    /// time in a merge (when `lookup` ran).
    #[inline(always)]
    pub fn id(&mut self, side: Side, other: u32, lookup: impl FnOnce() -> u32) -> (u32, bool) {
        let stamp = self.stamp;
        let slot = self.slot(side, other);
        let first = slot.0 != stamp;
        if first {
            *slot = (stamp, lookup());
        }
        (slot.1, first)
    }

    #[inline(always)]
    fn slot(&mut self, side: Side, other: u32) -> &mut (u32, u32) {
        let i = other as usize;
        if i >= self.slots.len() {
            self.slots.resize(i + 1, [(0, 0); 4]);
        }
        &mut self.slots[i][side as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_ids_last_one_merge() {
        let mut near = NearIds::default();
        near.forget();
        assert_eq!(near.get(Side::LostLeft, 5, || Some(9)), Some(9));
        assert_eq!(near.get(Side::LostLeft, 5, || Some(1)), Some(9));
        assert_eq!(near.get(Side::LostRight, 5, || None), None);
        assert_eq!(near.get(Side::LostRight, 5, || Some(2)), Some(2));
        near.forget();
        assert_eq!(near.get(Side::LostLeft, 5, || Some(3)), Some(3));
        near.stamp = u32::MAX - 1;
        near.forget();
        assert_eq!(near.get(Side::LostRight, 5, || Some(4)), Some(4));
        // The first lookup of a slot in a merge says so (the merge's risen pairs).
        assert_eq!(near.id(Side::GainedLeft, 70, || 6), (6, true));
        assert_eq!(near.id(Side::GainedLeft, 70, || 8), (6, false));
        assert_eq!(near.id(Side::GainedRight, 70, || 8), (8, true));
        near.forget();
        assert_eq!(near.id(Side::GainedLeft, 70, || 7), (7, true));
    }
}
