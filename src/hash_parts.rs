//! The parts the crate's byte-string hashes are built from: little-endian loads and the
//! 128-bit multiply that mixes them (wyhash's and rapidhash's mixer). The vocabulary's
//! token lookup (`vocab/lookup.rs`) and the counting table (`train/pieces.rs`) each build
//! their own hash from these, tuned to what they hash. Also the 8-byte key that sorts
//! byte strings mostly without reading them ([`prefix_key`]).

/// The 128-bit product of `a` and `b`, as (low, high) halves.
#[inline(always)]
pub const fn mum(a: u64, b: u64) -> (u64, u64) {
    let r = a as u128 * b as u128;
    (r as u64, (r >> 64) as u64)
}

/// The two halves of the 128-bit product of `a` and `b` folded together.
#[inline(always)]
pub const fn fold(a: u64, b: u64) -> u64 {
    let (lo, hi) = mum(a, b);
    lo ^ hi
}

/// The 8 bytes of `b` from `at`, little-endian.
#[inline(always)]
pub fn read8(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// The 4 bytes of `b` from `at`, little-endian.
#[inline(always)]
pub fn read4(b: &[u8], at: usize) -> u64 {
    u64::from(u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes")))
}

/// The first 8 bytes of `bytes`, zero-padded, as a big-endian number. Two byte strings
/// whose keys differ compare as their keys do: at the first byte where the keys differ,
/// either both have a byte there (and it decides), or the shorter is padding (a zero)
/// against a byte above zero, so it is a prefix of the longer and comes first. Equal keys
/// (a shared first 8 bytes, or trailing zero bytes) leave the order to the bytes.
#[inline]
pub fn prefix_key(bytes: &[u8]) -> u64 {
    let mut first = [0u8; 8];
    let n = bytes.len().min(8);
    first[..n].copy_from_slice(&bytes[..n]);
    u64::from_be_bytes(first)
}
