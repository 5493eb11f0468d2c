//! Single-thread pre-tokenization throughput, hand-written splitters vs fancy-regex, and the
//! time of the million-character worst cases. Timings are printed, not asserted.
//!
//! ```text
//! cargo run --release --example pretokenize_throughput -- DOCS [PATTERN...]
//! cargo run --release --example pretokenize_throughput -- --once DOCS [PATTERN...]
//! ```
//!
//! DOCS is a file of UTF-8 documents separated by NUL bytes (e.g. the first 20 MB of the
//! `text` fields of ../shared/corpora/english.jsonl.gz); PATTERN defaults to all three
//! built-ins. Without DOCS only the worst cases run. With `--once`, each pattern splits
//! DOCS once in `split_all` and nothing else runs: for counting the splitter's instructions
//! under valgrind (`valgrind --tool=callgrind --toggle-collect='*split_all*' ...`), with the
//! class table already built.

use std::time::Instant;

use bytebpe::pretokenize::Pattern;

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--once") {
        args.remove(0);
        return once(&args);
    }
    let names: Vec<&str> = match args.get(1..) {
        Some(names) if !names.is_empty() => names.iter().map(String::as_str).collect(),
        _ => vec!["gpt2", "cl100k", "o200k"],
    };
    if let Some(path) = args.first() {
        let data = std::fs::read(path).expect("read DOCS");
        let docs: Vec<&str> = data
            .split(|&b| b == 0)
            .map(|d| std::str::from_utf8(d).expect("DOCS must be UTF-8"))
            .collect();
        let mb = data.len() as f64 / 1e6;
        println!("{path}: {} documents, {mb:.1} MB", docs.len());
        for name in &names {
            let pattern = Pattern::new(name).unwrap();
            // Warm up (class table, page cache), then take the best of a few runs (the
            // machine may be shared; the best run is the least disturbed one).
            pattern.split_text(docs[0], |_| {}).unwrap();
            let mut fast_pieces = 0;
            let fast = best_of(5, || {
                fast_pieces = 0;
                for doc in &docs {
                    pattern.split_text(doc, |_| fast_pieces += 1).unwrap();
                }
            });
            let (mut slow_pieces, mut failures) = (0, 0);
            let slow = best_of(2, || {
                (slow_pieces, failures) = (0, 0);
                for doc in &docs {
                    if pattern.split_text_with_regex(doc, |_| slow_pieces += 1).is_err() {
                        failures += 1;
                    }
                }
            });
            // Not timed: the two paths give the same pieces on every document.
            let differ = docs
                .iter()
                .filter(|doc| {
                    let (mut a, mut b) = (Vec::new(), Vec::new());
                    pattern.split_text(doc, |p| a.push(p)).unwrap();
                    pattern.split_text_with_regex(doc, |p| b.push(p)).is_ok() && a != b
                })
                .count();
            println!(
                "{name:>7}: hand-written {:7.1} MB/s, fancy-regex {:5.1} MB/s ({:.0}x); \
                 pieces {fast_pieces} vs {slow_pieces}, regex failures {failures}, \
                 documents split differently {differ}",
                mb / fast,
                mb / slow,
                slow / fast
            );
        }
    }
    for name in &names {
        let pattern = Pattern::new(name).unwrap();
        let mut worst = (0.0f64, "");
        for run in [" ", "\n", " \n", "\r\n", "a", "A", "1", "^", "'", "\u{301}", "A\u{301}", "中"]
        {
            let text = format!("{}x", run.repeat(1_000_000));
            let ms = best_of(3, || pattern.split_text(&text, |_| {}).unwrap()) * 1e3;
            if ms > worst.0 {
                worst = (ms, run);
            }
        }
        println!(
            "{name:>7}: slowest million-run case {:?} x 1e6 + \"x\": {:.1} ms",
            worst.1, worst.0
        );
    }
}

/// Splits DOCS once with each pattern (see the module comment).
fn once(args: &[String]) {
    let data = std::fs::read(args.first().expect("--once DOCS [PATTERN...]")).expect("read DOCS");
    for name in args.get(1..).unwrap_or_default() {
        let pattern = Pattern::new(name).unwrap();
        pattern.split_bytes(b"x", |_| {}).unwrap(); // builds the class table
        println!("{name:>7}: {} pieces", split_all(&pattern, &data));
    }
}

/// The number of pieces of `data`, documents separated by NUL bytes.
#[inline(never)]
fn split_all(pattern: &Pattern, data: &[u8]) -> usize {
    let mut pieces = 0;
    for doc in data.split(|&b| b == 0) {
        pattern.split_bytes(doc, |_| pieces += 1).unwrap();
    }
    pieces
}

/// The shortest of `runs` timings of `f`, in seconds.
fn best_of(runs: usize, mut f: impl FnMut()) -> f64 {
    (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}
