//! Step 3 of the pipeline: turn the read bytes into the code units of a JS string,
//! by the class `classify` found. ASCII bytes are used as they are; valid text
//! goes through simdutf when its self-test passed, otherwise through encoding_rs.

use crate::classify::{classify, Class};
use crate::simd;

/// The code units of the finished string, owned, ready to hand to V8.
#[derive(Debug, PartialEq, Eq)]
pub enum Text {
  /// One-byte (Latin-1) string data.
  Latin1(Vec<u8>),
  /// Two-byte (UTF-16) string data.
  Utf16(Vec<u16>),
}

impl Text {
  /// The string's length in characters (code units), as V8 counts it.
  pub fn char_count(&self) -> usize {
    match self {
      Text::Latin1(v) => v.len(),
      Text::Utf16(v) => v.len(),
    }
  }
}

/// Decodes UTF-8 bytes exactly as Node's `buffer.toString('utf8')` does: WHATWG
/// decoding, one U+FFFD per maximal invalid subpart, a BOM kept as U+FEFF.
pub fn decode(bytes: Vec<u8>) -> Text {
  let simd = simd::available();
  match classify(&bytes) {
    // The read buffer itself becomes the string data: no copy.
    Class::Ascii => Text::Latin1(bytes),
    Class::Latin1(text) => Text::Latin1(if simd {
      simd::to_latin1(text)
    } else {
      latin1_fallback(text)
    }),
    Class::Utf8(text) => {
      let mut out = Vec::new();
      if simd {
        simd::append_utf16(text, &mut out);
      } else {
        append_utf16_fallback(text, &mut out);
      }
      Text::Utf16(out)
    }
    Class::Invalid => Text::Utf16(decode_lossy(&bytes, simd)),
  }
}

fn latin1_fallback(text: &str) -> Vec<u8> {
  let mut out = vec![0u8; text.len()];
  let written = encoding_rs::mem::convert_utf8_to_latin1_lossy(text.as_bytes(), &mut out);
  out.truncate(written);
  out
}

fn append_utf16_fallback(text: &str, out: &mut Vec<u16>) {
  let start = out.len();
  out.resize(start + text.len(), 0);
  let written = encoding_rs::mem::convert_str_to_utf16(text, &mut out[start..]);
  out.truncate(start + written);
}

/// encoding_rs's lossy decoder: scalar, but fine when errors are dense.
fn append_lossy_fallback(bytes: &[u8], out: &mut Vec<u16>) {
  let start = out.len();
  out.resize(start + bytes.len() + 1, 0);
  let written = encoding_rs::mem::convert_utf8_to_utf16(bytes, &mut out[start..]);
  out.truncate(start + written);
}

/// A valid run shorter than this before an error means errors are dense: the
/// per-error cost of the SIMD route would exceed the scalar decoder's.
const DENSE_ERROR_RUN: usize = 256;

/// Invalid UTF-8: SIMD-validate up to each error, SIMD-convert the valid run,
/// write U+FFFD for the maximal invalid subpart (std/simdutf8's `error_len` is
/// exactly WHATWG's), continue after it. Where errors are dense, the rest goes
/// to encoding_rs, whose WHATWG decoder gives the same result from any point
/// just after an error.
fn decode_lossy(bytes: &[u8], simd: bool) -> Vec<u16> {
  let mut out = Vec::with_capacity(bytes.len());
  if !simd {
    append_lossy_fallback(bytes, &mut out);
    return out;
  }
  let mut rest = bytes;
  loop {
    match simdutf8::compat::from_utf8(rest) {
      Ok(valid) => {
        simd::append_utf16(valid, &mut out);
        return out;
      }
      Err(e) => {
        let valid_len = e.valid_up_to();
        // The prefix was just validated; re-checking it with the fast validator
        // gives us a &str without unsafe.
        if let Ok(valid) = simdutf8::basic::from_utf8(&rest[..valid_len]) {
          simd::append_utf16(valid, &mut out);
        }
        out.push(0xFFFD);
        match e.error_len() {
          // Truncated sequence at the very end: one U+FFFD for all of it.
          None => return out,
          Some(n) => rest = &rest[valid_len + n..],
        }
        if valid_len < DENSE_ERROR_RUN {
          append_lossy_fallback(rest, &mut out);
          return out;
        }
      }
    }
  }
}

/// The code units of a string decoded from borrowed bytes: ASCII input is its
/// own Latin-1 data (so nothing is copied before V8 copies it), everything else
/// is transcoded into a new buffer exactly as `decode` does.
#[derive(Debug, PartialEq, Eq)]
pub enum Borrowed<'a> {
  /// Every byte < 0x80: the input itself is the one-byte string data.
  Ascii(&'a [u8]),
  /// Newly made code units.
  Text(Text),
}

/// `decode` for bytes the caller keeps (a JS Buffer / TypedArray): the same
/// classification and transcoding, without taking ownership of the input.
pub fn decode_borrowed(bytes: &[u8]) -> Borrowed<'_> {
  let simd = simd::available();
  Borrowed::Text(match classify(bytes) {
    Class::Ascii => return Borrowed::Ascii(bytes),
    Class::Latin1(text) => Text::Latin1(if simd {
      simd::to_latin1(text)
    } else {
      latin1_fallback(text)
    }),
    Class::Utf8(text) => {
      let mut out = Vec::new();
      if simd {
        simd::append_utf16(text, &mut out);
      } else {
        append_utf16_fallback(text, &mut out);
      }
      Text::Utf16(out)
    }
    Class::Invalid => Text::Utf16(decode_lossy(bytes, simd)),
  })
}

#[cfg(test)]
mod tests {
  use super::*;

  fn reference(bytes: &[u8]) -> Vec<u16> {
    String::from_utf8_lossy(bytes).encode_utf16().collect()
  }

  fn as_utf16(t: Text) -> Vec<u16> {
    match t {
      Text::Latin1(v) => v.into_iter().map(u16::from).collect(),
      Text::Utf16(v) => v,
    }
  }

  #[test]
  fn matches_std_lossy_on_edge_cases() {
    let cases: Vec<&[u8]> = vec![
      b"",
      b"abc",
      "caf\u{e9}".as_bytes(),
      "\u{4e2d}\u{1f600}".as_bytes(),
      b"\xff",
      b"a\xc3",
      b"\xe2\x82",
      b"\xf0\x9f\x98",
      b"\xed\xa0\x80",
      b"\xc0\xaf",
      b"\xf4\x90\x80\x80",
      b"\xef\xbb\xbfBOM",
    ];
    for c in cases {
      assert_eq!(as_utf16(decode(c.to_vec())), reference(c), "{c:?}");
    }
  }

  #[test]
  fn sparse_and_dense_errors_both_match() {
    let mut sparse = "\u{e9}x\u{4e2d}".repeat(400).into_bytes();
    for i in (100..sparse.len()).step_by(997) {
      sparse[i] = 0xff;
    }
    assert_eq!(as_utf16(decode(sparse.clone())), reference(&sparse));
    let dense: Vec<u8> = (0..5000u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
    assert_eq!(as_utf16(decode(dense.clone())), reference(&dense));
  }
}
