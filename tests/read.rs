//! Reading files in chunks without Python: the counts equal counting whole documents.

use std::io::Write;

use bytebpe::document::Document;
use bytebpe::pretokenize::Pattern;
use bytebpe::read::{Delimit, DocumentReader, ReadOptions};
use bytebpe::special::SpecialTokens;
use bytebpe::train::feed::count_from;
use bytebpe::train::WordCounter;
use bytebpe::Error;

fn counter() -> WordCounter {
    WordCounter::new(Pattern::new("o200k").unwrap(), SpecialTokens::default(), None)
}

fn options(delimit: Delimit, jsonl: bool, chunk_size: usize) -> ReadOptions {
    let jsonl_field = jsonl.then(|| "text".to_owned());
    ReadOptions { delimit, jsonl_field, cuts: true, chunk_size, threads: Some(2), hold_bytes: None }
}

fn text() -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..400 {
        write!(out, "fn f{i}() {{\n    x = {i} \u{e9}\u{4e2d} it's\r\n}}\n\n").unwrap();
        if i % 50 == 0 {
            out.extend_from_slice(b"bad \xff\xfe byte\n");
        }
    }
    out
}

fn count_file(path: &str, opts: ReadOptions) -> Result<WordCounter, (Error, u64)> {
    let mut c = counter();
    let mut reader = DocumentReader::open(path, opts).map_err(|e| (e, 0))?;
    while !count_from(&mut c, &mut reader, 1 << 14, Some(2)).map_err(|e| (e, c.documents()))? {}
    Ok(c)
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(data).unwrap();
    enc.finish().unwrap()
}

