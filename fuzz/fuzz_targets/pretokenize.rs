//! The hand-written splitters give exactly fancy-regex's pieces on any text, and the
//! byte splitter covers every input byte exactly once (pieces + gaps).
#![no_main]

use bytebpe::pretokenize::Pattern;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for name in ["gpt2", "cl100k", "o200k"] {
        let pattern = Pattern::new(name).unwrap();
        if let Ok(text) = std::str::from_utf8(data) {
            let mut fast = Vec::new();
            pattern.split_text(text, |p| fast.push(p.to_vec())).unwrap();
            let mut slow = Vec::new();
            // The regex may give up on pathological input (backtrack limit): no verdict.
            if pattern.split_text_with_regex(text, |p| slow.push(p.to_vec())).is_ok() {
                assert_eq!(fast, slow, "{name} splits {text:?} differently from its regex");
            }
        }
        let mut covered = 0u64;
        let mut gaps = 0u64;
        pattern.split_bytes_counting_gaps(data, |p| covered += p.len() as u64, &mut gaps).unwrap();
        assert_eq!(covered + gaps, data.len() as u64, "{name} lost or repeated bytes");
    }
});
