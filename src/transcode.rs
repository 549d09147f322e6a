//! Step 3 of the pipeline: turn the read bytes into the code units of a JS string,
//! by the route `classify` picks (with simdutf, the Latin-1 converter itself
//! tells Latin-1 text from wide text; see `decode_simd`). ASCII bytes are used
//! as they are; valid text is validated and converted in one simdutf pass when
//! simdutf's self-test passed, otherwise by simdutf8 + encoding_rs; invalid
//! text is decoded with U+FFFD replacement exactly as Node does.

use std::mem::MaybeUninit;

use crate::classify::{classify_after_ascii, is_ascii_after, Class};
use crate::parallel;
use crate::read::ReadFacts;
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

/// What borrowed bytes decode to: nothing new for ASCII (the bytes are the
/// Latin-1 data), otherwise newly made code units.
#[derive(Debug, PartialEq, Eq)]
pub enum Decoded {
  Ascii,
  Converted(Text),
}

/// Decodes UTF-8 bytes exactly as Node's `buffer.toString('utf8')` does: WHATWG
/// decoding, one U+FFFD per maximal invalid subpart, a BOM kept as U+FEFF.
pub fn decode(bytes: Vec<u8>) -> Text {
  decode_read_owned(bytes, ReadFacts::default())
}

/// `decode` for bytes just read, with what the read found out (see `decode_read`).
pub fn decode_read_owned(bytes: Vec<u8>, facts: ReadFacts) -> Text {
  match decode_read(&bytes, facts) {
    // The read buffer itself becomes the string data: no copy.
    Decoded::Ascii => Text::Latin1(bytes),
    Decoded::Converted(text) => text,
  }
}

/// `decode` for borrowed bytes: ASCII is reported, not copied.
pub fn decode_slice(bytes: &[u8]) -> Decoded {
  decode_read(bytes, ReadFacts::default())
}

/// `decode_slice` for bytes just read, with what the read found out: a known
/// ASCII prefix, and whether the bytes were read in two halves.
pub fn decode_read(bytes: &[u8], facts: ReadFacts) -> Decoded {
  let ascii_prefix = facts.ascii_prefix;
  if simd::available() {
    return decode_simd(
      bytes,
      ascii_prefix,
      parallel::split_conversion(bytes.len(), facts.in_halves),
    );
  }
  let converted = match classify_after_ascii(bytes, ascii_prefix) {
    Class::Ascii => return Decoded::Ascii,
    Class::Latin1Range => simdutf8::basic::from_utf8(bytes)
      .ok()
      .map(|s| Text::Latin1(latin1_fallback(s))),
    Class::Wide => simdutf8::basic::from_utf8(bytes)
      .ok()
      .map(|s| Text::Utf16(utf16_fallback(s))),
  };
  Decoded::Converted(converted.unwrap_or_else(|| Text::Utf16(decode_lossy(bytes, false))))
}

/// The simdutf route. Its Latin-1 converter is also the Latin-1-or-wide test:
/// it gives up at the first 64-byte block holding a code point above U+00FF, so
/// wide text costs it next to nothing, and Latin-1 text is spared the separate
/// max-byte pass of `classify`.
/// Wide text, valid or not, goes to the lossy decoder, whose first step is one
/// validating conversion up to the first error, if any: valid text costs it one
/// pass, and text with an error near its end is not converted twice (a failed
/// whole-input conversion first made it slower than Node's own toString).
fn decode_simd(bytes: &[u8], ascii_prefix: usize, split: bool) -> Decoded {
  if is_ascii_after(bytes, ascii_prefix) {
    return Decoded::Ascii;
  }
  let text = simd::try_latin1(bytes, split)
    .map(Text::Latin1)
    .unwrap_or_else(|| Text::Utf16(decode_wide(bytes, split)));
  Decoded::Converted(text)
}

/// Wide text (simdutf route): valid text to split (`split`) is converted on
/// two threads, each half where its read left it, in its own core's cache;
/// anything else goes to the lossy decoder.
fn decode_wide(bytes: &[u8], split: bool) -> Vec<u16> {
  if split {
    if let Some(units) = parallel::decode_halves(bytes, decode_lossy_into, append_lossy_simd) {
      return units;
    }
  }
  decode_lossy(bytes, true)
}

fn latin1_fallback(text: &str) -> Vec<u8> {
  let mut out = vec![0u8; text.len()];
  let written = encoding_rs::mem::convert_utf8_to_latin1_lossy(text.as_bytes(), &mut out);
  out.truncate(written);
  out
}

fn utf16_fallback(text: &str) -> Vec<u16> {
  let mut out = vec![0u16; text.len()];
  let written = encoding_rs::mem::convert_str_to_utf16(text, &mut out);
  out.truncate(written);
  out
}

/// encoding_rs's lossy decoder: scalar, but the fastest choice when errors are dense.
fn append_lossy_scalar(bytes: &[u8], out: &mut Vec<u16>) {
  let start = out.len();
  out.resize(start + bytes.len() + 1, 0);
  let written = encoding_rs::mem::convert_utf8_to_utf16(bytes, &mut out[start..]);
  out.truncate(start + written);
}

