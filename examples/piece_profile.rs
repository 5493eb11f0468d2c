//! Where merging's work is: the pieces of held-out documents by length class, how many
//! are whole tokens, how many of the others are distinct (what a piece cache of any size
//! could save at best), and the time to merge each class without the cache.
//!
//! ```text
//! cargo run --release --example piece_profile -- RANKS DOCS [ROUNDS]
//! ```
//!
//! RANKS and DOCS as for `encode_profile`; each class's time is the fastest of ROUNDS
//! (default 5).

#[path = "common/ranks.rs"]
mod ranks;

use std::collections::HashSet;
use std::time::Instant;

use bytebpe::encode::encode_piece_parts;
use bytebpe::pretokenize::Pattern;

/// The classes' first lengths; the last class has no end.
const FROM: [usize; 7] = [1, 3, 9, 17, 33, 65, 128];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let vocab = ranks::read_vocab(&args[0]);
    let rounds: usize = args.get(2).map_or(5, |r| r.parse().expect("rounds"));
    let pattern = Pattern::new("cl100k").expect("pattern");
    let data = std::fs::read(&args[1]).expect("read DOCS");
    let mut classes: Vec<Vec<&[u8]>> = vec![Vec::new(); FROM.len()];
    let (mut pieces, mut tokens, mut token_bytes) = (0usize, 0usize, 0usize);
    let mut distinct: HashSet<&[u8]> = HashSet::new();
    for doc in data.split(|&b| b == 0) {
        let text = std::str::from_utf8(doc).expect("DOCS must be UTF-8");
        pattern
            .split_text(text, |p| {
                pieces += 1;
                if vocab.rank(p).is_some() {
                    tokens += 1;
                    token_bytes += p.len();
                } else {
                    if p.len() >= 3 {
                        distinct.insert(p);
                    }
                    classes[FROM.iter().rposition(|&from| p.len() >= from).expect("len")].push(p);
                }
            })
            .expect("built-in patterns never fail");
    }
    let merged: usize = classes[1..].iter().map(Vec::len).sum();
    println!(
        "{pieces} pieces of {} bytes: {tokens} whole tokens ({token_bytes} bytes); \
         {merged} of 3 bytes or more merged, {} of them distinct",
        data.len(),
        distinct.len()
    );
    let mut ids = Vec::new();
    for (class, pieces) in classes.iter().enumerate() {
        let bytes: usize = pieces.iter().map(|p| p.len()).sum();
        let mut fastest = f64::MAX;
        for _ in 0..rounds.max(1) {
            ids.clear();
            let start = Instant::now();
            for piece in pieces {
                encode_piece_parts(&vocab, piece, &mut ids);
            }
            fastest = fastest.min(start.elapsed().as_secs_f64());
        }
        let to = FROM.get(class + 1).map_or(String::from("..."), |to| format!("{}", to - 1));
        println!(
            "{:>3}-{to:<3} bytes: {:>8} pieces, {bytes:>9} bytes, {:>8} ids; merged in {:.4} s, \
             {:.0} ns a piece",
            FROM[class],
            pieces.len(),
            ids.len(),
            fastest,
            fastest * 1e9 / pieces.len().max(1) as f64
        );
    }
}
