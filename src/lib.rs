//! bytebpe: a byte-level BPE trainer and encoder.
//!
//! The core is plain Rust; the Python binding lives in `py` behind the `python` feature,
//! so `cargo test` never links libpython. See `docs/design.md` for how the parts fit.
//!
//! The modules are listed in layers: each imports only from the modules above it
//! (`tests/layers.rs` checks this), so none import each other.

// Layer 0: nothing from the crate but `Rank`.
pub mod document;
pub mod error;
pub mod hash_parts;
pub mod helpers;
pub mod huge_pages;
pub mod parallel;
pub mod prefetch;
pub mod utf32;
pub mod utf8;
// Layer 1: building blocks.
pub mod fingerprint;
pub mod interrupt;
pub mod ledger;
pub mod ordered;
pub mod pretokenize;
pub mod special;
pub mod vocab;
// Layer 2: encoding, decoding, the tokenizer, reading input.
pub mod decode;
pub mod encode;
pub mod read;
pub mod tokenizer;
// Layer 3: training.
pub mod train;

#[cfg(feature = "python")]
mod py;

#[cfg(test)]
mod test_rng;

/// Every program built on the crate (the Python module, the examples, the tests) takes
/// its large blocks on huge pages where the system allows (`huge_pages.rs`).
#[global_allocator]
static ALLOCATOR: huge_pages::HugePages = huge_pages::HugePages;

pub use error::{Error, Result};
pub use tokenizer::Tokenizer;
pub use vocab::Vocab;

/// A token id. Equal to its tiktoken rank.
pub type Rank = u32;
