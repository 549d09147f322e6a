//! Runs a validating converter over large inputs on two threads.
//!
//! The call is synchronous, but the machine has more than one core: a large
//! input is split at a character start, each half is converted into its own
//! region of one output buffer concurrently, then the right half's output is
//! moved down next to the left's. Two valid halves make a valid whole (the
//! split is at a byte that starts a character), and if either half is invalid,
//! so is the whole, which the caller then decodes with replacement.

use std::mem::MaybeUninit;
use std::thread;

use crate::pool::{self, Pooled};

/// Inputs from this size on are split. Measured under Node 26 on 2 cores, where
/// V8's own GC threads want the second core too: at 4 MiB splitting made CJK
/// slower (2.0 ms vs 1.5 ms per read), at 64 MiB faster (cjk 58 vs 82 ms, mixed
/// 51 vs 59 ms); at 1 MiB it made no difference.
pub const PARALLEL_MIN_BYTES: usize = 8 << 20;

/// A validating converter: writes the conversion of its input at the start of
/// the output (which has room for one element per input byte) and returns the
/// count written, or 0 if the input cannot be converted.
pub type Converter<T> = fn(&[u8], &mut [MaybeUninit<T>]) -> usize;

/// Converts `bytes` with `convert` into a pooled buffer; `None` if `convert`
/// rejects them.
pub fn convert<T: Pooled + Copy + Send>(bytes: &[u8], convert: Converter<T>) -> Option<Vec<T>> {
  let mut out: Vec<T> = pool::take(bytes.len());
  let room = &mut out.spare_capacity_mut()[..bytes.len()];
  let written = if bytes.len() >= PARALLEL_MIN_BYTES {
    convert_halves(bytes, room, convert)
  } else {
    convert(bytes, room)
  };
  if written == 0 && !bytes.is_empty() {
    pool::give(out);
    return None;
  }
  // SAFETY: the first `written` elements of the spare capacity were initialised
  // (by `convert`, or by `convert_halves`, which says so of its result).
  unsafe { out.set_len(written) };
  Some(out)
}

/// Converts the two halves of `bytes` concurrently into `room`; returns the
/// count of elements initialised at the start of `room`, or 0 if a half was
/// rejected. Runs sequentially if no thread can be started.
fn convert_halves<T: Copy + Send>(bytes: &[u8], room: &mut [MaybeUninit<T>], convert: Converter<T>) -> usize {
  // No character start in the second half: not valid UTF-8.
  let Some(split) = character_start_after_middle(bytes) else {
    return 0;
  };
  let (left, right) = bytes.split_at(split);
  let (left_room, right_room) = room.split_at_mut(split);
  let halves = both(|| convert(left, left_room), || convert(right, right_room));
  let Some((left_written, right_written)) = halves else {
    return convert(bytes, room); // no thread could be started
  };
  if (left_written == 0 && !left.is_empty()) || (right_written == 0 && !right.is_empty()) {
    return 0;
  }
  // Close the gap: the right half's output moves down to follow the left's.
  room.copy_within(split..split + right_written, left_written);
  left_written + right_written
}

/// Decodes `bytes` (any bytes, valid or not) as two halves on two threads with
/// `append`, which appends the code units of its input to a `Vec`, and joins the
/// halves. The split is at a byte that is not a UTF-8 continuation byte: there a
/// WHATWG decoder starts afresh whatever came before (an unfinished sequence
/// before it is one U+FFFD either way, at the left half's end or on meeting the
/// byte), so the halves' units joined are the whole's. `None` if the second half
/// has no such byte or no thread could be started.
pub fn append_halves(bytes: &[u8], append: fn(&[u8], &mut Vec<u16>)) -> Option<Vec<u16>> {
  let split = character_start_after_middle(bytes)?;
  let (left, right) = bytes.split_at(split);
  // One unit of room more than each input's length (encoding_rs wants it).
  let mut out: Vec<u16> = pool::take(bytes.len() + 1);
  let halves = both(
    || append(left, &mut out),
    || {
      let mut right_out: Vec<u16> = pool::take(right.len() + 1);
      append(right, &mut right_out);
      right_out
    },
  );
  let Some(((), right_out)) = halves else {
    pool::give(out);
    return None;
  };
  out.extend_from_slice(&right_out);
  pool::give(right_out);
  Some(out)
}

/// Runs `left` on this thread and `right` on a new one, at the same time, and
/// returns both results; `None`, with neither run, if no thread could be
/// started. A panic on the new thread is re-raised here (and caught at the napi
/// boundary).
pub fn both<A, B: Send>(left: impl FnOnce() -> A, right: impl FnOnce() -> B + Send) -> Option<(A, B)> {
  thread::scope(|scope| {
    let helper = thread::Builder::new().spawn_scoped(scope, right).ok()?;
    let left = left();
    let right = helper.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
    Some((left, right))
  })
}

/// The first index at or after the middle whose byte is not a UTF-8
/// continuation byte (at most 3 steps on in valid UTF-8); `None` if the second
/// half has none.
fn character_start_after_middle(bytes: &[u8]) -> Option<usize> {
  let middle = bytes.len() / 2;
  Some(middle + bytes[middle..].iter().position(|&b| b & 0xC0 != 0x80)?)
}

#[cfg(test)]
mod tests {
  use super::*;
  use crate::simd;

  #[test]
  fn halves_join_to_the_whole_conversion() {
    if !simd::available() {
      return;
    }
    let unit = "déjà vu, 中文, 😀 and ascii ";
    let text = unit.repeat(PARALLEL_MIN_BYTES / unit.len() + 1000);
    assert!(text.len() >= PARALLEL_MIN_BYTES);
    let expected: Vec<u16> = text.encode_utf16().collect();
    assert_eq!(convert(text.as_bytes(), simd::utf16_into), Some(expected));
    let latin1 = "déjà vu à Noël ".repeat(PARALLEL_MIN_BYTES / 15 + 1000);
    let expected: Vec<u8> = latin1.chars().map(|c| c as u8).collect();
    assert_eq!(convert(latin1.as_bytes(), simd::latin1_into), Some(expected));
    // An error in either half, or straddling the split, rejects the whole.
    for at in [10, latin1.len() / 2 - 1, latin1.len() / 2, latin1.len() - 1] {
      let mut bad = latin1.clone().into_bytes();
      bad[at] = 0xFF;
      assert_eq!(convert(&bad, simd::latin1_into), None, "error at {at}");
    }
  }

  /// The lossy decode of `bytes` by std: WHATWG's, as Node's.
  fn lossy(bytes: &[u8]) -> Vec<u16> {
    String::from_utf8_lossy(bytes).encode_utf16().collect()
  }

  fn std_append(bytes: &[u8], out: &mut Vec<u16>) {
    out.extend(lossy(bytes));
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
      assert_eq!(
        append_halves(&bytes, std_append),
        Some(lossy(&bytes)),
        "fault {fault:x?} at {at}"
      );
    }
    // No byte in the second half starts a character: no split.
    let mut tail = text.clone();
    tail[half..].fill(0x80);
    assert_eq!(append_halves(&tail, std_append), None);
  }
}
