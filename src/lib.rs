//! bytebpe: a byte-level BPE trainer and encoder.
//!
//! The core is plain Rust; the Python binding lives in [`py`] behind the `python` feature,
//! so `cargo test` never links libpython. See `docs/design.md` for how the parts fit.

pub mod decode;
pub mod encode;
pub mod error;
pub mod ledger;
pub mod parallel;
pub mod pretokenize;
pub mod read;
pub mod special;
pub mod tokenizer;
pub mod train;
pub mod vocab;

#[cfg(feature = "python")]
mod py;

pub use error::{Error, Result};
pub use tokenizer::Tokenizer;
pub use vocab::Vocab;

/// A token id. Equal to its tiktoken rank.
pub type Rank = u32;
