//! Merging alone: the pieces of held-out documents that are not whole tokens (3 to 127
//! bytes), merged again and again without the piece cache, for comparing builds of the
//! mergers (`encode_piece_parts`) with less noise than a whole encoding run. Prints the
//! fastest and the median of the rounds and a hash of the ids (equal across builds).
//!
//! ```text
//! cargo run --release --example merge_profile -- RANKS DOCS [ROUNDS]
//! ```
//!
//! RANKS is a file of hex bytes, space, rank, one token a line (as for `encode_profile`);
//! DOCS a file of UTF-8 documents separated by NUL bytes; ROUNDS defaults to 7.

#[path = "common/ranks.rs"]
mod ranks;

use std::time::Instant;

use bytebpe::encode::encode_piece_parts;
use bytebpe::pretokenize::Pattern;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let vocab = ranks::read_vocab(&args[0]);
    let pattern = Pattern::new("cl100k").expect("pattern");
    let rounds: usize = args.get(2).map_or(7, |r| r.parse().expect("rounds"));
    let data = std::fs::read(&args[1]).expect("read DOCS");
    let mut pieces: Vec<&[u8]> = Vec::new();
    for doc in data.split(|&b| b == 0) {
        let text = std::str::from_utf8(doc).expect("DOCS must be UTF-8");
        pattern
            .split_text(text, |p| {
                if (3..128).contains(&p.len()) && vocab.rank(p).is_none() {
                    pieces.push(p);
                }
            })
            .expect("built-in patterns never fail");
    }
    let bytes: usize = pieces.iter().map(|p| p.len()).sum();
    let mut ids = Vec::with_capacity(bytes);
    let mut seconds = Vec::with_capacity(rounds);
    for _ in 0..rounds.max(1) {
        ids.clear();
        let start = Instant::now();
        for piece in &pieces {
            encode_piece_parts(&vocab, piece, &mut ids);
        }
        seconds.push(start.elapsed().as_secs_f64());
    }
    let hash = ids.iter().fold(0u64, |h, &id| h.wrapping_mul(31).wrapping_add(u64::from(id)));
    seconds.sort_by(f64::total_cmp);
    println!(
        "{} pieces, {bytes} bytes, {} ids, ids hash {hash:016x}; fastest {:.4} s, median {:.4} s",
        pieces.len(),
        ids.len(),
        seconds[0],
        seconds[seconds.len() / 2],
    );
}
