//! The core's error type. Each variant maps to its own Python exception in `py/errors.rs`.

use std::fmt;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// The pre-tokenization regex does not compile.
    InvalidPattern { pattern: String, message: String },
    /// The regex engine failed while matching (e.g. its backtrack limit) on one document.
    PatternMatch { document: u64, message: String },
    /// A training or tokenizer setting is out of range or inconsistent.
    InvalidConfig(String),
    /// A pair count would exceed u64 (only reachable with huge pre-counted words).
    CountOverflow { left: Vec<u8>, right: Vec<u8> },
    /// Ctrl-C (or another signal handler) asked the long call to stop.
    Interrupted,
    /// A token id that is not in the vocabulary.
    UnknownToken { id: u64, position: usize },
    /// A serialized tokenizer is inconsistent.
    Corrupt(String),
    /// An input file cannot be opened or read.
    Io { path: String, kind: IoKind, message: String },
    /// An input file or stream holds something that is not what its format promises
    /// (a JSON line that is not JSON, a compressed stream cut short); the message names
    /// the file and the line or offset.
    BadInput(String),
}

/// Why a file could not be read, for the matching Python exception.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoKind {
    NotFound,
    PermissionDenied,
    IsADirectory,
    Other,
}

impl Error {
    pub fn io(path: &str, err: &std::io::Error) -> Self {
        let kind = match err.kind() {
            std::io::ErrorKind::NotFound => IoKind::NotFound,
            std::io::ErrorKind::PermissionDenied => IoKind::PermissionDenied,
            _ if err.raw_os_error() == Some(21) => IoKind::IsADirectory, // EISDIR
            _ => IoKind::Other,
        };
        Error::Io { path: path.to_owned(), kind, message: err.to_string() }
    }

    /// This error from encoding document `index` of a batch, saying which document it was.
    pub fn in_document(self, index: usize) -> Self {
        match self {
            Error::PatternMatch { message, .. } => {
                Error::PatternMatch { document: index as u64, message }
            }
            other => other,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidPattern { pattern, message } => {
                write!(f, "invalid pattern {pattern:?}: {message}")
            }
            Error::PatternMatch { document, message } => write!(
                f,
                "the pattern failed on document {document}: {message} \
                 (a simpler pattern, or shorter documents, avoids this)"
            ),
            Error::InvalidConfig(message) => f.write_str(message),
            Error::CountOverflow { left, right } => write!(
                f,
                "the count of pair ({}, {}) exceeds 2**64-1; scale the word counts down",
                String::from_utf8_lossy(left).escape_debug(),
                String::from_utf8_lossy(right).escape_debug()
            ),
            Error::Interrupted => f.write_str("interrupted"),
            Error::UnknownToken { id, position } => {
                write!(f, "unknown token id {id} at position {position}")
            }
            Error::Corrupt(message) => write!(f, "corrupt tokenizer: {message}"),
            Error::Io { path, message, .. } => write!(f, "{path}: {message}"),
            Error::BadInput(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for Error {}
