//! The vocabulary file the encoding examples read: one token a line, its bytes in hex,
//! a space, its rank.

use bytebpe::vocab::Vocab;

/// The vocabulary in the file at `path` (panics, naming what was wrong, on a bad file:
/// these are profiling tools).
pub fn read_vocab(path: &str) -> Vocab {
    let text = std::fs::read_to_string(path).expect("read RANKS");
    let ranks = text
        .lines()
        .map(|line| {
            let (hex, rank) = line.split_once(' ').expect("hex rank");
            let bytes = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
                .collect();
            (bytes, rank.parse().expect("rank"))
        })
        .collect();
    Vocab::from_ranks(ranks, &[]).expect("vocabulary")
}
