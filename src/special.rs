//! Special tokens: finding them in text, and their ids.

use crate::error::{Error, Result};
use crate::Rank;

/// A stretch of input split at special tokens.
pub enum Part<'t> {
    Text(&'t [u8]),
    Special(Rank),
}

/// The special tokens of a tokenizer and a matcher for their text.
#[derive(Debug, Clone, Default)]
pub struct SpecialTokens {
    /// (text, id), in id order.
    tokens: Vec<(String, Rank)>,
    /// Alternation of all tokens, longest first so the longest wins at one position.
    matcher: Option<regex::bytes::Regex>,
}

/// The longest special token accepted (real ones are a few dozen bytes).
pub const MAX_SPECIAL_BYTES: usize = 1 << 12;

impl SpecialTokens {
    /// Checks the texts (non-empty, unique) and builds the matcher.
    pub fn new(tokens: Vec<(String, Rank)>) -> Result<Self> {
        let mut seen = std::collections::HashSet::new();
        for (text, _) in &tokens {
            if text.is_empty() {
                return Err(Error::InvalidConfig("special tokens must not be empty".into()));
            }
            if text.len() > MAX_SPECIAL_BYTES {
                let head: String = text.chars().take(40).collect();
                return Err(Error::InvalidConfig(format!(
                    "special token {head:?}... is {} bytes long; at most {MAX_SPECIAL_BYTES} bytes",
                    text.len()
                )));
            }
            if !seen.insert(text.as_str()) {
                return Err(Error::InvalidConfig(format!(
                    "special token {text:?} is given more than once"
                )));
            }
        }
        let matcher = if tokens.is_empty() {
            None
        } else {
            let mut texts: Vec<&str> = tokens.iter().map(|(t, _)| t.as_str()).collect();
            texts.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
            let alternation: Vec<String> = texts.iter().map(|t| regex::escape(t)).collect();
            let regex = regex::bytes::RegexBuilder::new(&alternation.join("|"))
                .unicode(false)
                .size_limit(1 << 26)
                .build()
                .map_err(|e| Error::InvalidConfig(format!("special tokens: {e}")))?;
            Some(regex)
        };
        Ok(Self { tokens, matcher })
    }

    pub fn tokens(&self) -> &[(String, Rank)] {
        &self.tokens
    }

    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    pub fn id(&self, text: &[u8]) -> Option<Rank> {
        self.tokens.iter().find(|(t, _)| t.as_bytes() == text).map(|&(_, id)| id)
    }

    pub fn text(&self, id: Rank) -> Option<&str> {
        self.tokens.iter().find(|&&(_, i)| i == id).map(|(t, _)| t.as_str())
    }

    /// Splits `data` at every special token that `allowed` accepts, calling `visit` with
    /// the text between them and with each accepted token's id, in order.
    pub fn split<'t, E>(
        &self,
        data: &'t [u8],
        allowed: impl Fn(&[u8]) -> bool,
        mut visit: impl FnMut(Part<'t>) -> Result<(), E>,
    ) -> Result<(), E> {
        let Some(matcher) = &self.matcher else {
            return visit(Part::Text(data));
        };
        let mut start = 0;
        let mut search = 0;
        while let Some(m) = matcher.find_at(data, search) {
            if !allowed(m.as_bytes()) {
                // Not a special token here: look again one byte further, like tiktoken.
                search = m.start() + 1;
                continue;
            }
            visit(Part::Text(&data[start..m.start()]))?;
            visit(Part::Special(self.id(m.as_bytes()).expect("matched text is a special token")))?;
            start = m.end();
            search = start;
        }
        visit(Part::Text(&data[start..]))
    }
}
