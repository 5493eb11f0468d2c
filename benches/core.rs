//! Criterion benches of the core's hot paths, with byte throughput, on the bundled sample
//! corpus (python/bytebpe/data/sample.jsonl.gz, 1.6 MB of English, code, multilingual
//! text and emoji):
//!
//! ```text
//! cargo bench --bench core                 # all
//! cargo bench --bench core -- encode       # one group
//! ```
//!
//! pretokenize: the hand-written splitters (and fancy-regex for reference); count: word
//! counting on 1 thread and all; merge: the merge loop alone on counted words; encode:
//! ordinary encoding of the corpus and of one long piece (the heap path).

use std::io::Read;

use bytebpe::document::Document;
use bytebpe::pretokenize::Pattern;
use bytebpe::special::SpecialTokens;
use bytebpe::train::{self, TrainConfig, WordCounter};
use bytebpe::Tokenizer;
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};

fn sample() -> Vec<String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/python/bytebpe/data/sample.jsonl.gz");
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).expect("the bundled sample"))
        .read_to_string(&mut text)
        .expect("gzip text");
    text.lines()
        .map(|line| {
            let row: serde_json::Value = serde_json::from_str(line).expect("a JSON row");
            row["text"].as_str().expect("a text field").to_owned()
        })
        .collect()
}

fn bytes_of(docs: &[String]) -> u64 {
    docs.iter().map(|d| d.len() as u64).sum()
}

fn counted(docs: &[String], threads: usize) -> WordCounter {
    let mut counter =
        WordCounter::new(Pattern::new("cl100k").unwrap(), SpecialTokens::default(), None);
    let batch: Vec<Document> =
        docs.iter().map(|d| Document { data: d.as_bytes(), is_text: true }).collect();
    counter.add_documents(&batch, 0, Some(threads)).unwrap();
    counter
}

fn trained(docs: &[String], vocab_size: usize) -> Tokenizer {
    let config = TrainConfig { vocab_size, min_frequency: 2, threads: None };
    train::train(counted(docs, 2), config, None, &[], &mut |_| Ok(())).unwrap()
}

fn pretokenize(c: &mut Criterion) {
    let docs = sample();
    let mut group = c.benchmark_group("pretokenize");
    group.throughput(Throughput::Bytes(bytes_of(&docs)));
    for name in ["gpt2", "cl100k", "o200k"] {
        let pattern = Pattern::new(name).unwrap();
        group.bench_function(name, |b| {
            b.iter(|| {
                let mut pieces = 0usize;
                for doc in &docs {
                    pattern.split_text(doc, |_| pieces += 1).unwrap();
                }
                pieces
            })
        });
    }
    let pattern = Pattern::new("cl100k").unwrap();
    group.sample_size(10);
    group.bench_function("cl100k-fancy-regex", |b| {
        b.iter(|| {
            let mut pieces = 0usize;
            for doc in &docs {
                pattern.split_text_with_regex(doc, |_| pieces += 1).unwrap();
            }
            pieces
        })
    });
    group.finish();
}

fn count(c: &mut Criterion) {
    let docs = sample();
    let mut group = c.benchmark_group("count");
    group.throughput(Throughput::Bytes(bytes_of(&docs)));
    for threads in [1, 2] {
        group.bench_function(format!("cl100k-{threads}-threads"), |b| {
            b.iter(|| counted(&docs, threads).distinct_words())
        });
    }
    group.finish();
}

fn merge(c: &mut Criterion) {
    let docs = sample();
    let mut group = c.benchmark_group("merge");
    group.sample_size(10);
    // Throughput in bytes of the corpus the words came from; merges/s = 3840 / time.
    group.throughput(Throughput::Bytes(bytes_of(&docs)));
    group.bench_function("4096-tokens", |b| {
        b.iter_batched(
            || counted(&docs, 2),
            |counter| {
                let config = TrainConfig { vocab_size: 4096, min_frequency: 2, threads: None };
                train::train(counter, config, None, &[], &mut |_| Ok(())).unwrap()
            },
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

fn encode(c: &mut Criterion) {
    let docs = sample();
    let tok = trained(&docs, 8192);
    let mut group = c.benchmark_group("encode");
    group.throughput(Throughput::Bytes(bytes_of(&docs)));
    group.bench_function("ordinary-8192", |b| {
        b.iter(|| docs.iter().map(|d| tok.encode_ordinary(d).unwrap().len()).sum::<usize>())
    });
    let long = "ab".repeat(50_000);
    group.throughput(Throughput::Bytes(long.len() as u64));
    group.bench_function("one-100kB-piece", |b| {
        b.iter(|| tok.encode_ordinary(&long).unwrap().len())
    });
    group.finish();
}

criterion_group!(benches, pretokenize, count, merge, encode);
criterion_main!(benches);
