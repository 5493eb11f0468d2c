//! Single-thread encoding of held-out documents with a given vocabulary, for profiling
//! (callgrind counts instructions reliably on a shared machine) and for checking that a
//! change keeps every id: it prints a hash of all ids. Under callgrind,
//! `--toggle-collect='*encode_all*'` counts the encoding alone.
//!
//! ```text
//! cargo run --release --example encode_profile -- RANKS DOCS [PATTERN] [REPEATS]
//! ```
//!
//! RANKS is a file of hex bytes, space, rank, one token a line; DOCS a file of
//! UTF-8 documents separated by NUL bytes; PATTERN defaults to cl100k.

#[path = "common/ranks.rs"]
mod ranks;

use std::hash::{Hash, Hasher};
use std::time::Instant;

use bytebpe::pretokenize::Pattern;
use bytebpe::tokenizer::Tokenizer;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let vocab = ranks::read_vocab(&args[0]);
    let pattern = Pattern::new(args.get(2).map_or("cl100k", String::as_str)).expect("pattern");
    let repeats: usize = args.get(3).map_or(1, |r| r.parse().expect("repeats"));
    let tok = Tokenizer::new(vocab, pattern, Vec::new()).expect("tokenizer");
    let data = std::fs::read(&args[1]).expect("read DOCS");
    let docs: Vec<&str> = data
        .split(|&b| b == 0)
        .map(|d| std::str::from_utf8(d).expect("DOCS must be UTF-8"))
        .collect();
    let t0 = Instant::now();
    let (tokens, hash) = encode_all(&tok, &docs, repeats);
    let s = t0.elapsed().as_secs_f64();
    let mb = (data.len() * repeats) as f64 / 1e6;
    println!(
        "{} docs, {mb:.2} MB, {tokens} tokens, ids hash {:016x}, {s:.3} s, {:.2} MB/s",
        docs.len(),
        hash,
        mb / s
    );
}

/// Encodes every document `repeats` times: the number of ids and their hash. Not inlined,
/// so `valgrind --tool=callgrind --toggle-collect=*encode_all*` counts the encoding alone.
#[inline(never)]
fn encode_all(tok: &Tokenizer, docs: &[&str], repeats: usize) -> (usize, u64) {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    let mut tokens = 0;
    for _ in 0..repeats {
        for doc in docs {
            let ids = tok.encode_ordinary(doc).expect("encode");
            tokens += ids.len();
            ids.hash(&mut hasher);
        }
    }
    (tokens, hasher.finish())
}
