//! Converts and decodes large inputs on two threads (`two_threads::both`).
//!
//! The call is synchronous, but the machine has more than one core: a large
//! input is split at a character start just after the point where its read was
//! split, so each thread works on the half in its own core's cache, into its
//! own region of one output buffer. The left half's output is counted first
//! (its characters for Latin-1, its units for UTF-16), so both halves write
//! straight to their place:
//! - `convert`: a validating conversion (Latin-1). Two valid halves make a
//!   valid whole (the split is at a byte that starts a character); if either
//!   half is refused, so is the whole.
//! - `decode_halves`: UTF-16 with replacement, valid or not; the right half
//!   goes on from its first error, a left half that was not valid is decoded
//!   again and the halves joined.
//! - `decode_halves_uncounted`: UTF-16 with replacement for text that starts
//!   with an error (no count would place the right half): the right half is
//!   decoded where the left half's units end at the most (one per byte), and
//!   moved down after them if the left half wrote fewer.

use std::mem::MaybeUninit;

use super::{simd, starts_invalid};
use crate::buffers::{self as pool, Reusable};
use crate::limits::tuned;
#[cfg(test)]
use crate::limits::PARALLEL_MIN_BYTES;

/// Below this many bytes, the end of an exactly-sized conversion goes through
/// a buffer on the stack (the converters want room for one unit per byte).
const EXACT_TAIL_BYTES: usize = 128;
use crate::outcome::ReadFacts;
use crate::two_threads::{both, page_aligned_middle};

/// Whether text of `len` bytes is converted on two threads: from
/// `PARALLEL_MIN_BYTES` on, and from `SPLIT_READ_MIN_BYTES` on if it was read
/// in two halves (converting it on one thread would read the other core's
/// half, slowly); never where it was read alone.
pub(super) fn split_conversion(len: usize, facts: ReadFacts) -> bool {
  !facts.alone && (len >= tuned!(PARALLEL_MIN_BYTES) || (facts.in_halves && len >= tuned!(SPLIT_READ_MIN_BYTES)))
}

/// Whether `len` bytes that did not convert as valid text are decoded with
/// replacement on two threads: as valid text is (`PARALLEL_MIN_BYTES`),
/// never where they were read alone.
pub(super) fn split_lossy(len: usize, facts: ReadFacts) -> bool {
  !facts.alone && len >= tuned!(PARALLEL_MIN_BYTES)
}

/// A validating converter: writes the conversion of its input at the start of
/// the output (which has room for one unit per input byte) and returns the
/// count written, or 0 if the input cannot be converted.
pub(super) type Converter<T> = fn(&[u8], &mut [MaybeUninit<T>]) -> usize;

/// What a decoder with replacement did: the units it wrote, and whether it
/// replaced any invalid sequence (so that the text was not valid UTF-8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Lossy {
  pub(super) units: usize,
  pub(super) replaced: bool,
}

/// A decoder with replacement: writes the UTF-16 of any input at the start of
/// the output (which has room for one unit per input byte, the most any input
/// decodes to).
pub(super) type LossyDecoder = fn(&[u8], &mut [MaybeUninit<u16>]) -> Lossy;

/// The same decoder appending to a `Vec` (which it reserves room in); returns
/// whether it replaced anything.
pub(super) type LossyAppend = fn(&[u8], &mut Vec<u16>) -> bool;

/// A validating conversion of UTF-8 to code units of type `T`.
pub(super) struct Conversion<T> {
  pub(super) convert: Converter<T>,
  /// The count of units valid input converts to (any count for invalid input).
  pub(super) count: fn(&[u8]) -> usize,
  /// Valid input that converts at all has at least one unit per this many bytes.
  pub(super) most_bytes_per_unit: usize,
  /// Whether the input's first bytes show it will be refused, before a count
  /// (a pass over all of a half) is spent on it.
  pub(super) refuses_start: fn(&[u8]) -> bool,
}

/// Valid UTF-8 with every code point ≤ U+00FF to Latin-1: one byte per
/// character, of one or two bytes.
pub(super) const LATIN1: Conversion<u8> = Conversion {
  convert: simd::latin1_into,
  count: simd::latin1_length,
  most_bytes_per_unit: 2,
  // The cheap scan first: wide text, refused by it, is validated once, by
  // `decode_halves` (`UTF16.refuses_start`), not here as well.
  refuses_start: |bytes| !looks_latin1(bytes) || starts_invalid(bytes),
};

