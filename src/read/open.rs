//! Opening an input file, decompressed by what its first bytes say it is (gzip, zstd, xz,
//! bzip2), whatever its name: a `.txt` that holds gzip data is read as gzip. A file named
//! as compressed (`.gz`, `.zst`/`.zstd`, `.xz`, `.bz2`) whose bytes are not that format,
//! and a compressed or archive format bytebpe does not read (zip, 7z, lz4, lzip, legacy
//! lzma, Parquet outside a `.parquet` name), are refused with an error naming the file,
//! never read as text.

use std::fs::File;
use std::io::{self, BufReader, Cursor, Read};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::error::{Error, IoKind, Result};

/// Compression of an input file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    None,
    Gzip,
    Zstd,
    Xz,
    Bzip2,
}

/// The bytes read to recognise a format (the longest magic number below is 6 bytes).
const HEAD: usize = 8;

impl Compression {
    /// The compression a file's name claims (its extension).
    pub fn of(path: &str) -> Self {
        if path.ends_with(".gz") {
            Compression::Gzip
        } else if path.ends_with(".zst") || path.ends_with(".zstd") {
            Compression::Zstd
        } else if path.ends_with(".xz") {
            Compression::Xz
        } else if path.ends_with(".bz2") {
            Compression::Bzip2
        } else {
            Compression::None
        }
    }

    /// The compression a file's first bytes show (magic numbers), if any.
    pub fn sniff(head: &[u8]) -> Option<Self> {
        if head.starts_with(&[0x1f, 0x8b]) {
            Some(Compression::Gzip)
        } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Some(Compression::Zstd)
        } else if head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0x00]) {
            Some(Compression::Xz)
        } else if head.len() >= 4 && head.starts_with(b"BZh") && (b'1'..=b'9').contains(&head[3]) {
            Some(Compression::Bzip2)
        } else {
            None
        }
    }

    fn name(self) -> &'static str {
        match self {
            Compression::None => "file",
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
            Compression::Xz => "xz",
            Compression::Bzip2 => "bzip2",
        }
    }
}

/// A format bytebpe does not read, recognised by its first bytes.
fn unreadable(head: &[u8]) -> Option<&'static str> {
    const KNOWN: [(&[u8], &str); 6] = [
        (b"PK\x03\x04", "a zip archive"),
        (&[b'7', b'z', 0xbc, 0xaf, 0x27, 0x1c], "a 7z archive"),
        (&[0x04, 0x22, 0x4d, 0x18], "lz4 data"),
        (b"LZIP", "lzip data"),
        (&[0x5d, 0x00, 0x00], "legacy lzma data"),
        (b"PAR1", "a Parquet file (name it .parquet to read its text column)"),
    ];
    KNOWN.iter().find(|(magic, _)| head.starts_with(magic)).map(|(_, what)| *what)
}

/// The first bytes of `file` (fewer when it is shorter).
fn read_head(file: &mut Counted, path: &str) -> Result<Vec<u8>> {
    let mut head = vec![0u8; HEAD];
    let mut n = 0;
    while n < HEAD {
        match file.read(&mut head[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Error::io(path, &e)),
        }
    }
    head.truncate(n);
    Ok(head)
}

/// What to decompress `path` as: its magic number decides; a name claiming a compression
/// the bytes do not have, or a format bytebpe cannot read, is an error naming the file.
fn compression_of(path: &str, head: &[u8]) -> Result<Compression> {
    if let Some(what) = unreadable(head) {
        return Err(Error::BadInput(format!(
            "{path}: is {what}, which bytebpe does not read as text; extract or decompress \
             it first (bytebpe reads plain text and gzip, zstd, xz or bzip2 compressed files)"
        )));
    }
    let named = Compression::of(path);
    match Compression::sniff(head) {
        Some(found) => Ok(found),
        None if named == Compression::None || head.is_empty() => Ok(Compression::None),
        None => Err(Error::BadInput(format!(
            "{path}: is named as {} but does not hold {} data (it starts with {:02x?}); \
             rename it if it is plain text",
            named.name(),
            named.name(),
            head
        ))),
    }
}

/// An open input: decompressed bytes, with the count of raw bytes read for errors.
pub struct Source {
    /// The decompressed bytes.
    reader: Box<dyn Read + Send>,
    /// How the file is compressed (named in errors).
    compression: Compression,
    /// Raw (compressed) bytes read so far, shared with the `Counted` file under `reader`.
    raw_read: Arc<AtomicU64>,
}

