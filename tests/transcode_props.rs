//! Property tests of the pure-Rust pipeline steps (classify, transcode and its
//! simdutf and two-thread converters) against reference decoders: `encoding_rs::mem::convert_utf8_to_utf16`
//! (WHATWG, what Node's `buffer.toString('utf8')` implements) and std's
//! `String::from_utf8_lossy` (the same maximal-subpart replacement). No Node needed.
//!
//! Inputs are biased to the cases that break decoders: boundary code points,
//! overlongs, surrogates, truncated sequences, bytes 0xF5..0xFF, lone
//! continuation bytes, long valid runs with an error at the end, and Latin-1
//! runs broken by a single U+0100. Some inputs are ≥ 2 × PARALLEL_MIN_BYTES so
//! that the two-thread conversions of `transcode/halves.rs` run (valid text
//! from PARALLEL_MIN_BYTES, invalid from twice that), with errors placed around
//! the split point.
//!
//! Every test here runs once with simdutf (when this CPU passes its self-test)
//! and once more, in a child process of this test binary, with
//! `READFILE_UTF8_NO_SIMD=1` (the pure-Rust fallback engine).

use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence};

use readfile_utf8::testing::{
  append_utf16_up_to_error, classify, convert_latin1, convert_utf16, decode, page_aligned_middle, simd_available,
  split_conversion, Class, Decoded, ReadFacts, Text, DISABLE_ENV, PARALLEL_MIN_BYTES,
};

/// WHATWG decoding with replacement, by encoding_rs (independent of our code).
fn reference(bytes: &[u8]) -> Vec<u16> {
  let mut out = vec![0u16; bytes.len() + 1];
  let n = encoding_rs::mem::convert_utf8_to_utf16(bytes, &mut out);
  out.truncate(n);
  out
}

fn units(text: &Text) -> Vec<u16> {
  match text {
    Text::Latin1(v) => v.iter().map(|&b| u16::from(b)).collect(),
    Text::Utf16(v) => v.clone(),
  }
}

/// Where two code-unit sequences first differ, for a readable failure.
fn first_difference(a: &[u16], b: &[u16]) -> String {
  let i = a.iter().zip(b).take_while(|(x, y)| x == y).count();
  format!(
    "lengths {} vs {}, first difference at unit {i}: {:?} vs {:?}",
    a.len(),
    b.len(),
    a.get(i),
    b.get(i)
  )
}

fn utf8(c: char) -> Vec<u8> {
  c.to_string().into_bytes()
}

/// The sequences that break decoders, valid and invalid.
fn nasty() -> Vec<Vec<u8>> {
  let mut v: Vec<Vec<u8>> = [
    0x0, 0x7f, 0x80, 0xff, 0x100, 0x7ff, 0x800, 0xd7ff, 0xe000, 0xfeff, 0xfffd, 0xffff, 0x10000, 0x10ffff,
  ]
  .iter()
  .map(|&c| utf8(char::from_u32(c).unwrap()))
  .collect();
  v.extend(
    [
      &[0xc0, 0x80][..],
      &[0xc1, 0xbf],
      &[0xe0, 0x80, 0x80],
      &[0xe0, 0x9f, 0xbf],
      &[0xf0, 0x80, 0x80, 0x80],
      &[0xf0, 0x8f, 0xbf, 0xbf],
      &[0xed, 0xa0, 0x80],
      &[0xed, 0xbf, 0xbf],
      &[0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80],
      &[0xf4, 0x90, 0x80, 0x80],
      &[0xc3],
      &[0xe2],
      &[0xe2, 0x82],
      &[0xf0],
      &[0xf0, 0x9f],
      &[0xf0, 0x9f, 0x98],
      &[0x80],
      &[0xbf],
      &[0xf5],
      &[0xf8],
      &[0xfc],
      &[0xfe],
      &[0xff],
      &[0xf5, 0x80, 0x80, 0x80],
    ]
    .iter()
    .map(|s| s.to_vec()),
  );
  v
}

/// One piece of a biased input.
fn piece() -> impl Strategy<Value = Vec<u8>> {
  let nasty = nasty();
  prop_oneof![
    3 => proptest::sample::select(nasty),
    2 => proptest::collection::vec(0x20u8..0x7f, 0..40),
    2 => proptest::collection::vec(0x80u32..0x100, 0..20)
      .prop_map(|cs| cs.into_iter().flat_map(|c| utf8(char::from_u32(c).unwrap())).collect()),
    2 => proptest::collection::vec(any::<char>(), 0..12).prop_map(|cs| cs.into_iter().flat_map(utf8).collect()),
    1 => proptest::collection::vec(0xf5u8..=0xff, 1..4),
    1 => proptest::collection::vec(any::<u8>(), 0..24),
  ]
}

