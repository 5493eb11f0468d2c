//! Loading a bytebpe tokenizer file (a merge log replayed over the bytes, or token bytes
//! with the log of some of them, or a start tokenizer extended by a log, as
//! `CoreTokenizer.from_merges` / `from_tokens` / `extended` build them) never panics: any
//! input is a tokenizer that round-trips, or an error.
#![no_main]

#[path = "load_common.rs"]
mod load_common;

use bytebpe::train::warm;
use bytebpe::vocab::{MergeRecord, Vocab};
use bytebpe::Tokenizer;
use libfuzzer_sys::fuzz_target;
use load_common::{check, Input};

fn merges(input: &mut Input) -> Vec<MergeRecord> {
    (0..input.byte() % 48)
        .map(|_| MergeRecord {
            left: input.id() % 300,
            right: input.id() % 300,
            token: input.id(),
            count: input.byte() as u64,
        })
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input { data };
    let pattern = input.pattern();
    let specials = input.specials();
    let how = input.byte() % 3;
    let log = merges(&mut input);
    let built = match how {
        0 => Tokenizer::build(pattern, specials, |reserved| Vocab::from_merges(log, reserved)),
        1 => {
            let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
            for _ in 0..input.byte() % 16 {
                tokens.push(input.bytes(6));
            }
            Tokenizer::build(pattern, specials, |_| Vocab::from_tokens(tokens, log))
        }
        _ => {
            let more = merges(&mut input);
            let new_specials: Vec<String> = (0..input.byte() % 3)
                .map(|_| String::from_utf8_lossy(&input.bytes(6)).into_owned())
                .collect();
            Tokenizer::build(pattern, specials, |reserved| Vocab::from_merges(log, reserved))
                .and_then(|start| warm::extend(&start, more, &new_specials))
        }
    };
    if let Ok(tok) = built {
        check(&tok, input.data);
    }
});
