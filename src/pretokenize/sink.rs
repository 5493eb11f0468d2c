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
/// last ends. Panics if those pieces are not in `bytes` (`from` past `pos`, or the window
/// past the end). A sink that stores pieces calls it with a closure over a local count
/// of the pieces it holds, which the compiler keeps in a register.
#[inline(always)]
pub fn each_piece<'t>(
    bytes: &'t [u8],
    from: usize,
    pos: usize,
    ends: u64,
    mut take: impl FnMut(&'t [u8]),
) -> usize {
    // Checked once a window instead of twice a piece (that cost a tenth of storing one).
    assert!(ends == 0 || (from <= pos && pos + 63 < bytes.len()), "pieces outside the text");
    each_end(from, pos, ends, |from, to| {
        // SAFETY: `pos <= to <= pos + 63 < bytes.len()` (the assertion), and `from <= to`:
        // the first `from` is at most `pos`, each later one the previous (lower) end.
        take(unsafe { bytes.get_unchecked(from..to) })
    })
}

/// [`each_piece`] by offsets: calls `take` with where each piece starts and ends, for a
/// sink that finds them by offset rather than by slice.
#[inline(always)]
pub fn each_end(
    mut from: usize,
    pos: usize,
    mut ends: u64,
    mut take: impl FnMut(usize, usize),
) -> usize {
    while ends != 0 {
        let to = pos + ends.trailing_zeros() as usize;
        take(from, to);
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
