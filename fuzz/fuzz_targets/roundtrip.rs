//! Any bytes encode and decode back to themselves; any text too, and its ids are the
//! same whether it is encoded as text or as bytes.
#![no_main]

use std::sync::OnceLock;

use bytebpe::pretokenize::Pattern;
use bytebpe::special::SpecialTokens;
use bytebpe::document::Document;
use bytebpe::train::{self, TrainConfig, WordCounter};
use bytebpe::Tokenizer;
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

fuzz_target!(|data: &[u8]| {
    let tok = tokenizer();
    let ids = tok.encode_bytes(data).unwrap();
    assert_eq!(tok.decode_bytes(&ids).unwrap(), data);
    if let Ok(text) = std::str::from_utf8(data) {
        assert_eq!(tok.encode_ordinary(text).unwrap(), ids);
    }
});