/// Valid UTF-8 to UTF-16: one unit per character of one to three bytes, two
/// for one of four.
pub(super) const UTF16: Conversion<u16> = Conversion {
  convert: simd::utf16_into,
  count: simd::utf16_length,
  most_bytes_per_unit: 3,
  refuses_start: starts_invalid,
};

/// `bytes` converted by `conversion` into a pooled buffer, on two threads if
/// `split`; `None` if `bytes` cannot be converted.
pub(super) fn convert<T: Reusable + Copy + Send>(
  bytes: &[u8],
  conversion: &Conversion<T>,
  split: bool,
) -> Option<Vec<T>> {
  // Exactly n units: n + 1 (the read buffer's size) slowed concurrent async reads.
  let mut out: Vec<T> = pool::take(bytes.len());
  let room = &mut out.spare_capacity_mut()[..bytes.len()];
  let written = if split {
    convert_halves(bytes, room, conversion)
  } else {
    convert_whole(bytes, room, conversion.convert)
  };
  let Some(written) = written else {
    pool::give(out);
    return None;
  };
  // SAFETY: the first `written` units of the spare capacity were initialised
  // (by `convert_whole` or `convert_halves`, which say so of their result).
  unsafe { out.set_len(written) };
  Some(out)
}

/// Converts `bytes` at the start of `room` (one unit per input byte); returns
/// the units written, `None` if `bytes` cannot be converted.
fn convert_whole<T>(bytes: &[u8], room: &mut [MaybeUninit<T>], convert: Converter<T>) -> Option<usize> {
  let written = convert(bytes, room);
  (written > 0 || bytes.is_empty()).then_some(written)
}

/// `convert_whole` with the two halves of `bytes` converted at the same time,
/// each straight to its place: the left half's units are counted first, which
/// says where the right half's start. Returns the units initialised at the
/// start of `room`. Counting first spares moving the right half down after
/// the left is done, a pass that cost most of what the split saved.
fn convert_halves<T: Copy + Send>(
  bytes: &[u8],
  room: &mut [MaybeUninit<T>],
  conversion: &Conversion<T>,
) -> Option<usize> {
  // No character start in the second half: not valid UTF-8.
  let split = character_start_after_middle(bytes)?;
  let (left, right) = bytes.split_at(split);
  // Checked before the helper thread is woken: refused text needs no second thread.
  if (conversion.refuses_start)(left) {
    return None;
  }
  let (left_room, right_room) = room.split_at_mut(room_for_left(left, conversion.count));
  let halves = both(
    || convert_into_exact(left, left_room, conversion),
    // The room after the left half's units is at least `right.len()`.
    || convert_whole(right, &mut right_room[..right.len()], conversion.convert),
  );
  match halves {
    Some((Some(left_written), Some(right_written))) => Some(left_written + right_written),
    Some(_) => None,
    None => convert_whole(bytes, room, conversion.convert), // no thread could be started
  }
}

/// The units `left` converts to if valid (`count`): where the right half's
/// units start. Counted on the calling thread before the helper gets the right
/// half: a helper waiting for the count would sleep and need waking. Valid
/// text has at most one unit per byte; `min` keeps any count in range, so the
/// right half's room is at least as long as the right half.
fn room_for_left(left: &[u8], count: fn(&[u8]) -> usize) -> usize {
  count(left).min(left.len())
}

/// Whether the first chunk (`READ_CHUNK_BYTES`) of `bytes` has no byte above 0xC3,
/// as all of valid Latin-1-range UTF-8 has (ASCII, leads 0xC2–0xC3,
/// continuation bytes): wide text is refused here, before the Latin-1 count
/// of its left half.
fn looks_latin1(bytes: &[u8]) -> bool {
  let head = &bytes[..bytes.len().min(tuned!(READ_CHUNK_BYTES))];
  head.iter().copied().max().is_none_or(|max| max <= 0xC3)
}