/// Once there is more than one error per this many bytes decoded so far (and
/// at least `DENSE_MIN_ERRORS` errors), the per-error cost of the SIMD route
/// exceeds the scalar decoder's: the rest goes to the scalar decoder.
const DENSE_ERROR_SPACING: usize = 64;
const DENSE_MIN_ERRORS: usize = 16;

/// Any bytes decoded to UTF-16 with U+FFFD replacement: invalid input on both
/// routes, and with simdutf all wide text (valid text has no error to replace).
/// Large inputs are decoded as two halves on two threads (see
/// `parallel::append_halves`).
fn decode_lossy(bytes: &[u8], simd: bool) -> Vec<u16> {
  let append = if simd { append_lossy_simd } else { append_lossy_scalar };
  if bytes.len() >= crate::parallel::LOSSY_PARALLEL_MIN_BYTES {
    if let Some(out) = crate::parallel::append_halves(bytes, append) {
      return out;
    }
  }
  // encoding_rs wants one unit of room more than the input's length.
  let mut out = crate::pool::take(bytes.len() + 1);
  append(bytes, &mut out);
  out
}

/// Validate and convert each valid run in one simdutf pass, write U+FFFD for
/// the maximal invalid subpart after it (std's `error_len`, which is exactly
/// WHATWG's), continue after that. Where errors turn out dense, the rest goes
/// to encoding_rs, whose WHATWG decoder gives the same result from any point
/// just after an error. One pass beats validating first and converting after.
fn append_lossy_simd(bytes: &[u8], out: &mut Vec<u16>) {
  let mut rest = bytes;
  let mut errors = 0;
  loop {
    let start = out.len();
    let valid = simd::append_utf16_up_to_error(rest, out);
    if valid == rest.len() {
      return;
    }
    let Some(invalid) = maximal_subpart_at(rest, valid) else {
      // simdutf's error position is not where std puts the error: trust std.
      out.truncate(start);
      append_lossy_checked(rest, out);
      return;
    };
    out.push(0xFFFD);
    errors += 1;
    rest = &rest[valid + invalid..];
    let consumed = bytes.len() - rest.len();
    if errors >= DENSE_MIN_ERRORS && errors * DENSE_ERROR_SPACING > consumed {
      append_lossy_scalar(rest, out);
      return;
    }
  }
}

/// `append_lossy_simd` into `room` (room for one unit per byte and one more),
/// for the right half of `parallel::decode_halves`: the text up to the first
/// error is converted in place, only what follows it goes through a buffer of
/// its own. Returns the units written.
fn decode_lossy_into(bytes: &[u8], room: &mut [MaybeUninit<u16>]) -> usize {
  let (valid, units) = simd::utf16_up_to_error_into(bytes, room);
  if valid == bytes.len() {
    return units;
  }
  // Where simdutf's error is not where std puts it, all of it goes the slow way.
  let (start, units) = if maximal_subpart_at(bytes, valid).is_some() {
    (valid, units)
  } else {
    (0, 0)
  };
  let mut rest: Vec<u16> = crate::pool::take(bytes.len() - start + 1);
  append_lossy_simd(&bytes[start..], &mut rest);
  room[units..units + rest.len()].write_copy_of_slice(&rest);
  let written = units + rest.len();
  crate::pool::give(rest);
  written
}

/// The length of the maximal invalid subpart at `at`, if `bytes[..at]` ends on
/// a whole character and an invalid sequence starts at `at`; `None` otherwise.
/// Looks at a few bytes either side only: the part before is taken as checked.
fn maximal_subpart_at(bytes: &[u8], at: usize) -> Option<usize> {
  // The last character before `at` must be whole (its lead is at most 3 back).
  if let Some(lead) = (at.saturating_sub(4)..at).rev().find(|&i| bytes[i] & 0xC0 != 0x80) {
    std::str::from_utf8(&bytes[lead..at]).ok()?;
  } else if at > 0 {
    return None; // only continuation bytes before `at`
  }
  // A sequence is whole or broken within 4 bytes.
  let window = &bytes[at..bytes.len().min(at + 4)];
  match std::str::from_utf8(window) {
    Err(e) if e.valid_up_to() == 0 => Some(e.error_len().unwrap_or(window.len())),
    _ => None,
  }
}

/// The lossy decoder that validates with simdutf8 before converting each run:
/// a pass more than `append_lossy_simd`, kept for the case where simdutf's and
/// std's error positions disagree.
fn append_lossy_checked(bytes: &[u8], out: &mut Vec<u16>) {
  let mut rest = bytes;
  loop {
    let (valid, after_error) = split_at_first_error(rest);
    simd::append_utf16(valid, out);
    let Some(after_error) = after_error else {
      return;
    };
    out.push(0xFFFD);
    rest = after_error;
  }
}

