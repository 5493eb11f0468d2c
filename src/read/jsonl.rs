//! JSON Lines: the text field of each row, skipping every other field unparsed-into.

use std::fmt;

use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;

use crate::utf8::as_utf8;

/// The text of one JSON line: `Ok(None)` for a blank line, `Err(why)` for a line that is
/// not a JSON object with a string `field` (the message says which).
pub fn text_field(line: &[u8], field: &str) -> Result<Option<String>, String> {
    if line.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    // A line checked as UTF-8 32 bytes at a time is parsed as text, so the parser does not
    // check each string's bytes again a byte at a time; any other line as bytes, where
    // the parser names what is wrong.
    let found = match as_utf8(line) {
        Some(text) => parse(&mut serde_json::Deserializer::from_str(text), field),
        None => parse(&mut serde_json::Deserializer::from_slice(line), field),
    }
    .map_err(|e| format!("not JSON ({e})"))?;
    match found {
        Found::Text(text) => Ok(Some(text)),
        Found::Missing(keys) => Err(format!("no {field:?} field (the row has {keys:?})")),
        Found::NotText(kind) => Err(format!("the {field:?} field is {kind}, not a string")),
        Found::NotObject(kind) => Err(format!("the row is {kind}, not an object")),
    }
}

/// The field `field` of the one JSON value `de` holds.
fn parse<'de, R: serde_json::de::Read<'de>>(
    de: &mut serde_json::Deserializer<R>,
    field: &str,
) -> serde_json::Result<Found> {
    let found = FieldOf(field).deserialize(&mut *de)?;
    de.end()?;
    Ok(found)
}

enum Found {
    Text(String),
    /// The row's keys (a few), to help pick the right field.
    Missing(Vec<String>),
    NotText(&'static str),
    NotObject(&'static str),
}

struct FieldOf<'f>(&'f str);

impl<'de> DeserializeSeed<'de> for FieldOf<'_> {
    type Value = Found;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Found, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for FieldOf<'_> {
    type Value = Found;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Found, A::Error> {
        let mut found = None;
        let mut keys = Vec::new();
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if key == self.0 {
                // The last one wins on duplicates, as Python's json.loads does.
                found = Some(match map.next_value::<Value>()? {
                    Value::String(text) => Found::Text(text),
                    other => Found::NotText(kind(&other)),
                });
            } else {
                if keys.len() < 10 {
                    keys.push(key.into_owned());
                }
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(found.unwrap_or(Found::Missing(keys)))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Found, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Found::NotObject("an array"))
    }

    fn visit_str<E>(self, _: &str) -> Result<Found, E> {
        Ok(Found::NotObject("a string"))
    }

    fn visit_bool<E>(self, _: bool) -> Result<Found, E> {
        Ok(Found::NotObject("a boolean"))
    }

    fn visit_i64<E>(self, _: i64) -> Result<Found, E> {
        Ok(Found::NotObject("a number"))
    }

    fn visit_u64<E>(self, _: u64) -> Result<Found, E> {
        Ok(Found::NotObject("a number"))
    }

    fn visit_f64<E>(self, _: f64) -> Result<Found, E> {
        Ok(Found::NotObject("a number"))
    }

    fn visit_unit<E>(self) -> Result<Found, E> {
        Ok(Found::NotObject("null"))
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_the_field_and_names_what_is_wrong() {
        let ok = text_field(br#"{"id": [1, {"a": 2}], "text": "h\u00e9\n", "x": null}"#, "text");
        assert_eq!(ok, Ok(Some("hé\n".to_owned())));
        assert_eq!(text_field(b"  \r\n", "text"), Ok(None));
        assert!(text_field(b"{not json", "text").unwrap_err().starts_with("not JSON"));
        assert!(text_field(br#"{"t": 1} x"#, "text").unwrap_err().starts_with("not JSON"));
        assert!(text_field(br#"{"t": 1}"#, "text").unwrap_err().contains(r#"no "text" field"#));
        assert!(text_field(br#"{"text": 1}"#, "text").unwrap_err().contains("a number"));
        assert!(text_field(b"[1]", "text").unwrap_err().contains("an array"));
        assert!(text_field(br#"{"text": "\ud800"}"#, "text").is_err());
        assert!(text_field(b"{\"text\": \"\xff\"}", "text").is_err());
    }

    /// A line that is UTF-8 is parsed as text, any other as bytes: both give what parsing
    /// every line as bytes gives, answers and errors alike.
    #[test]
    fn text_and_bytes_parse_alike() {
        let lines: [&[u8]; 8] = [
            br#"{"text": "caf\u00e9 \"quoted\" \\ tab\t", "n": [1, 2.5e3, true]}"#,
            "{\"text\": \"\u{4e16}\u{754c} \u{1f600}\"}".as_bytes(),
            b"{\"id\": \"\xff\", \"text\": \"kept\"}",
            b"{\"text\": \"a\xc3\"}",
            br#"{"text": "two"} {"text": "values"}"#,
            br#"{"text": "control \u0000 char", "text": "last wins"}"#,
            b"{\"text\": \"raw\ttab\"}",
            br#"{"text": "unterminated}"#,
        ];
        for line in lines {
            let as_bytes = match parse(&mut serde_json::Deserializer::from_slice(line), "text") {
                Ok(Found::Text(text)) => Some(text),
                _ => None,
            };
            let shown = String::from_utf8_lossy(line);
            assert_eq!(text_field(line, "text").ok().flatten(), as_bytes, "{shown}");
        }
        assert_eq!(
            text_field(b"{\"id\": \"\xff\", \"text\": \"kept\"}", "text"),
            Ok(Some("kept".into()))
        );
    }
}