/// Converts `bytes` into `dst`, which has room for exactly the units `bytes`
/// convert to, and must be filled: returns `dst.len()`, or `None` if `bytes`
/// cannot be converted or do not fill `dst`. The validating converter wants
/// room for one unit per input byte (it may write that much before it finds
/// an error), so the input goes in pieces as long as the room left: each
/// piece fills at least 1/`most_bytes_per_unit` of that room, so the pieces
/// shrink fast, and the last bytes go through a buffer on the stack.
fn convert_into_exact<T: Copy>(bytes: &[u8], dst: &mut [MaybeUninit<T>], conversion: &Conversion<T>) -> Option<usize> {
  let (mut rest, mut done) = (bytes, 0);
  while !rest.is_empty() {
    let room = &mut dst[done..];
    if rest.len() <= room.len() {
      done += convert_whole(rest, &mut room[..rest.len()], conversion.convert)?;
      break;
    }
    if room.len() * conversion.most_bytes_per_unit < rest.len() {
      return None; // fewer units than valid text of this length converts to
    }
    if rest.len() <= EXACT_TAIL_BYTES {
      let mut tail = [MaybeUninit::<T>::uninit(); EXACT_TAIL_BYTES];
      let written = convert_whole(rest, &mut tail[..rest.len()], conversion.convert)?;
      room.get_mut(..written)?.copy_from_slice(&tail[..written]);
      done += written;
      break;
    }
    // The longest piece that fits, cut at a character start (at most 3 back).
    let piece = (room.len().saturating_sub(3)..=room.len())
      .rev()
      .find(|&i| rest[i] & 0xC0 != 0x80)?;
    done += convert_whole(&rest[..piece], &mut room[..piece], conversion.convert).filter(|&n| n > 0)?;
    rest = &rest[piece..];
  }
  (done == dst.len()).then_some(done)
}

/// Decodes `bytes` (any bytes, valid or not) to UTF-16 with replacement as two
/// halves on two threads, each where its read left it, straight to its place
/// in one buffer: the left half's units are counted first (as if it were
/// valid), which says where the right half's start. The right half is
/// decoded in place with `decode_into`; the left half is converted into exactly
/// its counted room, and if it is not valid it is decoded again with `append`
/// into a buffer of its own and the halves are joined after. So text with an
/// error in its right half is decoded once, not converted and then decoded
/// again. Text with an error in its first bytes, likely invalid throughout,
/// goes to `decode_halves_uncounted` instead (no count would place its right
/// half). `None` if the second half has no character start or no thread could be
/// started; else the units and whether anything was replaced.
pub(super) fn decode_halves(bytes: &[u8], decode_into: LossyDecoder, append: LossyAppend) -> Option<(Vec<u16>, bool)> {
  if (UTF16.refuses_start)(bytes) {
    return decode_halves_uncounted(bytes, decode_into);
  }
  let split = character_start_after_middle(bytes)?;
  let (left, right) = bytes.split_at(split);
  let mut out: Vec<u16> = pool::take(bytes.len());
  let room = &mut out.spare_capacity_mut()[..bytes.len()];
  let (left_room, right_room) = room.split_at_mut(room_for_left(left, UTF16.count));
  let counted = left_room.len();
  let halves = both(
    || match convert_into_exact(left, left_room, &UTF16) {
      Some(_) => None,
      None => {
        let mut own = pool::take(left.len());
        let replaced = append(left, &mut own);
        Some((own, replaced))
      }
    },
    || decode_into(right, right_room),
  );
  let Some((left_own, right)) = halves else {
    pool::give(out);
    return None;
  };
  let right_units = right.units;
  let room = out.spare_capacity_mut();
  let (left_units, left_replaced) = match left_own {
    None => (counted, false),
    // The left half's units are not the ones counted: the right half's move
    // to follow them (a decode writes at most one unit per byte: they fit).
    Some((own, replaced)) => {
      room.copy_within(counted..counted + right_units, own.len());
      room[..own.len()].write_copy_of_slice(&own);
      let len = own.len();
      pool::give(own);
      (len, replaced)
    }
  };
  // SAFETY: the first `left_units` units of the spare capacity hold the left
  // half's units (converted in place, or copied from its own buffer) and the
  // `right_units` after them the right half's (decoded there, or moved there).
  unsafe { out.set_len(left_units + right_units) };
  Some((out, left_replaced || right.replaced))
}

