//! The training core without Python: hand-worked cases and determinism.

use bytebpe::document::Document;
use bytebpe::pretokenize::Pattern;
use bytebpe::special::SpecialTokens;
use bytebpe::train::{self, TrainConfig, WordCounter};
use bytebpe::vocab::MergeRecord;
use bytebpe::{Error, Tokenizer};

fn counter(pattern: &str) -> WordCounter {
    WordCounter::new(Pattern::new(pattern).unwrap(), SpecialTokens::default(), None)
}

fn train_words(words: &[(&[u8], u64)], vocab_size: usize) -> Vec<MergeRecord> {
    let mut c = counter("cl100k");
    for (w, n) in words {
        c.add_word(w, *n).unwrap();
    }
    let config = TrainConfig { vocab_size, min_frequency: 1, threads: None };
    let tok = train::train(c, config, None, &[], &mut |_| Ok(())).unwrap();
    tok.vocab().merges().to_vec()
}

fn ids(merges: &[MergeRecord]) -> Vec<(u32, u32, u32, u64)> {
    merges.iter().map(|m| (m.left, m.right, m.token, m.count)).collect()
}

const A: u32 = b'a' as u32;
const B: u32 = b'b' as u32;

#[test]
fn overlapping_pairs_count_every_position() {
    // "aaa" holds (a, a) twice; merged left to right it becomes [aa, a].
    let merges = train_words(&[(b"aaa", 1)], 257);
    assert_eq!(ids(&merges), vec![(A, A, 256, 2)]);
}

#[test]
fn ties_go_to_the_smallest_bytes() {
    // (a, b) and (b, a) both occur twice; (a, b) < (b, a) by bytes.
    let merges = train_words(&[(b"ab", 2), (b"ba", 2)], 257);
    assert_eq!(ids(&merges), vec![(A, B, 256, 2)]);
    // Tie between (b, b) and (a, b) where the left sides differ: "a" < "b".
    let merges = train_words(&[(b"bb", 3), (b"ab", 3)], 257);
    assert_eq!(ids(&merges), vec![(A, B, 256, 3)]);
}

#[test]
fn min_frequency_stops_training() {
    let mut c = counter("cl100k");
    c.add_word(b"abc", 3).unwrap();
    c.add_word(b"xy", 1).unwrap();
    let config = TrainConfig { vocab_size: 1000, min_frequency: 2, threads: None };
    let tok = train::train(c, config, None, &[], &mut |_| Ok(())).unwrap();
    // (a,b)=3, then (ab,c)=3; (x,y)=1 is below the threshold.
    assert_eq!(tok.vocab_size(), 258);
}

#[test]
fn counts_above_u32_do_not_overflow() {
    let big = 3 * (1u64 << 32) + 7;
    let merges = train_words(&[(b"ab", big), (b"abab", big)], 257);
    assert_eq!(ids(&merges), vec![(A, B, 256, 3 * big)]);
}

#[test]
fn pair_count_overflow_is_reported() {
    let mut c = counter("cl100k");
    c.add_word(b"ab", u64::MAX).unwrap();
    c.add_word(b"abc", 1).unwrap();
    let config = TrainConfig { vocab_size: 300, min_frequency: 1, threads: None };
    let err = train::train(c, config, None, &[], &mut |_| Ok(())).unwrap_err();
    assert!(matches!(err, Error::CountOverflow { .. }), "{err}");
}

#[test]
fn observer_errors_stop_training() {
    let mut c = counter("cl100k");
    c.add_word(b"abcdefgh", 2).unwrap();
    let config = TrainConfig { vocab_size: 300, min_frequency: 1, threads: None };
    let err = train::train(c, config, None, &[], &mut |_| Err(Error::Interrupted)).unwrap_err();
    assert_eq!(err, Error::Interrupted);
}

fn corpus() -> Vec<String> {
    // A deterministic pseudo-random corpus (xorshift), words from a small alphabet.
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    (0..400)
        .map(|_| {
            (0..60)
                .map(|_| {
                    let len = 1 + next() % 7;
                    let word: String =
                        (0..len).map(|_| (b'a' + (next() % 6) as u8) as char).collect();
                    if next() % 9 == 0 {
                        format!("{word}\n")
                    } else {
                        format!("{word} ")
                    }
                })
                .collect()
        })
        .collect()
}

