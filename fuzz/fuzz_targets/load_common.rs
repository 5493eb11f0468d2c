//! Shared by the loading targets: a cursor over the fuzzer's bytes that reads the fields
//! a tokenizer file holds, and the checks every loaded tokenizer must pass.

use bytebpe::{Rank, Tokenizer};

/// Reads little fields from the input; past its end every read gives zeros/empty.
pub struct Input<'a> {
    pub data: &'a [u8],
}

impl Input<'_> {
    pub fn byte(&mut self) -> u8 {
        let (&b, rest) = self.data.split_first().unwrap_or((&0, &[]));
        self.data = rest;
        b
    }

    pub fn bytes(&mut self, max: usize) -> Vec<u8> {
        let n = (self.byte() as usize).min(max).min(self.data.len());
        let (head, rest) = self.data.split_at(n);
        self.data = rest;
        head.to_vec()
    }

    /// An id: mostly small (so valid files are common), sometimes anything up to u32::MAX.
    pub fn id(&mut self) -> Rank {
        match self.byte() % 8 {
            0 => Rank::from_le_bytes([self.byte(), self.byte(), self.byte(), self.byte()]),
            1 => Rank::MAX - self.byte() as Rank,
            _ => u16::from_le_bytes([self.byte(), self.byte()]) as Rank % 600,
        }
    }

    pub fn pattern(&mut self) -> &'static str {
        ["gpt2", "cl100k", "o200k", r"\w+|\s+|[^\w\s]+"][self.byte() as usize % 4]
    }

    /// Up to 4 special tokens with ids, as a file's special_tokens field.
    pub fn specials(&mut self) -> Vec<(String, Rank)> {
        let n = self.byte() % 5;
        (0..n).map(|_| (String::from_utf8_lossy(&self.bytes(12)).into_owned(), self.id())).collect()
    }
}

/// A tokenizer that loaded must round-trip any bytes and encode its own special tokens.
pub fn check(tok: &Tokenizer, text: &[u8]) {
    let ids = tok.encode_bytes(text).expect("encode_bytes");
    assert_eq!(tok.decode_bytes(&ids).expect("decode"), text);
    if let Ok(text) = std::str::from_utf8(text) {
        let all = tok.encode(text, |_| true).expect("encode with specials");
        assert_eq!(tok.decode_bytes(&all).expect("decode").as_slice(), text.as_bytes());
    }
    for id in tok.special_ids() {
        tok.decode_bytes(&[id]).expect("a special id decodes");
    }
}
