//! Counting and the merge loop on documents, for profiling (callgrind counts instructions
//! reliably on a shared machine) and for checking that a change keeps every merge: it
//! prints a hash of the tokens and one of the merge records (left, right, token, count).
//!
//! ```text
//! cargo run --release --example train_profile -- DOCS [VOCAB_SIZE] [THREADS]
//! ```
//!
//! DOCS is a file of UTF-8 documents separated by NUL bytes; VOCAB_SIZE defaults to 8,192;
//! THREADS to 1 (one thread makes an instruction profile deterministic).

use std::hash::{Hash, Hasher};
use std::time::Instant;

use bytebpe::document::Document;
use bytebpe::pretokenize::Pattern;
use bytebpe::special::SpecialTokens;
use bytebpe::train::{self, TrainConfig, WordCounter};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let data = std::fs::read(&args[0]).expect("read DOCS");
    let vocab_size: usize = args.get(1).map_or(8192, |v| v.parse().expect("vocab size"));
    let threads: usize = args.get(2).map_or(1, |v| v.parse().expect("threads"));
    let docs: Vec<Document> =
        data.split(|&b| b == 0).map(|d| Document { data: d, is_text: true }).collect();
    let t0 = Instant::now();
    let mut counter =
        WordCounter::new(Pattern::new("cl100k").unwrap(), SpecialTokens::default(), None);
    counter.add_documents(&docs, 0, Some(threads)).expect("count");
    let counted = t0.elapsed().as_secs_f64();
    let config = TrainConfig { vocab_size, min_frequency: 2, threads: Some(threads) };
    let t1 = Instant::now();
    let tok = train::train(counter, config, None, &[], &mut |_| Ok(())).expect("train");
    let merged = t1.elapsed().as_secs_f64();
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    tok.vocab().tokens().hash(&mut hasher);
    let tokens_hash = hasher.finish();
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    for m in tok.vocab().merges() {
        (m.left, m.right, m.token, m.count).hash(&mut hasher);
    }
    println!(
        "{} MB, counting {counted:.3} s, merging {merged:.3} s, vocab {}, tokens hash \
         {tokens_hash:016x}, merges hash {:016x}",
        data.len() as f64 / 1e6,
        tok.vocab_size(),
        hasher.finish()
    );
}
