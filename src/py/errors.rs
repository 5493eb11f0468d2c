//! Core errors as Python exceptions: one class per kind, with builtin bases users expect.

use pyo3::create_exception;
use pyo3::exceptions::{
    PyFileNotFoundError, PyIsADirectoryError, PyKeyboardInterrupt, PyOSError, PyOverflowError,
    PyPermissionError, PyValueError,
};
use pyo3::prelude::*;

use crate::error::{Error, IoKind};

create_exception!(
    _bytebpe,
    PatternError,
    PyValueError,
    "The pre-tokenization pattern is invalid or failed."
);
create_exception!(
    _bytebpe,
    CorruptTokenizerError,
    PyValueError,
    "A tokenizer file or state is inconsistent."
);
create_exception!(
    _bytebpe,
    InputError,
    PyValueError,
    "An input file or stream is not what its format promises (bad JSON, cut short)."
);
create_exception!(
    _bytebpe,
    UnknownTokenError,
    PyValueError,
    "A token id is not in the vocabulary."
);

pub fn to_py(err: Error) -> PyErr {
    let message = err.to_string();
    match err {
        Error::InvalidPattern { .. } | Error::PatternMatch { .. } => PatternError::new_err(message),
        Error::Corrupt(_) => CorruptTokenizerError::new_err(message),
        Error::UnknownToken { .. } => UnknownTokenError::new_err(message),
        Error::CountOverflow { .. } => PyOverflowError::new_err(message),
        Error::Interrupted => PyKeyboardInterrupt::new_err(message),
        Error::InvalidConfig(_) => PyValueError::new_err(message),
        Error::BadInput(_) => InputError::new_err(message),
        Error::Io { kind, .. } => match kind {
            IoKind::NotFound => PyFileNotFoundError::new_err(message),
            IoKind::PermissionDenied => PyPermissionError::new_err(message),
            IoKind::IsADirectory => PyIsADirectoryError::new_err(message),
            IoKind::Other => PyOSError::new_err(message),
        },
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("PatternError", py.get_type::<PatternError>())?;
    m.add("CorruptTokenizerError", py.get_type::<CorruptTokenizerError>())?;
    m.add("UnknownTokenError", py.get_type::<UnknownTokenError>())?;
    m.add("InputError", py.get_type::<InputError>())?;
    Ok(())
}
