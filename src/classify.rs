//! Step 2 of the pipeline: decide once which route the bytes take to a JS string.
//!
//! The route is picked from cheap checks that stop early; validity is then
//! established by the converter of that route in the same pass that converts
//! (see `transcode`), so no byte is validated twice. Final classes:
//! ASCII → the bytes as they are; valid and ≤ U+00FF → Latin-1; other valid →
//! UTF-16; invalid (found by either converter) → U+FFFD replacement into UTF-16.
//! With simdutf only the ASCII check is made here: its Latin-1 converter stops
//! as early as the max-byte check would, so it decides Latin-1 vs wide itself.

/// Which converter the bytes go to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
  /// Every byte < 0x80: the bytes already are Latin-1 string data.
  Ascii,
  /// No byte above 0xC3. If valid UTF-8, every code point is ≤ U+00FF (lead
  /// bytes 0xC2/0xC3 encode U+0080..U+00FF; continuation bytes are ≤ 0xBF),
  /// so the text fits a one-byte string.
  Latin1Range,
  /// Some byte above 0xC3: if valid, the text needs a two-byte string.
  Wide,
}

/// Classifies `bytes`; each check runs at tens of GB/s and stops at the first
/// 64-byte chunk that rules its class out.
pub fn classify(bytes: &[u8]) -> Class {
  classify_after_ascii(bytes, 0)
}

/// `classify` when the first `ascii_prefix` bytes are already known to be ASCII
/// (they pass both checks, so only the rest is looked at).
pub fn classify_after_ascii(bytes: &[u8], ascii_prefix: usize) -> Class {
  let rest = &bytes[ascii_prefix.min(bytes.len())..];
  if rest.is_ascii() {
    Class::Ascii
  } else if max_byte_at_most(rest, 0xC3) {
    Class::Latin1Range
  } else {
    Class::Wide
  }
}

/// True if every byte after the first `ascii_prefix` (known ASCII) is ASCII.
pub fn is_ascii_after(bytes: &[u8], ascii_prefix: usize) -> bool {
  bytes[ascii_prefix.min(bytes.len())..].is_ascii()
}

fn max_byte_at_most(bytes: &[u8], limit: u8) -> bool {
  // Fixed-size chunks let the compiler vectorise the max.
  const CHUNK: usize = 64;
  let mut chunks = bytes.chunks_exact(CHUNK);
  for chunk in &mut chunks {
    if chunk.iter().fold(0u8, |m, &b| m.max(b)) > limit {
      return false;
    }
  }
  chunks.remainder().iter().all(|&b| b <= limit)
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn classes_at_the_boundaries() {
    assert_eq!(classify(b""), Class::Ascii);
    assert_eq!(classify("a\u{7f}".as_bytes()), Class::Ascii);
    assert_eq!(classify("\u{80}".as_bytes()), Class::Latin1Range);
    assert_eq!(classify("caf\u{e9} \u{ff}".as_bytes()), Class::Latin1Range);
    assert_eq!(
      classify(b"\xc3"),
      Class::Latin1Range,
      "truncated, found invalid by the converter"
    );
    assert_eq!(classify("\u{100}".as_bytes()), Class::Wide);
    assert_eq!(classify("\u{10ffff}".as_bytes()), Class::Wide);
    let mut long = "\u{e9}".repeat(100).into_bytes();
    long.extend_from_slice("\u{100}".as_bytes());
    assert_eq!(classify(&long), Class::Wide);
    // A known-ASCII prefix is skipped, the rest still decides.
    assert_eq!(classify_after_ascii(b"abc\xc3\xa9", 3), Class::Latin1Range);
    assert_eq!(classify_after_ascii(b"abc", 3), Class::Ascii);
    assert_eq!(classify_after_ascii(b"abc", 99), Class::Ascii);
  }
}
