//! Safe wrappers over the `simdutf` crate (the C++ library Node, Bun and V8 use),
//! plus the self-test that decides whether this process may use it.
//!
//! simdutf picks AVX-512/AVX2/SSE4.2 at run time. `SIMDUTF_FORCE_IMPLEMENTATION`
//! set to an empty or unknown value makes every call return 0/false silently, so
//! we check it once on known input and otherwise use the pure-Rust path.
//!
//! The converters used are simdutf's validating ones (they return 0 on input
//! they cannot convert, or, the one with errors, where the first error is),
//! and every output is checked or reserved here to have room for one code unit
//! per input byte, the most any input converts to, so no caller can pass a
//! buffer that is too small.

use std::mem::MaybeUninit;
use std::sync::OnceLock;

/// Set to any value, this environment variable turns simdutf off (for tests and
/// for ruling simdutf out when debugging); the pure-Rust path is used instead.
pub const DISABLE_ENV: &str = "READFILE_UTF8_NO_SIMD";

/// True when simdutf may be used: not disabled, and it converts known samples
/// correctly in this process.
pub fn available() -> bool {
  static OK: OnceLock<bool> = OnceLock::new();
  *OK.get_or_init(|| std::env::var_os(DISABLE_ENV).is_none() && self_test())
}

fn self_test() -> bool {
  let mixed = "plain \u{e9}\u{ff} text \u{4e2d}\u{1f600} ".repeat(8);
  let latin1 = "caf\u{e9} \u{ff}\u{80} ".repeat(8);
  let expected_utf16: Vec<u16> = mixed.encode_utf16().collect();
  let (mut whole, mut cut) = (Vec::new(), Vec::new());
  append_utf16_up_to_error(mixed.as_bytes(), &mut whole) == mixed.len()
    && whole == expected_utf16
    && append_utf16_up_to_error(b"ok \xff", &mut cut) == 3
    && cut == [0x6f, 0x6b, 0x20]
    && latin1_of(latin1.as_bytes()) == Some(latin1.chars().map(|c| c as u8).collect::<Vec<u8>>())
    && latin1_of(b"\xc3").is_none()
}

/// Latin-1 of `bytes`, for the self-test; `None` if they do not convert.
fn latin1_of(bytes: &[u8]) -> Option<Vec<u8>> {
  let mut out = Vec::with_capacity(bytes.len());
  let written = latin1_into(bytes, out.spare_capacity_mut());
  // SAFETY: latin1_into initialised the first `written` bytes of the spare capacity.
  unsafe { out.set_len(written) };
  (written > 0).then_some(out)
}

/// Appends to `dst` the UTF-16 of the part of `bytes` before simdutf's first
/// error, validating and converting in one pass; returns that part's length
/// (`bytes.len()` if there is no error). The caller confirms the error is where
/// simdutf says (see `lossy::decode_lossy_simd_into`).
pub fn append_utf16_up_to_error(bytes: &[u8], dst: &mut Vec<u16>) -> usize {
  dst.reserve(bytes.len());
  let (valid, units) = utf16_up_to_error_into(bytes, dst.spare_capacity_mut());
  // SAFETY: `utf16_up_to_error_into` initialised `units` units at the start of the spare capacity.
  unsafe { dst.set_len(dst.len() + units) };
  valid
}

/// `append_utf16_up_to_error` into the start of `room`, which must have room
/// for one unit per byte; returns the valid part's length and its units.
///
/// On an error simdutf returns the error's position, not the units written:
/// they are counted again over the valid part (a counting pass over bytes just
/// read, much cheaper than the second validation it replaces).
pub(crate) fn utf16_up_to_error_into(bytes: &[u8], room: &mut [MaybeUninit<u16>]) -> (usize, usize) {
  assert!(room.len() >= bytes.len(), "room for one unit per byte");
  // SAFETY: `room` has at least `bytes.len()` units, the most any input of that
  // length converts to; the borrows cannot overlap.
  let result =
    unsafe { simdutf::convert_utf8_to_utf16le_with_errors(bytes.as_ptr(), bytes.len(), room.as_mut_ptr().cast()) };
  let (valid, units) = if result.error == simdutf::ErrorCode::Success {
    (bytes.len(), result.count)
  } else {
    let valid = result.count.min(bytes.len());
    (valid, utf16_length(&bytes[..valid]))
  };
  (valid, units.min(room.len()))
}

/// The Latin-1 length of valid UTF-8 `bytes`: their count of characters (of
/// bytes that are not continuation bytes). Any count for invalid input.
pub(crate) fn latin1_length(bytes: &[u8]) -> usize {
  simdutf::latin1_length_from_utf8(bytes)
}

/// Validates and converts `bytes` to UTF-16 at the start of `dst`; returns the
/// units written, 0 if `bytes` is not valid UTF-8.
///
/// The validating converter, not a length pass then the convert-valid one: it
/// needs no separate validation. Its output is sized for the worst case: one
/// unit per byte.
pub(crate) fn utf16_into(bytes: &[u8], dst: &mut [MaybeUninit<u16>]) -> usize {
  assert!(dst.len() >= bytes.len(), "room for one unit per byte");
  // SAFETY: `dst` has room for `bytes.len()` units, the most any input of that
  // length converts to; the borrows cannot overlap. simdutf returns 0 on invalid input.
  let written = unsafe { simdutf::convert_utf8_to_utf16le(bytes.as_ptr(), bytes.len(), dst.as_mut_ptr().cast()) };
  written.min(bytes.len())
}

/// The UTF-16 length of valid UTF-8 `bytes`: their count of units. Any count
/// for invalid input.
pub(crate) fn utf16_length(bytes: &[u8]) -> usize {
  simdutf::utf16_length_from_utf8(bytes)
}

/// Validates and converts `bytes` to Latin-1 at the start of `dst`; returns the
/// bytes written, 0 if `bytes` is not valid UTF-8 or has a code point > U+00FF.
pub(crate) fn latin1_into(bytes: &[u8], dst: &mut [MaybeUninit<u8>]) -> usize {
  assert!(dst.len() >= bytes.len(), "room for one byte per byte");
  // SAFETY: `dst` has room for `bytes.len()` bytes; each output byte consumes at
  // least one input byte. simdutf returns 0 (and stops) on input it cannot convert.
  let written = unsafe { simdutf::convert_utf8_to_latin1(bytes.as_ptr(), bytes.len(), dst.as_mut_ptr().cast()) };
  written.min(bytes.len())
}