impl Source {
    /// Opens the file at `path` (any bytes on Unix: a name need not be UTF-8); errors
    /// name it lossily.
    pub fn open(file_path: &Path) -> Result<Self> {
        let name = file_path.to_string_lossy();
        let path: &str = &name;
        let file = File::open(file_path).map_err(|e| Error::io(path, &e))?;
        let meta = file.metadata().map_err(|e| Error::io(path, &e))?;
        if meta.is_dir() {
            return Err(Error::Io {
                path: path.to_owned(),
                kind: IoKind::IsADirectory,
                message: "is a directory, not a file".to_owned(),
            });
        }
        let raw_read = Arc::new(AtomicU64::new(0));
        let mut counted = Counted { inner: file, read: raw_read.clone() };
        let head = read_head(&mut counted, path)?;
        let compression = compression_of(path, &head)?;
        // The head is read again by the decoder, then the rest of the file.
        let raw = Cursor::new(head).chain(counted);
        let reader: Box<dyn Read + Send> = match compression {
            Compression::None => Box::new(raw),
            // Several members (streams) in one file are one input, as `gzip -c a b`,
            // `xz -c a b` or `bzip2 -c a b` write.
            Compression::Gzip => Box::new(flate2::read::MultiGzDecoder::new(BufReader::new(raw))),
            Compression::Zstd => {
                Box::new(zstd::stream::read::Decoder::new(raw).map_err(|e| Error::io(path, &e))?)
            }
            Compression::Xz => {
                Box::new(liblzma::read::XzDecoder::new_multi_decoder(BufReader::new(raw)))
            }
            Compression::Bzip2 => Box::new(bzip2::read::MultiBzDecoder::new(BufReader::new(raw))),
        };
        Ok(Self { reader, compression, raw_read })
    }

    /// Reads decompressed bytes. `name` and `offset` (decompressed bytes read so far) go
    /// into the error: a stream cut short or corrupt is `BadInput`, others `Io`.
    pub fn read(&mut self, buf: &mut [u8], name: &str, offset: u64) -> Result<usize> {
        loop {
            match self.reader.read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if self.compression != Compression::None && is_format_error(&e) => {
                    let raw = self.raw_read.load(Ordering::Relaxed);
                    return Err(Error::BadInput(format!(
                        "{name}: the {} data is cut short or corrupt ({e}), after {offset} \
                         bytes of decompressed data (at or before byte {raw} of the file)",
                        self.compression.name()
                    )));
                }
                Err(e) => return Err(Error::io(name, &e)),
            }
        }
    }
}

fn is_format_error(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::UnexpectedEof | io::ErrorKind::InvalidData | io::ErrorKind::InvalidInput
    ) || e.kind() == io::ErrorKind::Other
}

/// Counts the raw bytes read through it.
struct Counted {
    /// The file.
    inner: File,
    /// Bytes read from it so far.
    read: Arc<AtomicU64>,
}

impl Read for Counted {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_bytes_decide_and_wrong_names_are_refused() {
        assert_eq!(Compression::sniff(&[0x1f, 0x8b, 8, 0]), Some(Compression::Gzip));
        assert_eq!(Compression::sniff(&[0x28, 0xb5, 0x2f, 0xfd, 0]), Some(Compression::Zstd));
        assert_eq!(Compression::sniff(b"\xfd7zXZ\x00\x00"), Some(Compression::Xz));
        assert_eq!(Compression::sniff(b"BZh91AY&"), Some(Compression::Bzip2));
        assert_eq!(Compression::sniff(b"BZhello"), None);
        assert_eq!(Compression::sniff(b"hello wo"), None);
        // Gzip bytes named .txt are gzip; text named .gz is refused, naming the file.
        assert_eq!(compression_of("a.txt", &[0x1f, 0x8b, 8]).unwrap(), Compression::Gzip);
        assert_eq!(compression_of("a.xz", b"BZh91AY&").unwrap(), Compression::Bzip2);
        assert_eq!(compression_of("a.txt", b"hello").unwrap(), Compression::None);
        assert_eq!(compression_of("empty.gz", b"").unwrap(), Compression::None);
        let err = compression_of("d/a.txt.gz", b"hello wo").unwrap_err().to_string();
        assert!(err.starts_with("d/a.txt.gz: is named as gzip but does not hold gzip"), "{err}");
        let err = compression_of("a.txt", b"PK\x03\x04\x14\x00").unwrap_err().to_string();
        assert!(err.starts_with("a.txt: is a zip archive"), "{err}");
    }
}