/// Biased byte vectors up to a few KiB: pieces, some repeated, concatenated.
fn biased_bytes() -> impl Strategy<Value = Vec<u8>> {
  proptest::collection::vec((piece(), 1usize..40), 0..24).prop_map(|pieces| {
    let mut out = Vec::new();
    for (p, repeat) in pieces {
      for _ in 0..repeat {
        out.extend_from_slice(&p);
      }
    }
    out
  })
}

/// Long valid runs (one class) with an error (or a class-changing character) at
/// the end, at the start, or in the middle.
fn long_run_with_an_edge(min_len: usize, max_len: usize) -> impl Strategy<Value = Vec<u8>> {
  let fillers: Vec<&'static str> = vec![
    "a",
    "\u{e9}",
    "\u{e9}a",
    "\u{4e2d}",
    "\u{1f600}",
    "x\u{ff}\u{4e2d}\u{1f600}",
  ];
  let mut odd = nasty();
  odd.push(utf8('\u{100}'));
  (
    proptest::sample::select(fillers),
    min_len..max_len,
    proptest::sample::select(odd),
    0usize..6,
    0usize..8,
  )
    .prop_map(|(filler, len, odd, place, shift)| {
      let mut out = filler.repeat(len / filler.len() + 1).into_bytes();
      out.truncate(len);
      let at = match place {
        0 => len,
        1 => 0,
        2 => (len / 2).saturating_sub(4) + shift, // around the middle
        // around the two-thread split point (the middle rounded down to a page)
        3 => page_aligned_middle(len).saturating_sub(4) + shift,
        4 => len.saturating_sub(shift),
        _ => len / 3 + shift,
      }
      .min(out.len());
      out.splice(at..at, odd);
      out
    })
}

/// Checks every step against the reference for one input.
fn check(bytes: &[u8]) -> Result<(), TestCaseError> {
  let expected = reference(bytes);
  let std_lossy: Vec<u16> = String::from_utf8_lossy(bytes).encode_utf16().collect();
  prop_assert!(expected == std_lossy, "the two references disagree");
  let checked = std::str::from_utf8(bytes);
  let valid = checked.ok();
  let fits_latin1 = valid.is_some_and(|s| s.chars().all(|c| (c as u32) <= 0xff));

  // classify: exactly the documented byte-range classes.
  let class = classify(bytes);
  let max = bytes.iter().copied().max().unwrap_or(0);
  let expected_class = if max < 0x80 {
    Class::Ascii
  } else if max <= 0xc3 {
    Class::Latin1Range
  } else {
    Class::Wide
  };
  prop_assert_eq!(class, expected_class);

  // decode: ASCII reported as such, everything else converted right, and
  // a one-byte string only when the text really fits one.
  match decode(bytes, ReadFacts::default()) {
    Decoded::Ascii => prop_assert!(bytes.is_ascii()),
    Decoded::Replaced(units) => {
      prop_assert!(checked.is_err(), "valid text reported as replaced");
      prop_assert!(units == expected, "decode: {}", first_difference(&units, &expected));
    }
    Decoded::Text(text) => {
      prop_assert!(!bytes.is_ascii(), "non-empty conversion of ASCII");
      prop_assert!(checked.is_ok(), "invalid text reported as valid");
      let got = units(&text);
      prop_assert!(got == expected, "decode: {}", first_difference(&got, &expected));
      match text {
        Text::Latin1(_) => prop_assert!(fits_latin1, "Latin-1 data for text that does not fit it"),
        Text::Utf16(_) => prop_assert!(!fits_latin1, "UTF-16 data for valid Latin-1-range text"),
      }
    }
  }

  // Owning the input (as a read does) gives the same code units.
  let owned = decode(bytes, ReadFacts::default()).owning(bytes.to_vec());
  let got = units(&owned);
  prop_assert!(got == expected, "decode, owned: {}", first_difference(&got, &expected));
  prop_assert_eq!(owned.char_count(), expected.len());

  // The validating simdutf converters (serial or on two threads by size).
  if simd_available() {
    // Converts exactly the valid prefix (std's valid_up_to), appending it.
    let valid_up_to = checked.map_or_else(|e| e.valid_up_to(), str::len);
    let mut utf16 = vec![0x2a];
    let converted = append_utf16_up_to_error(bytes, &mut utf16);
    prop_assert_eq!(converted, valid_up_to, "append_utf16_up_to_error stopped elsewhere");
    let prefix: Vec<u16> = std::iter::once(0x2a)
      .chain(String::from_utf8_lossy(&bytes[..valid_up_to]).encode_utf16())
      .collect();
    prop_assert!(
      utf16 == prefix,
      "append_utf16_up_to_error: {}",
      first_difference(&utf16, &prefix)
    );
    // On one thread below the size that splits a conversion, and split at any
    // size (as text read in halves is): the left half's characters counted
    // first place the right half's output, the split at a page boundary.
    for split in [split_conversion(bytes.len()), true] {
      let latin1 = convert_latin1(bytes, split);
      if fits_latin1 {
        let got: Vec<u16> = latin1.unwrap_or_default().into_iter().map(u16::from).collect();
        prop_assert!(
          got == expected,
          "convert_latin1 (split: {split}): {}",
          first_difference(&got, &expected)
        );
      } else {
        prop_assert!(
          latin1.is_none(),
          "convert_latin1 (split: {split}) accepted input that is not valid Latin-1-range UTF-8"
        );
      }
    }
    // UTF-16 on two threads, the same way (transcode's route for wide text
    // read in halves), for any valid text; invalid text is refused.
    let utf16 = convert_utf16(bytes, true);
    if checked.is_ok() {
      let got = utf16.unwrap_or_default();
      prop_assert!(got == expected, "UTF-16 halves: {}", first_difference(&got, &expected));
    } else {
      prop_assert!(utf16.is_none(), "UTF-16 halves accepted invalid UTF-8");
    }
  }
  Ok(())
}

