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
