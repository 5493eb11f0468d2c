//! Reading documents from files and streams in bounded chunks: plain text or JSON Lines,
//! optionally gzip- or zstd-compressed, split into documents by line, by separator or
//! whole ([`split`]), long documents cut only where the pieces stay the same ([`cut`]).
//!
//! Memory: a batch of about [`BATCH_BYTES`] being counted, one being read, plus the
//! document being read when it is longer than the chunk size and has no safe cut.

pub mod cut;
pub mod jsonl;
pub mod open;
mod reader;
pub mod split;

pub use reader::{segments, DocumentReader, ReadOptions};
pub use split::{Batch, Delimit};

/// Bytes per batch handed from the reading thread to the counting threads (see
/// `crate::train::feed`). Each batch
/// ends with a fold of its partial maps into the word table, so batches much smaller
/// than this cost time (with 4 MiB, train_from_files used more CPU than the Python
/// reader's 16 MiB batches on 100 MB of code).
pub const BATCH_BYTES: usize = 8 << 20;
