//! When training stops, and what it reports while it runs.

use std::time::Duration;

use crate::error::Result;
use crate::vocab::MergeRecord;

/// When training stops.
#[derive(Debug, Clone, Copy)]
pub struct StopRule {
    /// New tokens to create (duplicate-token merges do not count).
    pub new_tokens: usize,
    /// Stop when the best pair occurs fewer times than this.
    pub min_frequency: u64,
    /// Threads for the parallel parts (default: all cores); never changes the result.
    pub threads: Option<usize>,
    /// Whether memory beyond the budgeted may be held for a moment (no memory budget):
    /// then the first pair count runs on all threads.
    pub spare_memory: bool,
}

/// What training reports, at most every `REPORT_EVERY` and once at the end.
#[derive(Debug, Clone, Copy)]
pub struct Progress<'a> {
    /// New tokens created so far (replayed ones included).
    pub created: usize,
    /// Merges made since the previous report, in order (never replayed ones).
    pub new_merges: &'a [MergeRecord],
}

/// Receives progress; returning an error (e.g. `Error::Interrupted`) stops training.
pub type Observer<'a> = dyn FnMut(Progress<'_>) -> Result<()> + 'a;

/// How often training reports at most.
pub const REPORT_EVERY: Duration = Duration::from_millis(100);
