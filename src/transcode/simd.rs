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

/// simdutf's own variable: the name of the kernel it must use.
const FORCE_ENV: &str = "SIMDUTF_FORCE_IMPLEMENTATION";

/// True when simdutf may be used: not disabled, the kernel it will run can run
/// on this CPU, and it converts known samples correctly in this process.
pub fn available() -> bool {
  static OK: OnceLock<bool> = OnceLock::new();
  *OK.get_or_init(|| {
    let forced = std::env::var(FORCE_ENV).ok();
    std::env::var_os(DISABLE_ENV).is_none() && forced_kernel_runs_here(forced.as_deref(), cpu_has) && self_test()
  })
}

/// Whether the kernel `forced` names (None: simdutf picks the best this CPU
/// runs) can run where `has` reports the CPU's features. simdutf runs a forced
/// kernel without checking the CPU, so a self-test of AVX-512 code on a CPU
/// without it dies of SIGILL; names it does not know run no code at all (the
/// self-test catches them), so only its x86 kernels are checked here.
fn forced_kernel_runs_here(forced: Option<&str>, has: impl Fn(&str) -> bool) -> bool {
  let needs: &[&str] = match forced {
    Some("icelake") => &[
      "avx2",
      "bmi1",
      "bmi2",
      "avx512bw",
      "avx512cd",
      "avx512vl",
      "avx512vbmi2",
      "avx512vpopcntdq",
    ],
    Some("haswell") => &["avx2", "bmi1", "bmi2"],
    Some("westmere") => &["sse4.2"],
    _ => &[],
  };
  needs.iter().all(|feature| has(feature))
}

/// Whether this CPU (and its OS) runs instructions of `feature`, by its
/// `is_x86_feature_detected!` name; false for names of other architectures.
fn cpu_has(feature: &str) -> bool {
  #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
  {
    match feature {
      "avx2" => std::is_x86_feature_detected!("avx2"),
      "bmi1" => std::is_x86_feature_detected!("bmi1"),
      "bmi2" => std::is_x86_feature_detected!("bmi2"),
      "avx512bw" => std::is_x86_feature_detected!("avx512bw"),
      "avx512cd" => std::is_x86_feature_detected!("avx512cd"),
      "avx512vl" => std::is_x86_feature_detected!("avx512vl"),
      "avx512vbmi2" => std::is_x86_feature_detected!("avx512vbmi2"),
      "avx512vpopcntdq" => std::is_x86_feature_detected!("avx512vpopcntdq"),
      "sse4.2" => std::is_x86_feature_detected!("sse4.2"),
      _ => false,
    }
  }
  #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
  {
    let _ = feature;
    false
  }
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

#[cfg(test)]
mod tests {
  use super::forced_kernel_runs_here;

  #[test]
  fn a_forced_x86_kernel_runs_only_where_the_cpu_has_all_its_features() {
    let none = |_: &str| false;
    let all = |_: &str| true;
    let haswell_only = |f: &str| ["avx2", "bmi1", "bmi2", "sse4.2"].contains(&f);
    assert!(
      forced_kernel_runs_here(None, none),
      "unforced: simdutf picks what the CPU runs"
    );
    for name in ["fallback", "", "no-such-implementation", "arm64"] {
      assert!(forced_kernel_runs_here(Some(name), none), "{name:?} runs no x86 code");
    }
    for name in ["icelake", "haswell", "westmere"] {
      assert!(
        !forced_kernel_runs_here(Some(name), none),
        "{name} on a CPU with nothing"
      );
      assert!(
        forced_kernel_runs_here(Some(name), all),
        "{name} on a CPU with everything"
      );
    }
    assert!(!forced_kernel_runs_here(Some("icelake"), haswell_only));
    assert!(forced_kernel_runs_here(Some("haswell"), haswell_only));
    let no_vpopcnt = |f: &str| f != "avx512vpopcntdq";
    assert!(
      !forced_kernel_runs_here(Some("icelake"), no_vpopcnt),
      "every feature counts, not only VBMI2"
    );
  }

  #[test]
  fn the_features_asked_for_are_names_the_detector_knows() {
    // An unknown name reads as missing, which would turn a sound kernel off.
    #[cfg(target_arch = "x86_64")]
    assert!(super::cpu_has("sse4.2") == std::is_x86_feature_detected!("sse4.2"));
    assert!(!super::cpu_has("no-such-feature"));
  }
}
