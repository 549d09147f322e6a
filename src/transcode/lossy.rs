//! U+FFFD replacement exactly as Node does (WHATWG: one U+FFFD per maximal
//! invalid subpart, a BOM kept as U+FEFF), for invalid text on both engines
//! and, with simdutf, for all wide text (valid text has no error to replace,
//! so it costs one validating conversion).

use std::mem::MaybeUninit;

use super::halves::{Lossy, LossyAppend, LossyDecoder};
use super::{dense, halves, simd};
use crate::buffers;
use crate::limits::tuned;
use crate::outcome::ReadFacts;

/// encoding_rs's lossy decoder: the fallback engine's (without simdutf). That
/// engine gives it only text its validation refused, so the text as a whole
/// had a replacement: reported without a second pass to find it.
fn append_lossy_scalar(bytes: &[u8], out: &mut Vec<u16>) -> bool {
  let start = out.len();
  out.resize(start + bytes.len() + 1, 0);
  let written = encoding_rs::mem::convert_utf8_to_utf16(bytes, &mut out[start..]);
  out.truncate(start + written);
  true
}

/// `append_lossy_scalar` into `room` (room for one unit per byte), through a
/// buffer of its own: encoding_rs wants initialised room and a unit more.
fn decode_lossy_scalar_into(bytes: &[u8], room: &mut [MaybeUninit<u16>]) -> Lossy {
  let mut own = buffers::take(bytes.len() + 1);
  let replaced = append_lossy_scalar(bytes, &mut own);
  let units = own.len();
  room[..units].write_copy_of_slice(&own);
  buffers::give(own);
  Lossy { units, replaced }
}

/// Any bytes decoded to UTF-16 with U+FFFD replacement: invalid input on both
/// routes, and with simdutf all wide text (valid text has no error to replace).
/// Large inputs are decoded as two halves on two threads where their read
/// allows (`halves::split_lossy`, `halves::decode_halves_uncounted`). Returns
/// the units and whether any error was replaced.
pub(super) fn decode_lossy(bytes: &[u8], simd: bool, facts: ReadFacts) -> (Vec<u16>, bool) {
  let (decode_into, append): (LossyDecoder, LossyAppend) = if simd {
    (decode_lossy_simd_into, append_lossy_simd)
  } else {
    (decode_lossy_scalar_into, append_lossy_scalar)
  };
  if halves::split_lossy(bytes.len(), facts) {
    if let Some(out) = halves::decode_halves_uncounted(bytes, decode_into) {
      return out;
    }
  }
  // Room for either engine: encoding_rs wants one unit more than the input.
  let mut out = buffers::take(bytes.len() + 1);
  let replaced = append(bytes, &mut out);
  (out, replaced)
}

/// Appends the lossy UTF-16 of `bytes` to `out` (see `decode_lossy_simd_into`);
/// whether it replaced anything.
pub(super) fn append_lossy_simd(bytes: &[u8], out: &mut Vec<u16>) -> bool {
  out.reserve(bytes.len());
  let start = out.len();
  let Lossy { units, replaced } = decode_lossy_simd_into(bytes, out.spare_capacity_mut());
  // SAFETY: `decode_lossy_simd_into` initialised the first `units` units of the spare capacity.
  unsafe { out.set_len(start + units) };
  replaced
}

/// Writes the lossy UTF-16 of `bytes` at the start of `room` (room for one
/// unit per byte, the most any input decodes to); returns the units written.
///
/// Validate and convert each valid run in one simdutf pass, write U+FFFD for
/// the maximal invalid subpart after it (std's `error_len`, which is exactly
/// WHATWG's), continue after that. Where errors turn out dense, the rest goes
/// to `dense`, whose WHATWG decoder gives the same result from any point just
/// after an error. One pass beats validating first and converting after.
pub(super) fn decode_lossy_simd_into(bytes: &[u8], room: &mut [MaybeUninit<u16>]) -> Lossy {
  let (mut rest, mut written, mut errors) = (bytes, 0, 0);
  // Past the first error, whatever route the rest takes has replaced one.
  let replaced = |units| Lossy { units, replaced: true };
  loop {
    let (valid, units) = simd::utf16_up_to_error_into(rest, &mut room[written..]);
    if valid == rest.len() {
      return Lossy {
        units: written + units,
        replaced: errors > 0,
      };
    }
    let Some(invalid) = maximal_subpart_at(rest, valid) else {
      // simdutf's error position is not where std puts the error: the dense
      // decoder, WHATWG's written out, decodes the rest from where it starts.
      return replaced(written + dense::decode_into(rest, &mut room[written..]));
    };
    room[written + units].write(0xFFFD);
    written += units + 1;
    errors += 1;
    rest = &rest[valid + invalid..];
    let consumed = bytes.len() - rest.len();
    if errors >= tuned!(DENSE_MIN_ERRORS) && errors * tuned!(DENSE_ERROR_SPACING) > consumed {
      return replaced(written + dense::decode_into(rest, &mut room[written..]));
    }
  }
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

#[cfg(test)]
mod tests {
  use super::super::test_support::{decoded_into, reference};
  use super::*;

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
  fn decode_lossy_simd_into_resumes_after_the_valid_part() {
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
      // Exactly one unit per byte of room: no more is needed.
      assert_eq!(
        decoded_into(|b, room| decode_lossy_simd_into(b, room).units, bytes),
        reference(bytes),
        "{bytes:x?}"
      );
      let mut room = vec![MaybeUninit::uninit(); bytes.len()];
      assert_eq!(
        decode_lossy_simd_into(bytes, &mut room).replaced,
        std::str::from_utf8(bytes).is_err(),
        "{bytes:x?}"
      );
    }
  }
}
