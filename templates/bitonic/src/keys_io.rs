//! Reading and writing keys: text (one number per line) or raw little-endian binary.

use std::fmt;
use std::path::{Path, PathBuf};

use kernel::KeyKind;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// One key per line; blank lines are ignored. f32 accepts `inf`, `-inf`, `NaN`, `-NaN`, `-0.0`.
    Text,
    /// Raw little-endian 4-byte keys, nothing else.
    Bin,
}

#[derive(Debug)]
pub enum KeysError {
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    BadLine {
        path: PathBuf,
        line: usize,
        text: String,
        why: String,
    },
    BadSize {
        path: PathBuf,
        size: u64,
    },
}

impl fmt::Display for KeysError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeysError::Io { path, error } => write!(f, "{}: {error}", path.display()),
            KeysError::BadLine { path, line, text, why } => {
                write!(f, "{}:{line}: `{text}` {why}", path.display())
            }
            KeysError::BadSize { path, size } => write!(
                f,
                "{}: {size} bytes is not a whole number of 4-byte keys (is it a --format text file?)",
                path.display()
            ),
        }
    }
}

impl std::error::Error for KeysError {}

/// Parses one text key of `kind` into its raw bits.
pub fn parse_key(text: &str, kind: KeyKind) -> Result<u32, String> {
    match kind {
        KeyKind::U32 if text.starts_with('-') && text[1..].parse::<u64>().is_ok() => {
            Err("does not fit in u32 (it is negative)".to_string())
        }
        KeyKind::U32 => text.parse::<u32>().map_err(|e| int_error(&e, "u32")),
        KeyKind::I32 => text
            .parse::<i32>()
            .map(|v| v as u32)
            .map_err(|e| int_error(&e, "i32")),
        KeyKind::F32 => parse_f32(text),
    }
}

fn int_error(error: &std::num::ParseIntError, ty: &str) -> String {
    use std::num::IntErrorKind::{NegOverflow, PosOverflow};
    match error.kind() {
        PosOverflow | NegOverflow => format!("does not fit in {ty}"),
        _ => format!("is not a valid {ty}"),
    }
}

fn parse_f32(text: &str) -> Result<u32, String> {
    let (negative, magnitude) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    if magnitude.eq_ignore_ascii_case("nan") {
        let bits = f32::NAN.to_bits() & 0x7fff_ffff;
        return Ok(if negative { bits | 0x8000_0000 } else { bits });
    }
    let value: f32 = text.parse().map_err(|_| "is not a valid f32".to_string())?;
    let is_inf_literal =
        magnitude.eq_ignore_ascii_case("inf") || magnitude.eq_ignore_ascii_case("infinity");
    if value.is_infinite() && !is_inf_literal {
        return Err("does not fit in f32 (write `inf` for infinity)".to_string());
    }
    Ok(value.to_bits())
}

/// Formats raw bits of `kind` so that `parse_key` gives the same bits back (NaN payloads
/// aside: every NaN is written `NaN` or `-NaN`).
pub fn format_key(bits: u32, kind: KeyKind) -> String {
    match kind {
        KeyKind::U32 => bits.to_string(),
        KeyKind::I32 => (bits as i32).to_string(),
        KeyKind::F32 => {
            let value = f32::from_bits(bits);
            if value.is_nan() && value.is_sign_negative() {
                "-NaN".to_string()
            } else {
                format!("{value:?}")
            }
        }
    }
}

pub fn read_keys(path: &Path, kind: KeyKind, format: Format) -> Result<Vec<u32>, KeysError> {
    let io = |error| KeysError::Io {
        path: path.to_path_buf(),
        error,
    };
    match format {
        Format::Bin => {
            let bytes = std::fs::read(path).map_err(io)?;
            if bytes.len() % 4 != 0 {
                return Err(KeysError::BadSize {
                    path: path.to_path_buf(),
                    size: bytes.len() as u64,
                });
            }
            Ok(bytes
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect())
        }
        Format::Text => {
            let text = std::fs::read_to_string(path).map_err(io)?;
            let mut keys = Vec::new();
            for (number, line) in text.lines().enumerate() {
                let trimmed = line.trim();
                if trimmed.is_empty() {
                    continue;
                }
                let bits = parse_key(trimmed, kind).map_err(|why| KeysError::BadLine {
                    path: path.to_path_buf(),
                    line: number + 1,
                    text: trimmed.to_string(),
                    why,
                })?;
                keys.push(bits);
            }
            Ok(keys)
        }
    }
}

pub fn write_keys(
    path: &Path,
    keys: &[u32],
    kind: KeyKind,
    format: Format,
) -> Result<(), KeysError> {
    let bytes = match format {
        Format::Bin => keys
            .iter()
            .flat_map(|k| k.to_le_bytes())
            .collect::<Vec<u8>>(),
        Format::Text => {
            let mut text = String::with_capacity(keys.len() * 11);
            for &bits in keys {
                text.push_str(&format_key(bits, kind));
                text.push('\n');
            }
            text.into_bytes()
        }
    };
    std::fs::write(path, bytes).map_err(|error| KeysError::Io {
        path: path.to_path_buf(),
        error,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_text_round_trips_special_values() {
        for text in [
            "inf",
            "-inf",
            "NaN",
            "-NaN",
            "-0.0",
            "0.0",
            "1e-45",
            "3.4028235e38",
        ] {
            let bits = parse_key(text, KeyKind::F32).unwrap();
            assert_eq!(
                parse_key(&format_key(bits, KeyKind::F32), KeyKind::F32),
                Ok(bits),
                "{text}"
            );
        }
        assert_eq!(parse_key("-0.0", KeyKind::F32), Ok(0x8000_0000));
    }

    #[test]
    fn out_of_range_values_are_refused() {
        assert_eq!(
            parse_key("4294967296", KeyKind::U32),
            Err("does not fit in u32".into())
        );
        assert!(parse_key("-1", KeyKind::U32)
            .unwrap_err()
            .contains("does not fit"));
        assert_eq!(
            parse_key("2147483648", KeyKind::I32),
            Err("does not fit in i32".into())
        );
        assert!(parse_key("1e39", KeyKind::F32)
            .unwrap_err()
            .contains("does not fit"));
        assert!(parse_key("abc", KeyKind::F32)
            .unwrap_err()
            .contains("not a valid f32"));
    }
}
