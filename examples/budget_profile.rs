//! The memory budget's estimates against the resident memory each phase really adds: for
//! calibrating `train/budget.rs` (docs/design.md, "Memory budget").
//!
//! ```text
//! cargo run --release --example budget_profile -- DOCS [VOCAB_SIZE] [THREADS] [LIMIT_MIB]
//! ```
//!
//! DOCS is a file of UTF-8 documents separated by NUL bytes. Documents are counted in
//! batches of the budget's `batch_bytes` for LIMIT_MIB (default 256) with checkpoints at
//! its points, but pruning is switched off, so the table is the exact one. Prints, per
//! phase, the estimate and the peak resident memory above the baseline (the process with
//! the documents loaded): counting (the table's estimate; the peak includes the batches'
//! partial tables), then training (the merge loop's estimate, which is what the budget
//! holds to `merge_bytes`; the peak includes the hand-over from the table).

use bytebpe::document::Document;
use bytebpe::pretokenize::Pattern;
use bytebpe::special::SpecialTokens;
use bytebpe::train::{self, budget, Budget, TrainConfig, WordCounter};

/// (VmRSS, VmHWM) in bytes.
fn rss() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").expect("read /proc/self/status");
    let field = |name: &str| -> u64 {
        let line = status.lines().find(|l| l.starts_with(name)).expect("a VmRSS/VmHWM line");
        let kb: u64 = line.split_whitespace().nth(1).and_then(|v| v.parse().ok()).expect("kB");
        kb * 1024
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Resets VmHWM to the current VmRSS.
fn reset_peak() {
    std::fs::write("/proc/self/clear_refs", "5").expect("write /proc/self/clear_refs");
}

fn mb(n: u64) -> f64 {
    n as f64 / 1e6
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let data = std::fs::read(&args[0]).expect("read DOCS");
    let vocab_size: usize = args.get(1).map_or(32768, |v| v.parse().expect("vocab size"));
    let threads: usize = args.get(2).map_or(2, |v| v.parse().expect("threads"));
    let limit_mib: u64 = args.get(3).map_or(256, |v| v.parse().expect("limit in MiB"));
    let docs: Vec<Document> =
        data.split(|&b| b == 0).map(|d| Document { data: d, is_text: true }).collect();
    let mut b = Budget::new(limit_mib << 20).expect("a limit of at least 64 MiB");
    (b.table_high, b.table_low, b.merge_bytes) = (u64::MAX, u64::MAX, u64::MAX);
    let mut counter =
        WordCounter::new(Pattern::new("cl100k").unwrap(), SpecialTokens::default(), None)
            .with_budget(b);
    budget::release_free_memory();
    let (base, _) = rss();
    reset_peak();
    let (mut start, mut bytes) = (0, 0u64);
    for (i, d) in docs.iter().enumerate() {
        bytes += d.data.len() as u64;
        if bytes >= b.batch_bytes || i + 1 == docs.len() {
            counter.add_documents(&docs[start..=i], start as u64, Some(threads)).expect("count");
            (start, bytes) = (i + 1, 0);
        }
    }
    budget::release_free_memory();
    let (held, count_peak) = rss();
    let words = counter.distinct_words() as u64;
    let table = counter.table_bytes();
    let merge = counter.merge_bytes();
    reset_peak();
    let config = TrainConfig { vocab_size, min_frequency: 2, threads: Some(threads) };
    let tok = train::train(counter, config, None, &[], &mut |_| Ok(())).expect("train");
    let (_, train_peak) = rss();
    let per_word = |n: u64| n as f64 / words as f64;
    println!(
        "{} MB, {words} words, vocab {}; counting: estimate {:.1} MB ({:.1} B/word), held \
         {:.1} MB ({:.1} B/word), peak {:.1} MB ({:.1} B/word), estimate / peak {:.2}; \
         training: estimate {:.1} MB ({:.1} B/word), peak {:.1} MB ({:.1} B/word), estimate \
         / peak {:.2}",
        mb(data.len() as u64),
        tok.vocab_size(),
        mb(table),
        per_word(table),
        mb(held - base),
        per_word(held - base),
        mb(count_peak - base),
        per_word(count_peak - base),
        table as f64 / (count_peak - base) as f64,
        mb(merge),
        per_word(merge),
        mb(train_peak - base),
        per_word(train_peak - base),
        merge as f64 / (train_peak - base) as f64,
    );
}