fn train_docs(docs: &[String], batch: usize, threads: usize) -> Tokenizer {
    let mut c = counter("cl100k");
    for (i, chunk) in docs.chunks(batch).enumerate() {
        let docs: Vec<Document> =
            chunk.iter().map(|d| Document { data: d.as_bytes(), is_text: true }).collect();
        c.add_documents(&docs, (i * batch) as u64, Some(threads)).unwrap();
    }
    let config = TrainConfig { vocab_size: 600, min_frequency: 2, threads: Some(threads) };
    train::train(c, config, None, &[], &mut |_| Ok(())).unwrap()
}

#[test]
fn merges_do_not_depend_on_threads_or_batching() {
    let docs = corpus();
    let base = train_docs(&docs, 400, 1);
    assert!(base.vocab().merges().len() > 100);
    let mut tokens = base.vocab().tokens().to_vec();
    tokens.sort();
    tokens.dedup();
    assert_eq!(tokens.len(), base.vocab().len(), "no byte string twice");
    for (batch, threads) in [(1, 2), (7, 2), (33, 1), (400, 4)] {
        let other = train_docs(&docs, batch, threads);
        assert_eq!(
            other.vocab().merges(),
            base.vocab().merges(),
            "batch {batch}, {threads} threads"
        );
    }
}

/// Up to 65,536 tokens the merge loop keeps its words' tokens in 16 bits, above in 32:
/// both give the same merges (here the corpus runs out of pairs long before either size,
/// with words of every length, one of them long enough to be merged by position).
#[test]
fn merges_do_not_depend_on_the_width_of_token_ids() {
    let mut docs = corpus();
    let long: String = (0..700).map(|i| (b'a' + (i * i % 7) as u8) as char).collect();
    docs.push(format!("{long} {long} {long}"));
    let run = |vocab_size| {
        let mut c = counter("cl100k");
        let all: Vec<Document> =
            docs.iter().map(|d| Document { data: d.as_bytes(), is_text: true }).collect();
        c.add_documents(&all, 0, Some(2)).unwrap();
        let config = TrainConfig { vocab_size, min_frequency: 2, threads: Some(2) };
        train::train(c, config, None, &[], &mut |_| Ok(())).unwrap()
    };
    let narrow = run(65_536);
    let merges = narrow.vocab().merges();
    assert!(merges.len() > 1_000 && merges.len() < 65_280, "ran out of pairs: {}", merges.len());
    // The other words are at most 8 bytes.
    assert!(narrow.vocab().tokens().iter().any(|t| t.len() > 8), "the long word was merged");
    assert_eq!(run(65_537).vocab().merges(), merges);
    assert_eq!(run(1 << 20).vocab().merges(), merges);
}

#[test]
fn encoding_roundtrips_any_bytes() {
    let tok = train_docs(&corpus(), 400, 2);
    let data = b"abc \xff\xfe def\n\xe2\x82 aaaa bbbb \xf0\x9f\x98\x80".to_vec();
    let ids = tok.encode_bytes(&data).unwrap();
    assert_eq!(tok.decode_bytes(&ids).unwrap(), data);
}

#[test]
fn parallel_rewrites_of_big_merges_match_sequential() {
    // 40,000 distinct words sharing pairs, so the first merges touch more words than
    // the threshold of the parallel rewrite.
    let words: Vec<(Vec<u8>, u64)> =
        (0..40_000u64).map(|i| (format!("x{i:05}y").into_bytes(), 1 + i % 7)).collect();
    let run = |threads| {
        let mut c = counter("cl100k");
        for (w, n) in &words {
            c.add_word(w, *n).unwrap();
        }
        let config = TrainConfig { vocab_size: 400, min_frequency: 2, threads: Some(threads) };
        train::train(c, config, None, &[], &mut |_| Ok(())).unwrap().vocab().merges().to_vec()
    };
    let sequential = run(1);
    assert!(sequential[0].count > 40_000, "the first merge spans every word");
    assert_eq!(run(2), sequential);
    assert_eq!(run(3), sequential);
}
