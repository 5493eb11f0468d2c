//! Opening an input file, decompressed by its extension (`.gz`, `.zst`, `.zstd`).

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::error::{Error, IoKind, Result};

/// Compression, from a file name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    None,
    Gzip,
    Zstd,
}

impl Compression {
    pub fn of(path: &str) -> Self {
        if path.ends_with(".gz") {
            Compression::Gzip
        } else if path.ends_with(".zst") || path.ends_with(".zstd") {
            Compression::Zstd
        } else {
            Compression::None
        }
    }

    fn name(self) -> &'static str {
        match self {
            Compression::None => "file",
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
        }
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
    pub fn open(path: &str) -> Result<Self> {
        let file = File::open(path).map_err(|e| Error::io(path, &e))?;
        let meta = file.metadata().map_err(|e| Error::io(path, &e))?;
        if meta.is_dir() {
            return Err(Error::Io {
                path: path.to_owned(),
                kind: IoKind::IsADirectory,
                message: "is a directory, not a file".to_owned(),
            });
        }
        let raw_read = Arc::new(AtomicU64::new(0));
        let counted = Counted { inner: file, read: raw_read.clone() };
        let compression = Compression::of(path);
        let reader: Box<dyn Read + Send> = match compression {
            Compression::None => Box::new(counted),
            // Several gzip members in one file are one stream, as `gzip -c a b` writes.
            Compression::Gzip => {
                Box::new(flate2::read::MultiGzDecoder::new(BufReader::new(counted)))
            }
            Compression::Zstd => Box::new(
                zstd::stream::read::Decoder::new(counted).map_err(|e| Error::io(path, &e))?,
            ),
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