/// Splits `bytes` into its valid UTF-8 prefix and what follows the first maximal
/// invalid subpart (`None` if there is no error). A sequence truncated by the
/// end of input is one subpart that reaches the end.
fn split_at_first_error(bytes: &[u8]) -> (&str, Option<&[u8]>) {
  match simdutf8::compat::from_utf8(bytes) {
    Ok(valid) => (valid, None),
    Err(e) => {
      let (prefix, tail) = bytes.split_at(e.valid_up_to());
      // SAFETY: simdutf8 just validated `prefix` (everything before the error).
      let valid = unsafe { std::str::from_utf8_unchecked(prefix) };
      (valid, Some(&tail[e.error_len().unwrap_or(tail.len())..]))
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
  match decode_slice(bytes) {
    Decoded::Ascii => Borrowed::Ascii(bytes),
    Decoded::Converted(text) => Borrowed::Text(text),
  }
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
      b"\xc3\xa9\x80",
    ];
    for c in cases {
      assert_eq!(as_utf16(decode(c.to_vec())), reference(c), "{c:?}");
    }
  }

  #[test]
  fn maximal_subpart_at_confirms_only_true_error_positions() {
    let text = "a\u{e9}\u{4e2d}\u{1f600}".as_bytes(); // 1 + 2 + 3 + 4 bytes
    let with = |tail: &[u8]| [text, tail].concat();
    // True error starts, after a whole character: std's error_len.
    assert_eq!(maximal_subpart_at(&with(b"\xff"), 10), Some(1));
    assert_eq!(maximal_subpart_at(&with(b"\xe4\xb8A"), 10), Some(2));
    assert_eq!(
      maximal_subpart_at(&with(b"\xf0\x9f\x98"), 10),
      Some(3),
      "truncated at the end"
    );
    assert_eq!(maximal_subpart_at(b"\x80", 0), Some(1));
    // Not an error start: a valid character, or inside a broken sequence.
    assert_eq!(maximal_subpart_at(&with(b"ok"), 10), None);
    assert_eq!(maximal_subpart_at(&with(b"\xe4\xb8A"), 11), None, "the lead is before");
    assert_eq!(maximal_subpart_at(&with(b"\xe4\xb8A"), 12), None, "after the subpart");
    // The part before does not end on a whole character.
    assert_eq!(maximal_subpart_at(text, 9), None);
    assert_eq!(maximal_subpart_at(b"\x80\x80\x80\x80\xff", 4), None);
  }

  #[test]
  fn the_checked_fallback_matches_std_lossy() {
    let mut bytes = "\u{e9}x\u{4e2d}\u{1f600}".repeat(3000).into_bytes();
    for (n, i) in (5..bytes.len()).step_by(331).enumerate() {
      bytes[i] = [0xff, 0x80, 0xe4, 0xf0, 0xc0][n % 5];
    }
    bytes.extend_from_slice(b"\xf0\x9f\x98");
    let mut out = Vec::new();
    append_lossy_checked(&bytes, &mut out);
    assert_eq!(out, reference(&bytes));
  }

  #[test]
  fn sparse_and_dense_errors_both_match() {
    let mut sparse = "\u{e9}x\u{4e2d}".repeat(4000).into_bytes();
    for i in (100..sparse.len()).step_by(997) {
      sparse[i] = 0xff;
    }
    assert_eq!(as_utf16(decode(sparse.clone())), reference(&sparse));
    let dense: Vec<u8> = (0..50000u32)
      .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
      .collect();
    assert_eq!(as_utf16(decode(dense.clone())), reference(&dense));
  }

  #[test]
  fn halves_placed_by_the_left_count_decode_as_the_whole() {
    if !simd::available() {
      return;
    }
    let text = "d\u{e9}j\u{e0} \u{4e2d}\u{6587} \u{1f600} ascii "
      .repeat(40_000)
      .into_bytes();
    let split = crate::parallel::page_aligned_middle(text.len());
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
      let got = crate::parallel::decode_halves(&bytes, decode_lossy_into, append_lossy_simd);
      assert!(got == Some(reference(&bytes)), "fault {fault:x?} at {at}");
      // The way text read in halves goes: the same units.
      assert!(
        decode_wide(&bytes, true) == reference(&bytes),
        "fault {fault:x?} at {at}"
      );
    }
  }

  #[test]
  fn decode_lossy_into_resumes_after_the_valid_part() {
    if !simd::available() {
      return;
    }
    for bytes in [
      &b"abc"[..],
      b"ab\xffcd",
      b"\xe4\xb8\xad\xe4\xb8",
      b"\x80",
      b"\xf0\x9f\x98\x80\xed\xa0\x80z",
    ] {
      let mut room = vec![MaybeUninit::<u16>::uninit(); bytes.len() + 1];
      let n = decode_lossy_into(bytes, &mut room);
      // SAFETY: `decode_lossy_into` initialised the first `n` units.
      let got: Vec<u16> = room[..n].iter().map(|u| unsafe { u.assume_init() }).collect();
      assert_eq!(got, reference(bytes), "{bytes:x?}");
    }
  }
}