/// Decodes `bytes` (any bytes, valid or not) as two halves on two threads with
/// `decode_into`, both into one buffer: the right half's room
/// starts where the left half's units would end if it wrote one per byte, and
/// if it wrote fewer the right half's units are moved down to follow them.
/// The split is at a byte that is not a UTF-8 continuation byte: there a
/// WHATWG decoder starts afresh whatever came before (an unfinished sequence
/// before it is one U+FFFD either way, at the left half's end or on meeting the
/// byte), so the halves' units joined are the whole's. `None` if the second
/// half has no such byte or no thread could be started; else the units and
/// whether anything was replaced.
pub(super) fn decode_halves_uncounted(bytes: &[u8], decode_into: LossyDecoder) -> Option<(Vec<u16>, bool)> {
  let split = character_start_after_middle(bytes)?;
  let (left, right) = bytes.split_at(split);
  let mut out: Vec<u16> = pool::take(bytes.len());
  let (left_room, right_room) = out.spare_capacity_mut()[..bytes.len()].split_at_mut(split);
  let Some((left, right)) = both(|| decode_into(left, left_room), || decode_into(right, right_room)) else {
    pool::give(out);
    return None;
  };
  let (left_units, right_units) = (left.units, right.units);
  let room = out.spare_capacity_mut();
  if left_units < split {
    room.copy_within(split..split + right_units, left_units);
  }
  // SAFETY: the first `left_units` units of the spare capacity hold the left
  // half's units and the `right_units` after them the right half's (decoded
  // there, or moved there).
  unsafe { out.set_len(left_units + right_units) };
  Some((out, left.replaced || right.replaced))
}

/// The first index at or after the (page-aligned) middle whose byte is not a UTF-8
/// continuation byte (at most 3 steps on in valid UTF-8); `None` if the second
/// half has none.
pub(super) fn character_start_after_middle(bytes: &[u8]) -> Option<usize> {
  let middle = page_aligned_middle(bytes.len());
  Some(middle + bytes[middle..].iter().position(|&b| b & 0xC0 != 0x80)?)
}

#[cfg(test)]
mod tests {
  use super::super::test_support::reference;
  use super::*;

  #[test]
  fn latin1_halves_write_each_half_in_place_or_reject_the_text() {
    if !simd::available() {
      return;
    }
    let expected = |text: &str| -> Vec<u8> { text.chars().map(|c| c as u8).collect() };
    let half = PARALLEL_MIN_BYTES / 2;
    // Characters per byte differ between the halves, both ways round: where
    // the right half's output starts depends on the left half's count.
    let dense = "éàüßçñ ";
    let sparse = "déjà vu, plain ascii text ";
    for (left_unit, right_unit) in [(dense, sparse), (sparse, dense), (dense, dense)] {
      let mut text = left_unit.repeat(half / left_unit.len() + 1);
      text.push_str(&right_unit.repeat(half / right_unit.len() + 1));
      assert!(
        convert(text.as_bytes(), &LATIN1, true) == Some(expected(&text)),
        "{left_unit:?} then {right_unit:?}"
      );
      // An error in either half, or straddling the split, rejects the whole;
      // so does a character above U+00FF, or one cut at the end.
      let split = character_start_after_middle(text.as_bytes()).unwrap();
      for at in [0, split - 1, split, text.len() - 1] {
        for odd in [&b"\xff"[..], "Ā".as_bytes()] {
          let mut bad = text.clone().into_bytes();
          let at = at.min(bad.len() - odd.len());
          bad[at..at + odd.len()].copy_from_slice(odd);
          assert!(convert(&bad, &LATIN1, true).is_none(), "{odd:x?} at {at}");
        }
      }
      let cut = text.rfind(|c: char| !c.is_ascii()).unwrap() + 1;
      assert!(convert(&text.as_bytes()[..cut], &LATIN1, true).is_none());
    }
    // A left half of continuation bytes counts no characters.
    let mut stray = vec![0x80u8; half];
    stray.extend_from_slice(&sparse.as_bytes().repeat(half / sparse.len()));
    assert!(convert(&stray, &LATIN1, true).is_none());
  }

  /// `convert_into_exact` fills exactly the room of `expected`'s units, and
  /// refuses room one unit larger or smaller.
  fn check_exact<T: Copy + PartialEq + std::fmt::Debug>(text: &str, conversion: &Conversion<T>, expected: Vec<T>) {
    let units = expected.len();
    let mut room = vec![MaybeUninit::<T>::uninit(); units + 1];
    assert_eq!(
      convert_into_exact(text.as_bytes(), &mut room[..units], conversion),
      Some(units)
    );
    // SAFETY: `convert_into_exact` initialised all `units` units.
    let got: Vec<T> = room[..units].iter().map(|u| unsafe { u.assume_init() }).collect();
    assert!(got == expected, "{:?}...", &text[..8]);
    assert_eq!(
      convert_into_exact(text.as_bytes(), &mut room[..units + 1], conversion),
      None
    );
    assert_eq!(
      convert_into_exact(text.as_bytes(), &mut room[..units - 1], conversion),
      None
    );
  }