#[test]
fn chunked_files_count_like_whole_documents() {
    let dir = std::env::temp_dir().join(format!("bytebpe-read-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let data = text();
    let plain = dir.join("a.txt");
    std::fs::write(&plain, &data).unwrap();
    let gz = dir.join("a.txt.gz");
    std::fs::write(&gz, gzip(&data)).unwrap();
    let zst = dir.join("a.txt.zst");
    std::fs::write(&zst, zstd::encode_all(&data[..], 3).unwrap()).unwrap();

    let mut whole = counter();
    whole.add_documents(&[Document { data: &data, is_text: false }], 0, Some(1)).unwrap();
    let mut lines = counter();
    let docs: Vec<Document<'_>> = data
        .split_inclusive(|&b| b == b'\n')
        .map(|l| Document { data: l, is_text: false })
        .collect();
    lines.add_documents(&docs, 0, Some(1)).unwrap();

    for path in [&plain, &gz, &zst] {
        let path = path.to_str().unwrap();
        for chunk in [1, 13, 4096] {
            let c = count_file(path, options(Delimit::Whole, false, chunk)).unwrap();
            assert_eq!(c.ledger(), whole.ledger(), "{path} {chunk}");
            assert_eq!(c.fingerprint(), whole.fingerprint());
            assert_eq!(c.snapshot(), whole.snapshot());
            let c = count_file(path, options(Delimit::Lines, false, chunk)).unwrap();
            assert_eq!(c.snapshot(), lines.snapshot());
            assert_eq!(c.fingerprint(), lines.fingerprint());
        }
    }

    // A gzip file cut short: an error naming it, after the lines before the cut.
    let cut = dir.join("cut.txt.gz");
    let compressed = gzip(&data);
    std::fs::write(&cut, &compressed[..compressed.len() / 2]).unwrap();
    let (err, counted) = count_file(cut.to_str().unwrap(), options(Delimit::Lines, false, 999))
        .expect_err("cut short");
    assert!(matches!(&err, Error::BadInput(m) if m.contains("cut.txt.gz") && m.contains("gzip")));
    assert!(counted > 0, "{err}");

    // JSON Lines: a bad line is named by its number, the rows before it are counted.
    let jsonl = dir.join("rows.jsonl");
    std::fs::write(&jsonl, "{\"text\": \"a\"}\n\n{\"text\": \"b\"}\n{\"text\": 3}\n").unwrap();
    let (err, counted) = count_file(jsonl.to_str().unwrap(), options(Delimit::Lines, true, 5))
        .expect_err("bad line");
    assert!(
        err.to_string()
            .ends_with("rows.jsonl, line 4: the \"text\" field is a number, not a string"),
        "{err}"
    );
    assert_eq!(counted, 2);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A reader of fed bytes holding at most `hold` bytes of one document.
fn holding(delimit: Delimit, cuts: bool, hold: usize) -> DocumentReader {
    let opts = ReadOptions { cuts, hold_bytes: Some(hold), ..options(delimit, false, 1 << 20) };
    DocumentReader::fed("feed", opts).unwrap()
}

/// Feeds `chunk` until the reader reports an error (or `times` feeds); returns the error
/// and the most bytes it held for one document meanwhile.
fn feed_until_error(
    reader: &mut DocumentReader,
    chunk: &[u8],
    times: usize,
) -> (Option<Error>, usize) {
    let mut most = 0;
    for _ in 0..times {
        reader.feed(chunk);
        most = most.max(reader.pending());
        let (_, error) = reader.next_batch(1 << 16);
        if error.is_some() {
            return (error, most);
        }
    }
    (None, most)
}

#[test]
fn a_document_without_a_cut_is_held_up_to_the_bound() {
    let hold = 10_000;
    // No end and no safe cut (NUL bytes): refused once past the bound, never grown.
    let mut r = holding(Delimit::Whole, true, hold);
    r.feed(b"abc\n");
    let (error, most) = feed_until_error(&mut r, &[0u8; 3000], 100);
    let Some(Error::BadInput(message)) = error else { panic!("{error:?}") };
    assert!(most <= hold + 3000, "{most}");
    let want = "feed: document 0 (from byte 0) has no end and no point where it can be cut (a \
                line break or a space between printable ASCII characters), and is longer \
                than 10000 bytes";
    assert!(message.starts_with(want), "{message}");
    assert!(r.exhausted() && r.pending() == 0);
    // A line without a cut: the line number and where it starts are named.
    let mut r = holding(Delimit::Lines, true, hold);
    r.feed(b"short line\n");
    let (error, _) = feed_until_error(&mut r, &[b'x'; 3000], 100);
    let message = error.unwrap().to_string();
    assert!(message.contains("line 2 (from byte 11) has no end and no point"), "{message}");
    assert!(message.contains("longer than 10000 bytes"), "{message}");
    assert!(message.contains("break the line, or raise memory_limit"), "{message}");
    // A long line of words is cut before its spaces, and streams.
    let mut r = holding(Delimit::Lines, true, hold);
    let (error, most) = feed_until_error(&mut r, &b"word ".repeat(600), 100);
    assert!(error.is_none() && most <= hold, "{error:?} {most}");
    // Without cuts (a custom pattern) a long document is held whole, so it is refused too.
    let mut r = holding(Delimit::Separator(b"<S>".to_vec()), false, hold);
    r.feed(b"one<S>two<S>");
    let (error, _) = feed_until_error(&mut r, b"a line\nmore\n", 2000);
    let message = error.unwrap().to_string();
    let want = "document 2 (from byte 12) has no end, and cannot be cut";
    assert!(message.contains(want), "{message}");
}

#[test]
fn a_document_with_cuts_streams_within_the_bound() {
    // Endless text with a safe cut on every line: held bytes stay bounded, never an error.
    let hold = 4096;
    let mut r = holding(Delimit::Whole, true, hold);
    let mut c = counter();
    let line: Vec<u8> =
        (0..50).flat_map(|i| format!("w{i} ").into_bytes()).chain(*b"x\n").collect();
    let mut most = 0;
    for _ in 0..500 {
        r.feed(&line);
        most = most.max(r.pending());
        assert!(!count_from(&mut c, &mut r, 1 << 20, Some(1)).unwrap());
    }
    assert!(most <= hold / 4 + 2 * line.len(), "{most}");
    r.finish();
    assert!(count_from(&mut c, &mut r, 1 << 20, Some(1)).unwrap());
    assert_eq!(c.documents(), 1);
}
