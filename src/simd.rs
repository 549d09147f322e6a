//! Safe wrappers over the `simdutf` crate (the C++ library Node, Bun and V8 use),
//! plus the self-test that decides whether this process may use it.
//!
//! simdutf picks AVX-512/AVX2/SSE4.2 at run time. `SIMDUTF_FORCE_IMPLEMENTATION`
//! set to an empty or unknown value makes every call return 0/false silently, so
//! we check it once on known input and otherwise use the pure-Rust path.
//!
//! Inputs are `&str`, so the "valid UTF-8" precondition of simdutf's fast
//! converters holds by type; outputs are sized here from simdutf's own length
//! functions, so no caller can pass a buffer that is too small.

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
  let mut utf16 = Vec::new();
  append_utf16(&mixed, &mut utf16);
  utf16 == mixed.encode_utf16().collect::<Vec<u16>>()
    && to_latin1(&latin1) == latin1.chars().map(|c| c as u8).collect::<Vec<u8>>()
}

/// Appends the UTF-16 of `src` to `dst`.
pub fn append_utf16(src: &str, dst: &mut Vec<u16>) {
  let units = simdutf::utf16_length_from_utf8(src.as_bytes());
  let start = dst.len();
  dst.resize(start + units, 0);
  let out = &mut dst[start..];
  // SAFETY: `src` is valid UTF-8 (a &str) whose UTF-16 length is `units`, and `out`
  // is exactly `units` long; the two borrows cannot overlap.
  let written = unsafe { simdutf::convert_valid_utf8_to_utf16le(src.as_ptr(), src.len(), out.as_mut_ptr()) };
  // A broken implementation writes 0 (caught by the self-test); keep only what was written.
  dst.truncate(start + written);
}

/// Latin-1 bytes of `src`, whose code points must all be ≤ U+00FF.
pub fn to_latin1(src: &str) -> Vec<u8> {
  let chars = simdutf::latin1_length_from_utf8(src.as_bytes());
  let mut out = vec![0u8; chars];
  // SAFETY: `out` holds the Latin-1 length of `src` (valid UTF-8, a &str); simdutf's
  // validating converter writes at most that and returns 0 if a code point > U+00FF.
  let written = unsafe { simdutf::convert_utf8_to_latin1(src.as_ptr(), src.len(), out.as_mut_ptr()) };
  out.truncate(written);
  out
}
