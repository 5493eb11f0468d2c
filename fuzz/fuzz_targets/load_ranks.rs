//! Loading a tiktoken ranks file or a Hugging Face vocabulary (token bytes by id, special
//! tokens with ids, as `CoreTokenizer.from_ranks` builds them) never panics: any input is
//! a tokenizer that round-trips, or an error.
#![no_main]

#[path = "load_common.rs"]
mod load_common;

use bytebpe::vocab::Vocab;
use bytebpe::Tokenizer;
use libfuzzer_sys::fuzz_target;
use load_common::{check, Input};

fuzz_target!(|data: &[u8]| {
    let mut input = Input { data };
    let pattern = input.pattern();
    let specials = input.specials();
    // Most inputs start from the 256 bytes so that merged tokens get a chance.
    let mut ranks: Vec<(Vec<u8>, u32)> = if !input.byte().is_multiple_of(4) {
        (0..=255u8).map(|b| (vec![b], b as u32)).collect()
    } else {
        vec![]
    };
    for _ in 0..input.byte() % 32 {
        ranks.push((input.bytes(8), input.id()));
    }
    let text = input.data;
    if let Ok(tok) =
        Tokenizer::build(pattern, specials, |reserved| Vocab::from_ranks(ranks, reserved))
    {
        check(&tok, text);
    }
});