  #[test]
  fn exact_room_is_filled_or_the_text_rejected() {
    if !simd::available() {
      return;
    }
    // The most bytes per unit (the most pieces), mixed, short (the stack tail).
    for text in ["é".repeat(70_000), "aé".repeat(50_001), "é ü".repeat(10)] {
      check_exact(&text, &LATIN1, text.chars().map(|c| c as u8).collect());
    }
    for text in ["中".repeat(70_000), "😀é".repeat(30_001), "a中😀".repeat(9)] {
      check_exact(&text, &UTF16, text.encode_utf16().collect());
    }
  }

  #[test]
  fn utf16_halves_write_each_half_in_place_or_reject_invalid_text() {
    if !simd::available() {
      return;
    }
    // Units per byte differ between the halves, both ways round: where the
    // right half's units start depends on the left half's count.
    let dense = "déjà vu, 中文 ";
    let sparse = "😀 ascii and more ascii ";
    let half = PARALLEL_MIN_BYTES / 2;
    for (left_unit, right_unit) in [(dense, sparse), (sparse, dense)] {
      let mut text = left_unit.repeat(half / left_unit.len() + 1);
      text.push_str(&right_unit.repeat(half / right_unit.len() + 1));
      let expected: Vec<u16> = text.encode_utf16().collect();
      assert!(convert(text.as_bytes(), &UTF16, true) == Some(expected));
      let split = character_start_after_middle(text.as_bytes()).unwrap();
      for at in [0, split - 1, split, text.len() - 1] {
        let mut bad = text.clone().into_bytes();
        bad[at] = 0xFF;
        assert!(convert(&bad, &UTF16, true).is_none(), "error at {at}");
      }
      // A character cut at the end of the input.
      let cut = text.rfind('\u{1f600}').unwrap() + 2;
      assert!(convert(&text.as_bytes()[..cut], &UTF16, true).is_none());
    }
  }

  /// `reference` into `room`; fills the room after its units with a mark, which
  /// must not be taken for units.
  fn std_decode_into(bytes: &[u8], room: &mut [MaybeUninit<u16>]) -> Lossy {
    let units = reference(bytes);
    room[..units.len()].write_copy_of_slice(&units);
    room[units.len()..bytes.len()].fill(MaybeUninit::new(0xDEAD));
    Lossy {
      units: units.len(),
      replaced: std::str::from_utf8(bytes).is_err(),
    }
  }

  #[test]
  fn lossy_halves_join_to_the_whole_decode() {
    let half = PARALLEL_MIN_BYTES / 2;
    let unit = "d\u{e9}j\u{e0} \u{4e2d}\u{1f600} ".as_bytes();
    let text: Vec<u8> = unit.iter().copied().cycle().take(PARALLEL_MIN_BYTES + 3).collect();
    // Faults placed around the middle, where the split lands: an unfinished
    // sequence cut by the split, stray continuation bytes, a bad lead, a run of
    // continuation bytes over the middle.
    let faults: [(usize, &[u8]); 5] = [
      (half - 2, b"\xe2\x82"),
      (half - 1, b"\xf0\x9f\x98"),
      (half, b"\x80\x80\xbf"),
      (half - 3, b"\xff\xc3"),
      (half - 40, &[0x80; 80]),
    ];
    for (at, fault) in faults {
      let mut bytes = text.clone();
      bytes[at..at + fault.len()].copy_from_slice(fault);
      let invalid = std::str::from_utf8(&bytes).is_err();
      let decoded = decode_halves_uncounted(&bytes, std_decode_into);
      assert!(
        decoded == Some((reference(&bytes), invalid)),
        "fault {fault:x?} at {at}"
      );
    }
    let valid = unit.repeat(PARALLEL_MIN_BYTES / unit.len() + 1);
    let decoded = decode_halves_uncounted(&valid, std_decode_into);
    assert!(
      decoded == Some((reference(&valid), false)),
      "valid text: nothing replaced"
    );
    // No byte in the second half starts a character: no split.
    let mut tail = text.clone();
    tail[half..].fill(0x80);
    assert_eq!(decode_halves_uncounted(&tail, std_decode_into), None);
  }
}
