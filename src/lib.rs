//! bytebpe: a byte-level BPE trainer and encoder.
//!
//! The core is plain Rust; the Python binding lives in [`py`] behind the `python` feature,
//! so `cargo test` never links libpython. See `docs/design.md` for how the parts fit.

// Layer 0: no imports from the crate but `Rank` and `error`.
pub mod document;
pub mod error;
pub mod parallel;
pub mod utf8;
// Layer 1: building blocks.
pub mod fingerprint;
pub mod ledger;
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

pub use error::{Error, Result};
pub use tokenizer::Tokenizer;
pub use vocab::Vocab;

/// A token id. Equal to its tiktoken rank.
pub type Rank = u32;
