//! splitmix64: the seeded generator of the randomized tests, so every run tests the same
//! cases. One definition for the library's unit tests (`crate::test_rng`) and the
//! integration tests, which include this file with `#[path = "../src/test_rng.rs"]`
//! (they are separate crates and cannot see test-only library code).

pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in 0..n (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}
