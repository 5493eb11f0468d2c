//! Warm starts and seeds in the core: extending keeps ids and continues exactly where a
//! longer run would have gone.

use bytebpe::document::Document;
use bytebpe::pretokenize::Pattern;
use bytebpe::special::SpecialTokens;
use bytebpe::train::{self, warm, TrainConfig, WordCounter};
use bytebpe::{Error, Tokenizer};

fn corpus() -> Vec<String> {
    (0..3000u32)
        .map(|i| {
            let w = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"][(i % 6) as usize];
            format!("{w}{} {w} the {}\n", i % 37, i * 7919 % 1000)
        })
        .collect()
}

fn train(
    docs: &[String],
    specials: &[&str],
    vocab_size: usize,
    start: Option<&Tokenizer>,
) -> Tokenizer {
    let specials = specials.iter().map(|t| (t.to_string(), 0)).collect();
    let mut c = WordCounter::new(
        Pattern::new("cl100k").unwrap(),
        SpecialTokens::new(specials).unwrap(),
        None,
    );
    let batch: Vec<Document> =
        docs.iter().map(|d| Document { data: d.as_bytes(), is_text: true }).collect();
    c.add_documents(&batch, 0, Some(2)).unwrap();
    let config = TrainConfig { vocab_size, min_frequency: 1, threads: Some(2) };
    train::train(c, config, start, &[], &mut |_| Ok(())).unwrap()
}

/// Merged token bytes in id order, holes left out.
fn merged(tok: &Tokenizer) -> Vec<Vec<u8>> {
    tok.vocab().tokens()[256..].iter().filter(|t| !t.is_empty()).cloned().collect()
}

#[test]
fn extending_continues_exactly_where_a_longer_run_goes() {
    let docs = corpus();
    let short = train(&docs, &[], 400, None);
    let long = train(&docs, &[], 600, None);
    let extended = train(&docs, &[], 600, Some(&short));
    assert_eq!(extended.vocab().merges(), long.vocab().merges());
    assert_eq!(extended.vocab().tokens(), long.vocab().tokens());
}

#[test]
fn extending_keeps_special_ids_and_numbers_new_tokens_around_them() {
    let docs = corpus();
    let short = train(&docs, &["<|end|>"], 400, None);
    assert_eq!(short.specials().id(b"<|end|>"), Some(399));
    let extended = train(&docs, &["<|end|>", "<|pad|>"], 600, Some(&short));
    assert_eq!(extended.specials().id(b"<|end|>"), Some(399), "the old id is kept");
    assert!(extended.vocab().is_hole(399));
    assert!(extended.vocab().token(400).is_some(), "new tokens go around the hole");
    assert_eq!(extended.vocab_size(), 600);
    assert_eq!(extended.specials().id(b"<|pad|>"), Some(extended.vocab().len() as u32));
    // The same tokens, in the same order, as one longer run without special tokens.
    let long = train(&docs, &[], 598, None);
    assert_eq!(merged(&extended), merged(&long));
    let text = "alpha12 the 345 <|end|> gamma";
    let ids = extended.encode(text, |_| true).unwrap();
    assert!(ids.contains(&399));
    assert_eq!(extended.decode_bytes(&ids).unwrap(), text.as_bytes());
    for id in 0..short.vocab().len() as u32 {
        assert_eq!(extended.vocab().token(id), short.vocab().token(id), "id {id} moved");
    }
}

#[test]
fn extending_refuses_another_pattern_or_a_smaller_vocabulary() {
    let docs = corpus();
    let short = train(&docs, &[], 400, None);
    let mut c = WordCounter::new(Pattern::new("gpt2").unwrap(), SpecialTokens::default(), None);
    c.add_word(b"abc", 2).unwrap();
    let config = TrainConfig { vocab_size: 500, min_frequency: 1, threads: None };
    let err = train::train(c, config, Some(&short), &[], &mut |_| Ok(())).unwrap_err();
    assert!(matches!(&err, Error::InvalidConfig(m) if m.contains("keeps the pattern")), "{err}");
    let mut c = WordCounter::new(Pattern::new("cl100k").unwrap(), SpecialTokens::default(), None);
    c.add_word(b"abc", 2).unwrap();
    let config = TrainConfig { vocab_size: 399, min_frequency: 1, threads: None };
    let err = train::train(c, config, Some(&short), &[], &mut |_| Ok(())).unwrap_err();
    assert!(err.to_string().contains("smaller than the tokenizer it extends"), "{err}");
}

#[test]
fn seeds_become_tokens_before_training_and_training_builds_on_them() {
    let fresh = train(&[], &[], 256, None);
    let seeded = warm::seed(&fresh, &[b"    ".to_vec(), b"123".to_vec(), b"12".to_vec()]).unwrap();
    let spaces = seeded.vocab().rank(b"    ").expect("a token for four spaces");
    assert!(seeded.vocab().rank(b"123").is_some());
    assert_eq!(seeded.vocab().merges().iter().map(|m| m.count).max(), Some(0));
    assert_eq!(seeded.encode_ordinary("    ").unwrap(), vec![spaces]);
    let trained = train(&corpus(), &[], 400, Some(&seeded));
    assert_eq!(trained.vocab().rank(b"    "), Some(spaces));
    assert_eq!(trained.vocab_size(), 400);
    let err = warm::seed(&fresh, &[b"12345".to_vec()]).unwrap_err();
    assert!(err.to_string().contains("split by the pattern"), "{err}");
}
