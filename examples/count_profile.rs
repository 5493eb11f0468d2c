//! Counting alone, repeated, for comparing builds on a busy machine: the process's CPU
//! time (Linux; wall time elsewhere) does not count the time other processes held the
//! cores, and the fastest of several runs in one process is steadier than one run per
//! process.
//!
//! ```text
//! cargo run --release --example count_profile -- DOCS [THREADS] [REPEATS] [PATTERN]
//! ```
//!
//! DOCS is a file of UTF-8 documents separated by NUL bytes, counted in batches of 8,192
//! documents (as `train_from_iterator` does); THREADS defaults to 1, REPEATS to 5, PATTERN
//! (a built-in name or a regex) to cl100k. Prints the fastest and the median MB/s by CPU
//! seconds (all threads), the median by wall time, and the distinct words (equal across
//! builds).

use std::time::Instant;

use bytebpe::document::Document;
use bytebpe::pretokenize::Pattern;
use bytebpe::special::SpecialTokens;
use bytebpe::train::WordCounter;

/// Seconds of CPU the process has used, all threads.
#[cfg(target_os = "linux")]
fn cpu_seconds() -> f64 {
    #[repr(C)]
    struct Timespec {
        sec: i64,
        nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
    }
    const CLOCK_PROCESS_CPUTIME_ID: i32 = 2;
    let mut ts = Timespec { sec: 0, nsec: 0 };
    // SAFETY: `ts` is a valid timespec for the call to fill.
    let rc = unsafe { clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime");
    ts.sec as f64 + ts.nsec as f64 * 1e-9
}

#[cfg(not(target_os = "linux"))]
fn cpu_seconds() -> f64 {
    use std::sync::OnceLock;
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_secs_f64()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let data = std::fs::read(&args[0]).expect("read DOCS");
    let threads: usize = args.get(1).map_or(1, |v| v.parse().expect("threads"));
    let repeats: usize = args.get(2).map_or(5, |v| v.parse().expect("repeats"));
    let pattern = Pattern::new(args.get(3).map_or("cl100k", String::as_str)).expect("pattern");
    // Valid UTF-8 takes the text path, as a `str` does (a file cut mid-character is not).
    let docs: Vec<Document> = data
        .split(|&b| b == 0)
        .map(|d| Document { data: d, is_text: std::str::from_utf8(d).is_ok() })
        .collect();
    let mut seconds = Vec::with_capacity(repeats);
    let mut wall = Vec::with_capacity(repeats);
    let mut distinct = 0;
    for _ in 0..repeats {
        let (t0, c0) = (Instant::now(), cpu_seconds());
        let mut counter = WordCounter::new(pattern.clone(), SpecialTokens::default(), None);
        for (i, batch) in docs.chunks(8192).enumerate() {
            counter.add_documents(batch, (i * 8192) as u64, Some(threads)).expect("count");
        }
        seconds.push(cpu_seconds() - c0);
        wall.push(t0.elapsed().as_secs_f64());
        distinct = counter.distinct_words();
    }
    seconds.sort_by(f64::total_cmp);
    wall.sort_by(f64::total_cmp);
    let mb = data.len() as f64 / 1e6;
    println!(
        "{mb:.1} MB, {threads} threads: by CPU best {:.1} MB/s, median {:.1} MB/s; by wall \
         median {:.1} MB/s; {distinct} distinct words",
        mb / seconds[0],
        mb / seconds[seconds.len() / 2],
        mb / wall[wall.len() / 2]
    );
}
