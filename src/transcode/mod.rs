//! Step 3 of the pipeline: the code units of the JS string, by the route
//! `classify` picks. ASCII bytes are used as they are; valid text is validated
//! and converted in one pass (simdutf when its self-test passed, otherwise
//! simdutf8 + encoding_rs); invalid text is decoded with U+FFFD replacement
//! exactly as Node does (`lossy`; `dense` where errors are a few bytes
//! apart). Large inputs are converted as two halves on two threads (`halves`),
//! but for a batch's reads (`ReadFacts::alone`).

mod dense;
mod halves;
mod lossy;
mod simd;

use crate::classify::{classify_after_ascii, is_ascii_after, Class};
use crate::limits::tuned;
use crate::outcome::ReadFacts;
pub use crate::outcome::{Decoded, Text};

/// Which UTF-8 engine this process uses: "simdutf", or "fallback" (simdutf8 +
/// encoding_rs) when simdutf is turned off or failed its self-test.
pub(crate) fn engine() -> &'static str {
  if simd::available() {
    "simdutf"
  } else {
    "fallback"
  }
}

/// Decodes UTF-8 `bytes` exactly as Node's `buffer.toString('utf8')` does
/// (WHATWG, one U+FFFD per maximal invalid subpart, a BOM kept as U+FEFF),
/// using what their read found out (`facts`: a known ASCII prefix, whether
/// they were read in two halves or alone; `ReadFacts::default()` for other
/// bytes).
pub fn decode(bytes: &[u8], facts: ReadFacts) -> Decoded {
  if simd::available() {
    return decode_simd(bytes, facts);
  }
  let converted = match classify_after_ascii(bytes, facts.ascii_prefix) {
    Class::Ascii => return Decoded::Ascii,
    Class::Latin1Range => simdutf8::basic::from_utf8(bytes)
      .ok()
      .map(|s| Text::Latin1(latin1_fallback(s))),
    Class::Wide => simdutf8::basic::from_utf8(bytes)
      .ok()
      .map(|s| Text::Utf16(utf16_fallback(s))),
  };
  match converted {
    Some(text) => Decoded::Text(text),
    None => Decoded::Replaced(lossy::decode_lossy(bytes, false, facts).0),
  }
}

/// The simdutf route. Its Latin-1 converter is also the Latin-1-or-wide test:
/// it gives up at the first 64-byte block holding a code point above U+00FF, so
/// wide text costs it next to nothing, and Latin-1 text is spared the separate
/// max-byte pass of `classify`.
/// Wide text, valid or not, goes to the lossy decoder, whose first step is one
/// validating conversion up to the first error, if any: valid text costs it one
/// pass, and text with an error near its end is not converted twice.
fn decode_simd(bytes: &[u8], facts: ReadFacts) -> Decoded {
  if is_ascii_after(bytes, facts.ascii_prefix) {
    return Decoded::Ascii;
  }
  let split = halves::split_conversion(bytes.len(), facts);
  if let Some(latin1) = halves::convert(bytes, &halves::LATIN1, split) {
    return Decoded::Text(Text::Latin1(latin1));
  }
  match decode_wide(bytes, split, facts) {
    (units, false) => Decoded::Text(Text::Utf16(units)),
    (units, true) => Decoded::Replaced(units),
  }
}

/// Wide text (simdutf route): valid text to split (`split`) is converted on
/// two threads, each half where its read left it, in its own core's cache;
/// anything else goes to the lossy decoder. Returns the units and whether any
/// error was replaced.
fn decode_wide(bytes: &[u8], split: bool, facts: ReadFacts) -> (Vec<u16>, bool) {
  if split {
    if let Some(decoded) = halves::decode_halves(bytes, lossy::decode_lossy_simd_into, lossy::append_lossy_simd) {
      return decoded;
    }
  }
  lossy::decode_lossy(bytes, true, facts)
}

/// Whether the first chunk (`READ_CHUNK_BYTES`) of `bytes` holds an error (not just a
/// character cut at their end): text refused there need not be counted or
/// converted by a route that only valid text finishes.
pub(crate) fn starts_invalid(bytes: &[u8]) -> bool {
  let head = &bytes[..bytes.len().min(tuned!(READ_CHUNK_BYTES))];
  matches!(simdutf8::compat::from_utf8(head), Err(e) if e.error_len().is_some())
}

/// The fallback engine's Latin-1 of `text`, in a pooled buffer: the string
/// maker gives every buffer back to the pool, so fresh ones would fill it.
fn latin1_fallback(text: &str) -> Vec<u8> {
  let mut out = crate::buffers::take(text.len());
  out.resize(text.len(), 0);
  let written = encoding_rs::mem::convert_utf8_to_latin1_lossy(text.as_bytes(), &mut out);
  out.truncate(written);
  out
}

