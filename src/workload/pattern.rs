//! fio's `buffer_pattern`: the bytes every write carries, repeated over its buffer, written as fio
//! writes them (lib/pattern.c): `0x` hex of any length, a decimal integer (its bytes, least
//! significant first), a `"string"`, or any of them one after another (`0xdeadface"abcd"-12`).
//!
//! It parses the pattern; filling buffers with it is the filler's (`contents::Filler`).

use std::sync::Arc;

/// fio's `MAX_PATTERN_SIZE`: the longest pattern it takes.
pub const MAX_PATTERN_BYTES: usize = 512;

/// A parsed pattern (never empty).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BufferPattern(pub Arc<[u8]>);

impl BufferPattern {
    /// Parses fio's pattern syntax.
    ///
    /// # Errors
    /// One sentence: a piece fio would not read, a file (`'name'`) or a format (`%o`), which are
    /// not taken, or a pattern longer than fio's 512 bytes.
    pub fn parse(text: &str) -> Result<BufferPattern, String> {
        let bad = |why: String| format!("buffer pattern '{text}': {why}");
        let mut out: Vec<u8> = Vec::new();
        let mut rest = text.trim();
        if rest.is_empty() {
            return Err(bad("empty; write one like 0xdeadbeef or \"abcd\"".into()));
        }
        while !rest.is_empty() {
            let (bytes, tail) = match rest.as_bytes()[0] {
                b'"' => {
                    let end = rest[1..].find('"').ok_or_else(|| bad("a string without its closing '\"'".into()))?;
                    (rest.as_bytes()[1..=end].to_vec(), &rest[end + 2..])
                }
                b'\'' => {
                    return Err(bad(
                        "a file ('name') is not taken; write its bytes as hex (0x...) or a \"string\"".into()
                    ));
                }
                b'%' => return Err(bad("formats (%o) are not taken; fio's buffer_pattern ignores them too".into())),
                _ if rest.len() > 2 && rest[..2].eq_ignore_ascii_case("0x") => hex(&rest[2..]).map_err(bad)?,
                _ => decimal(rest).map_err(bad)?,
            };
            out.extend_from_slice(&bytes);
            rest = tail;
        }
        if out.len() > MAX_PATTERN_BYTES {
            return Err(bad(format!("{} bytes, more than fio's {MAX_PATTERN_BYTES}", out.len())));
        }
        Ok(BufferPattern(out.into()))
    }

    /// `buf` filled with the pattern, repeated from its start (fio's `fill_pattern`).
    pub fn fill(&self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(self.0.len()) {
            chunk.copy_from_slice(&self.0[..chunk.len()]);
        }
    }
}

impl std::fmt::Display for BufferPattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("0x")?;
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

/// fio's hex: digits up to the next `0x` or anything that is not one, an odd count read with a
/// leading nibble (`0xabc` is 0a bc); the bytes and what follows.
fn hex(text: &str) -> Result<(Vec<u8>, &str), String> {
    let mut n = text.bytes().take_while(u8::is_ascii_hexdigit).count();
    // fio's look-back: in 0xff0x14 the first number ends before the second's 0x.
    if n < text.len() && n > 0 && text[n - 1..].len() >= 2 && text[n - 1..n + 1].eq_ignore_ascii_case("0x") {
        n -= 1;
    }
    if n == 0 {
        return Err(format!("'0x{}' has no hex digits", text.chars().take(8).collect::<String>()));
    }
    let digits = &text[..n];
    let padded = if n % 2 == 1 { format!("0{digits}") } else { digits.to_string() };
    let bytes = (0..padded.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&padded[i..i + 2], 16).expect("hex digits were checked"))
        .collect();
    Ok((bytes, &text[n..]))
}

/// fio's decimal: an integer from INT_MIN to INT_MAX (up to a `0x` after it), as the fewest bytes
/// of its 32-bit value, least significant first (0 is one zero byte).
fn decimal(text: &str) -> Result<(Vec<u8>, &str), String> {
    let sign = usize::from(text.starts_with(['-', '+']));
    let digits = text[sign..].bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return Err(format!(
            "'{}' is not a piece fio reads; write 0x followed by hex, a decimal number, or a \"string\"",
            text.chars().take(12).collect::<String>()
        ));
    }
    let end = sign + digits;
    let value: i64 = text[..end].parse().map_err(|_| format!("'{}' is not a number", &text[..end]))?;
    let value = i32::try_from(value)
        .map_err(|_| format!("{value} is out of fio's range for a number ({} to {})", i32::MIN, i32::MAX))?;
    let mut v = value as u32;
    let mut bytes = Vec::new();
    if v == 0 {
        bytes.push(0);
    }
    while v != 0 {
        bytes.push((v & 0xff) as u8);
        v >>= 8;
    }
    Ok((bytes, &text[end..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(text: &str) -> Vec<u8> {
        BufferPattern::parse(text).unwrap().0.to_vec()
    }

    #[test]
    fn patterns_are_read_as_fio_reads_them() {
        assert_eq!(bytes("0xdeadbeef"), [0xde, 0xad, 0xbe, 0xef]);
        assert_eq!(bytes("0xabc"), [0x0a, 0xbc], "an odd count: a leading nibble");
        assert_eq!(bytes("0xff0x14"), [0xff, 0x14], "two numbers, as fio's look-back splits them");
        assert_eq!(bytes("\"abcd\""), b"abcd");
        assert_eq!(bytes("-12"), [0xf4, 0xff, 0xff, 0xff], "a 32-bit value, least significant first");
        assert_eq!(bytes("258"), [0x02, 0x01]);
        assert_eq!(bytes("0"), [0]);
        assert_eq!(
            bytes("0xdeadface\"abcd\"-12"),
            [0xde, 0xad, 0xfa, 0xce, b'a', b'b', b'c', b'd', 0xf4, 0xff, 0xff, 0xff]
        );
        let e = |t: &str| BufferPattern::parse(t).unwrap_err();
        assert!(e("'file'").contains("a file ('name') is not taken"));
        assert!(e("\"abc").contains("without its closing"));
        assert!(e("xyz").contains("is not a piece fio reads"));
        assert!(e("4294967296").contains("out of fio's range"));
        assert!(e(&format!("0x{}", "ab".repeat(513))).contains("more than fio's 512"));
        let mut buf = [0u8; 7];
        BufferPattern::parse("0xa1b2c3").unwrap().fill(&mut buf);
        assert_eq!(buf, [0xa1, 0xb2, 0xc3, 0xa1, 0xb2, 0xc3, 0xa1], "repeated from the start");
        assert_eq!(BufferPattern::parse("\"ab\"").unwrap().to_string(), "0x6162");
    }
}
