//! Step 2 of the pipeline: decide once which kind of text the bytes are, so that
//! each kind takes the cheapest route to a JS string (see `transcode`).

/// The four kinds of input, from cheapest to most expensive to turn into a string.
/// The valid kinds carry the bytes as `&str`, so later steps need no re-check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class<'a> {
  /// Every byte < 0x80: the bytes already are Latin-1 string data.
  Ascii,
  /// Valid UTF-8 whose code points are all ≤ U+00FF: fits a one-byte string.
  Latin1(&'a str),
  /// Other valid UTF-8: needs a two-byte (UTF-16) string.
  Utf8(&'a str),
  /// Not valid UTF-8: decoded with U+FFFD replacement, into UTF-16.
  Invalid,
}

/// Classifies `bytes`. Each pass runs at tens of GB/s and the ASCII and Latin-1
/// checks stop at the first chunk that disqualifies them.
pub fn classify(bytes: &[u8]) -> Class<'_> {
  if bytes.is_ascii() {
    return Class::Ascii;
  }
  match simdutf8::basic::from_utf8(bytes) {
    Err(_) => Class::Invalid,
    Ok(text) if fits_latin1(bytes) => Class::Latin1(text),
    Ok(text) => Class::Utf8(text),
  }
}

/// For *valid* UTF-8, every code point is ≤ U+00FF exactly when no byte exceeds
/// 0xC3 (lead bytes 0xC2/0xC3 encode U+0080..U+00FF; continuation bytes are ≤ 0xBF).
fn fits_latin1(valid_utf8: &[u8]) -> bool {
  // Fixed-size chunks let the compiler vectorise the max; stop at the first
  // chunk that fails.
  const CHUNK: usize = 64;
  let mut chunks = valid_utf8.chunks_exact(CHUNK);
  for chunk in &mut chunks {
    if chunk.iter().fold(0u8, |m, &b| m.max(b)) > 0xC3 {
      return false;
    }
  }
  chunks.remainder().iter().all(|&b| b <= 0xC3)
}

#[cfg(test)]
mod tests {
  use super::*;

  fn kind(bytes: &[u8]) -> &'static str {
    match classify(bytes) {
      Class::Ascii => "ascii",
      Class::Latin1(_) => "latin1",
      Class::Utf8(_) => "utf8",
      Class::Invalid => "invalid",
    }
  }

  #[test]
  fn classes_at_the_boundaries() {
    assert_eq!(kind(b""), "ascii");
    assert_eq!(kind("a\u{7f}".as_bytes()), "ascii");
    assert_eq!(kind("\u{80}".as_bytes()), "latin1");
    assert_eq!(kind("caf\u{e9} \u{ff}".as_bytes()), "latin1");
    assert_eq!(kind("\u{100}".as_bytes()), "utf8");
    assert_eq!(kind("\u{10ffff}".as_bytes()), "utf8");
    assert_eq!(kind(b"\xc3"), "invalid");
    assert_eq!(kind(b"\xc0\x80"), "invalid");
    let mut long = "\u{e9}".repeat(100).into_bytes();
    long.extend_from_slice("\u{100}".as_bytes());
    assert_eq!(kind(&long), "utf8");
  }
}
