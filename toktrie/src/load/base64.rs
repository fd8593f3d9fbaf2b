//! A small standard-alphabet base64 decoder (RFC 4648, `+/`, optional `=` padding).

/// Decodes standard base64; `None` on a character outside the alphabet or bad padding.
pub(crate) fn decode(s: &[u8]) -> Option<Vec<u8>> {
    let s = match s.iter().position(|&c| c == b'=') {
        Some(p) => {
            // Padding: only `=` after the first one, at most two, total length a multiple of 4.
            let pad = &s[p..];
            if pad.len() > 2 || pad.iter().any(|&c| c != b'=') || s.len() % 4 != 0 {
                return None;
            }
            &s[..p]
        }
        None => s,
    };
    if s.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let mut acc: u32 = 0;
    let mut nbits = 0;
    for &c in s {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | v as u32;
        nbits += 6;
        if nbits >= 8 {
            nbits -= 8;
            out.push((acc >> nbits) as u8);
            acc &= (1 << nbits) - 1;
        }
    }
    // Leftover bits must be zero in canonical base64, but tiktoken files are canonical
    // anyway; accept non-zero leftovers as Python's decoder does.
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::decode;

    #[test]
    fn known_values() {
        assert_eq!(decode(b"").unwrap(), b"");
        assert_eq!(decode(b"AA==").unwrap(), b"\0");
        assert_eq!(decode(b"IQ==").unwrap(), b"!");
        assert_eq!(decode(b"aGVsbG8=").unwrap(), b"hello");
        assert_eq!(decode(b"aGVsbG8gd29ybGQ=").unwrap(), b"hello world");
        assert_eq!(decode(b"/w==").unwrap(), b"\xff");
        assert_eq!(decode(b"Zm9v").unwrap(), b"foo");
        assert!(decode(b"Zm9v=").is_none());
        assert!(decode(b"Z").is_none());
        assert!(decode(b"Zm9*").is_none());
        assert!(decode(b"A===").is_none());
    }
}