fn config(cases: u32) -> Config {
  Config {
    cases,
    // Failures are reported with the minimal input; no files are written.
    failure_persistence: Some(Box::new(FileFailurePersistence::Off)),
    ..Config::default()
  }
}

proptest! {
  #![proptest_config(config(20_000))]
  #[test]
  fn arbitrary_bytes_decode_as_the_reference(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
    check(&bytes)?;
  }
}

proptest! {
  #![proptest_config(config(20_000))]
  #[test]
  fn biased_bytes_decode_as_the_reference(bytes in biased_bytes()) {
    check(&bytes)?;
  }
}

proptest! {
  #![proptest_config(config(3_000))]
  #[test]
  fn long_runs_with_an_error_at_an_edge_decode_as_the_reference(bytes in long_run_with_an_edge(0, 70_000)) {
    check(&bytes)?;
  }
}

proptest! {
  // ≥ 2 × PARALLEL_MIN_BYTES: the two-thread paths of halves.rs, for valid and
  // for invalid text, with the odd sequence placed
  // at the ends and around the split point; buffers are recycled by the pool
  // between cases, so stale data from an earlier case would show.
  #![proptest_config(config(32))]
  #[test]
  fn inputs_past_the_two_thread_threshold_decode_as_the_reference(
    bytes in long_run_with_an_edge(2 * PARALLEL_MIN_BYTES, 2 * PARALLEL_MIN_BYTES + 300_000)
  ) {
    prop_assert!(bytes.len() >= 2 * PARALLEL_MIN_BYTES);
    check(&bytes)?;
  }
}

#[test]
fn every_one_and_two_byte_input_decodes_as_the_reference() {
  for a in 0..=255u8 {
    check(&[a]).unwrap();
    for b in 0..=255u8 {
      check(&[a, b]).unwrap();
    }
  }
}

/// The same properties on the pure-Rust fallback engine: this test binary run
/// again with `READFILE_UTF8_NO_SIMD=1` (the engine is chosen once per process).
#[test]
fn the_fallback_engine_passes_the_same_properties() {
  if std::env::var_os(DISABLE_ENV).is_some() {
    assert!(!simd_available(), "the fallback engine is in use in the child");
    return;
  }
  let exe = std::env::current_exe().unwrap();
  let out = std::process::Command::new(exe)
    .env(DISABLE_ENV, "1")
    .args(["--test-threads", "2"])
    .output()
    .unwrap();
  let stdout = String::from_utf8_lossy(&out.stdout);
  assert!(
    out.status.success(),
    "fallback engine run failed:\n{stdout}\n{}",
    String::from_utf8_lossy(&out.stderr)
  );
  // Every property ran in the child (not filtered away).
  assert!(stdout.contains("test result: ok. 6 passed"), "{stdout}");
}
