//! Where the splitters send their pieces. The 64-byte windows (`blocks/`) find several
//! pieces at once, as a mask of where they end; a sink that stores pieces can take them
//! in one loop of its own ([`Sink::pieces`]), its count in a register, instead of one
//! call each that loads and stores it through the sink (about a third of a counted
//! piece's cost in the splitter). A closure is a sink through [`Each`].

/// Takes the pieces of a text in order.
pub trait Sink<'t> {
    fn piece(&mut self, piece: &'t [u8]);

    /// Takes the pieces of `bytes` from `from` to `pos + k` for each set bit `k` of `ends`,
    /// in rising order, each starting where the one before ends (`from <= pos + k` and
    /// `pos + 63 < bytes.len()`), exactly as [`Sink::piece`] would one by one. Returns
    /// where the last ends (`from` if `ends` is 0).
    #[inline(always)]
    fn pieces(&mut self, bytes: &'t [u8], from: usize, pos: usize, ends: u64) -> usize {
        each_piece(bytes, from, pos, ends, |piece| self.piece(piece))
    }
}

/// Calls `take` with each piece [`Sink::pieces`] is given, in order; returns where the
/// last ends. A sink that stores pieces calls it with a closure over a local count of
/// the pieces it holds, which the compiler keeps in a register.
#[inline(always)]
pub fn each_piece<'t>(
    bytes: &'t [u8],
    mut from: usize,
    pos: usize,
    mut ends: u64,
    mut take: impl FnMut(&'t [u8]),
) -> usize {
    debug_assert!(from <= pos && (ends == 0 || pos + 63 < bytes.len()));
    while ends != 0 {
        let to = pos + ends.trailing_zeros() as usize;
        // SAFETY: `from <= to <= pos + 63 < bytes.len()` (what `Sink::pieces` is given:
        // the ends rise from `from`, inside the window); the checks cost a tenth of
        // storing a piece.
        take(unsafe { bytes.get_unchecked(from..to) });
        from = to;
        ends &= ends - 1;
    }
    from
}

/// A closure as a [`Sink`], called with each piece.
pub struct Each<F>(pub F);

impl<'t, F: FnMut(&'t [u8])> Sink<'t> for Each<F> {
    #[inline(always)]
    fn piece(&mut self, piece: &'t [u8]) {
        (self.0)(piece);
    }
}
