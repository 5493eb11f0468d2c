//! Any bytes encode and decode back to themselves; any text too, and its ids are the
//! same whether it is encoded as text or as bytes. The ids are also those of tiktoken's
//! rule applied naively to each piece (the lowest-ranked adjacent pair merges first,
//! leftmost on a tie), so every fast path of the encoder (keys read in place near the
//! text's ends, the vector mergers, the piece cache) stays exact on any input.
#![no_main]

use std::sync::OnceLock;

use bytebpe::document::Document;
use bytebpe::pretokenize::Pattern;
use bytebpe::special::SpecialTokens;
use bytebpe::train::{self, TrainConfig, WordCounter};
use bytebpe::vocab::Vocab;
use bytebpe::{Rank, Tokenizer};
use libfuzzer_sys::fuzz_target;

fn tokenizer() -> &'static Tokenizer {
    static TOKENIZER: OnceLock<Tokenizer> = OnceLock::new();
    TOKENIZER.get_or_init(|| {
        let text = "The quick brown fox jumps over the lazy dog. fn main() { let x = 42; }\n\
                    Ünïcödé text, 日本語のテキスト, emoji 😀🎉, numbers 1234567890.\n";
        let mut counter =
            WordCounter::new(Pattern::new("cl100k").unwrap(), SpecialTokens::default(), None);
        let docs: Vec<Document> =
            (0..20).map(|_| Document { data: text.as_bytes(), is_text: true }).collect();
        counter.add_documents(&docs, 0, Some(1)).unwrap();
        let config = TrainConfig { vocab_size: 400, min_frequency: 2, threads: Some(1) };
        train::train(counter, config, None, &[], &mut |_| Ok(())).unwrap()
    })
}

/// A piece's ids by tiktoken's rule, one merge at a time over byte strings.
fn naive(vocab: &Vocab, piece: &[u8]) -> Vec<Rank> {
    let mut parts: Vec<Vec<u8>> = piece.iter().map(|&b| vec![b]).collect();
    while let Some((_, i)) = (1..parts.len())
        .filter_map(|i| vocab.rank(&[&parts[i - 1][..], &parts[i]].concat()).map(|r| (r, i)))
        .min()
    {
        let right = parts.remove(i);
        parts[i - 1].extend(right);
    }
    parts.iter().map(|p| vocab.rank(p).expect("every byte and merge is a token")).collect()
}

fuzz_target!(|data: &[u8]| {
    let tok = tokenizer();
    let ids = tok.encode_bytes(data).unwrap();
    assert_eq!(tok.decode_bytes(&ids).unwrap(), data);
    let mut want = Vec::new();
    tok.pattern().split_bytes(data, |piece| want.extend(naive(tok.vocab(), piece))).unwrap();
    assert_eq!(ids, want);
    if let Ok(text) = std::str::from_utf8(data) {
        assert_eq!(tok.encode_ordinary(text).unwrap(), ids);
    }
});