/// The fallback engine's UTF-16 of `text`, in a pooled buffer (as above).
fn utf16_fallback(text: &str) -> Vec<u16> {
  let mut out = crate::buffers::take(text.len());
  out.resize(text.len(), 0);
  let written = encoding_rs::mem::convert_str_to_utf16(text, &mut out);
  out.truncate(written);
  out
}

/// What the decoders' unit tests compare with, and how they call a decoder
/// that writes into room.
#[cfg(test)]
mod test_support {
  use std::mem::MaybeUninit;

  /// The lossy decode of `bytes` by std: WHATWG's, as Node's.
  pub(super) fn reference(bytes: &[u8]) -> Vec<u16> {
    String::from_utf8_lossy(bytes).encode_utf16().collect()
  }

  /// The units `decode_into` writes for `bytes` into room of exactly one
  /// unit per byte (it returns how many).
  pub(super) fn decoded_into(decode_into: impl Fn(&[u8], &mut [MaybeUninit<u16>]) -> usize, bytes: &[u8]) -> Vec<u16> {
    let mut room = vec![MaybeUninit::<u16>::uninit(); bytes.len()];
    let n = decode_into(bytes, &mut room);
    // SAFETY: a decoder initialises the first units it counts.
    room[..n].iter().map(|u| unsafe { u.assume_init() }).collect()
  }
}

#[cfg(test)]
mod tests {
  use super::test_support::reference;
  use super::*;

  fn decode_owned(bytes: Vec<u8>) -> Text {
    decode(&bytes, ReadFacts::default()).owning(bytes)
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
      b"\xc3\xa9\x80",
    ];
    for c in cases {
      assert_eq!(as_utf16(decode_owned(c.to_vec())), reference(c), "{c:?}");
      let replaced = matches!(decode(c, ReadFacts::default()), Decoded::Replaced(_));
      assert_eq!(replaced, std::str::from_utf8(c).is_err(), "{c:?}");
    }
  }

  #[test]
  fn sparse_and_dense_errors_both_match() {
    let mut sparse = "\u{e9}x\u{4e2d}".repeat(4000).into_bytes();
    for i in (100..sparse.len()).step_by(997) {
      sparse[i] = 0xff;
    }
    assert_eq!(as_utf16(decode_owned(sparse.clone())), reference(&sparse));
    let dense: Vec<u8> = (0..50000u32)
      .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
      .collect();
    assert_eq!(as_utf16(decode_owned(dense.clone())), reference(&dense));
  }

  #[test]
  fn halves_placed_by_the_left_count_decode_as_the_whole() {
    if !simd::available() {
      return;
    }
    let text = "d\u{e9}j\u{e0} \u{4e2d}\u{6587} \u{1f600} ascii "
      .repeat(40_000)
      .into_bytes();
    let split = crate::two_threads::page_aligned_middle(text.len());
    // Valid; an error at the start, the end, either side of the split, inside
    // a character of each half (the left half's count is then not its units:
    // a lone continuation byte counts none, a cut 4-byte character two);
    // dense errors in the right half; a character cut at the end.
    let faults: [(usize, &[u8]); 9] = [
      (0, b""),
      (0, b"\xff"),
      (text.len() - 1, b"\xf0"),
      (split - 1, b"\xe2"),
      (split, b"\x80"),
      (1000, b"\x80\x80"),
      (1000, b"\xf0\x9f\x98 "),
      (split + 5000, &[0xC3; 200]),
      (text.len() - 3, b"\xf0\x9f"),
    ];
    for (at, fault) in faults {
      let mut bytes = text.clone();
      bytes[at..at + fault.len()].copy_from_slice(fault);
      let invalid = std::str::from_utf8(&bytes).is_err();
      let got = halves::decode_halves(&bytes, lossy::decode_lossy_simd_into, lossy::append_lossy_simd);
      assert!(got == Some((reference(&bytes), invalid)), "fault {fault:x?} at {at}");
      // The way text read in halves goes: the same units.
      assert!(
        decode_wide(&bytes, true, ReadFacts::default()) == (reference(&bytes), invalid),
        "fault {fault:x?} at {at}"
      );
    }
  }
}

/// The converters `tests/` checks on their own (see `crate::testing`).
pub mod testing {
  pub use super::simd::{append_utf16_up_to_error, available as simd_available, DISABLE_ENV};

  /// Latin-1 of valid UTF-8 with every code point ≤ U+00FF, on two threads if
  /// `split`; `None` otherwise.
  pub fn convert_latin1(bytes: &[u8], split: bool) -> Option<Vec<u8>> {
    super::halves::convert(bytes, &super::halves::LATIN1, split)
  }

  /// UTF-16 of valid UTF-8, on two threads if `split`; `None` if invalid.
  pub fn convert_utf16(bytes: &[u8], split: bool) -> Option<Vec<u16>> {
    super::halves::convert(bytes, &super::halves::UTF16, split)
  }

  /// Whether bytes of `len` decoded from memory are converted on two threads.
  pub fn split_conversion(len: usize) -> bool {
    super::halves::split_conversion(len, super::ReadFacts::default())
  }
}
