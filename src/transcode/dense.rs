//! The decoder for text whose errors are dense (binary files read as text):
//! WHATWG's UTF-8 decoder written out by hand, one U+FFFD per maximal invalid
//! subpart. Where errors are a few bytes apart, every SIMD decoder keeps
//! restarting; this loop does not, and beats encoding_rs's decoder on such
//! input.

use std::mem::MaybeUninit;

/// What a byte is where a character starts: the unit it stands for alone
/// (itself if ASCII, else U+FFFD), and for a lead byte the length of the
/// sequence it starts and the range its second byte must be in, `low` to
/// `low + span - 1` (WHATWG's bounds: they exclude overlongs, surrogates and
/// code points above U+10FFFF). Every other byte has `span` 0: whatever
/// follows it, it stands alone.
#[derive(Clone, Copy)]
struct Start {
  alone: u16,
  len: u8,
  low: u8,
  span: u8,
}

const fn alone(unit: u16) -> Start {
  Start {
    alone: unit,
    len: 1,
    low: 0,
    span: 0,
  }
}

const fn lead(len: u8, low: u8, high: u8) -> Start {
  Start {
    alone: 0xFFFD,
    len,
    low,
    span: high - low + 1,
  }
}

const STARTS: [Start; 256] = {
  let mut starts = [alone(0xFFFD); 256];
  let mut b = 0;
  while b < 256 {
    starts[b] = match b {
      0x00..=0x7F => alone(b as u16),
      0xC2..=0xDF => lead(2, 0x80, 0xBF),
      0xE0 => lead(3, 0xA0, 0xBF),
      0xED => lead(3, 0x80, 0x9F),
      0xE1..=0xEF => lead(3, 0x80, 0xBF),
      0xF0 => lead(4, 0x90, 0xBF),
      0xF4 => lead(4, 0x80, 0x8F),
      0xF1..=0xF3 => lead(4, 0x80, 0xBF),
      _ => alone(0xFFFD),
    };
    b += 1;
  }
  starts
};

const ASCII_WORD: usize = 8;

fn is_continuation(b: u8) -> bool {
  b & 0xC0 == 0x80
}

/// Writes the UTF-16 of `bytes` into `room`, U+FFFD replacing each maximal
/// invalid subpart (one unit per byte is always enough: no character takes
/// more units than bytes); returns the units written.
///
/// Binary input mixes ASCII, stray bytes and the odd valid sequence at random,
/// so the loop does not branch on which of these a byte is: a word's leading
/// ASCII is taken at once, and a byte that stands alone (ASCII or an error) is
/// one table lookup. The one branch per byte, a lead byte followed by a
/// fitting second byte or not, goes the same way for nearly every byte.
pub(super) fn decode_into(bytes: &[u8], room: &mut [MaybeUninit<u16>]) -> usize {
  let room = &mut room[..bytes.len()];
  // Past the end reads as a byte that starts no sequence and continues none.
  let at = |i: usize| bytes.get(i).copied().unwrap_or(0);
  let (mut i, mut o) = (0, 0);
  while i < bytes.len() {
    if let (Some(word), Some(dst)) = (bytes.get(i..i + ASCII_WORD), room.get_mut(o..o + ASCII_WORD)) {
      // All 8 are written; the units after the word's first non-ASCII byte
      // are written again by what follows (`o` never passes `i`).
      for (unit, &byte) in dst.iter_mut().zip(word) {
        unit.write(u16::from(byte));
      }
      let high = u64::from_le_bytes(word.try_into().unwrap()) & 0x8080_8080_8080_8080;
      let ascii = (high.trailing_zeros() / 8) as usize;
      (i, o) = (i + ascii, o + ascii);
      if ascii == ASCII_WORD {
        continue;
      }
    }
    let (mut b, mut b1) = (bytes[i], at(i + 1));
    let mut start = STARTS[usize::from(b)];
    if b1.wrapping_sub(start.low) >= start.span {
      room[o].write(start.alone);
      (i, o) = (i + 1, o + 1);
      continue;
    }
    // Sequences of more than one byte (or their errors), while they follow
    // one another.
    loop {
      // (the unit to write last, the bytes it stands for)
      let (unit, used) = if start.len == 2 {
        ((u16::from(b & 0x1F) << 6) | u16::from(b1 & 0x3F), 2)
      } else if !is_continuation(at(i + 2)) {
        (0xFFFD, 2)
      } else if start.len == 3 {
        let b2 = at(i + 2);
        (
          (u16::from(b & 0x0F) << 12) | (u16::from(b1 & 0x3F) << 6) | u16::from(b2 & 0x3F),
          3,
        )
      } else if !is_continuation(at(i + 3)) {
        (0xFFFD, 3)
      } else {
        let (b2, b3) = (at(i + 2), at(i + 3));
        let above_bmp = ((u32::from(b & 0x07) << 18)
          | (u32::from(b1 & 0x3F) << 12)
          | (u32::from(b2 & 0x3F) << 6)
          | u32::from(b3 & 0x3F))
          - 0x10000;
        room[o].write(0xD800 | (above_bmp >> 10) as u16);
        o += 1;
        (0xDC00 | (above_bmp & 0x3FF) as u16, 4)
      };
      room[o].write(unit);
      (i, o) = (i + used, o + 1);
      (b, b1) = (at(i), at(i + 1));
      start = STARTS[usize::from(b)];
      if b1.wrapping_sub(start.low) >= start.span {
        break;
      }
    }
  }
  o
}

#[cfg(test)]
mod tests {
  use super::super::test_support::{decoded_into, reference};
  use super::*;

  fn dense(bytes: &[u8]) -> Vec<u16> {
    decoded_into(decode_into, bytes)
  }

  /// Each byte that decides a branch: leads at their range edges,
  /// continuations at the second byte's bounds, ASCII, bytes no sequence takes.
  const PICKS: [u8; 25] = [
    0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xEC, 0xED, 0xEE, 0xEF,
    0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF,
  ];

  #[test]
  fn every_short_sequence_of_boundary_bytes_matches_std() {
    let mut bytes = Vec::new();
    for a in PICKS {
      for b in PICKS {
        for c in PICKS {
          for d in PICKS {
            bytes.clear();
            bytes.extend_from_slice(&[a, b, c, d]);
            for len in 1..=4 {
              assert_eq!(dense(&bytes[..len]), reference(&bytes[..len]), "{:x?}", &bytes[..len]);
            }
          }
        }
      }
    }
  }

  #[test]
  fn boundary_bytes_at_every_offset_of_an_ascii_word_match_std() {
    // ASCII is taken a word at a time: every 3-byte sequence of the picks,
    // after 0 to 8 ASCII bytes, then ASCII or one more pick and ASCII.
    let mut bytes = Vec::new();
    for a in PICKS {
      for b in PICKS {
        for c in PICKS {
          for before in 0..=ASCII_WORD {
            for after in [None, Some(0x80), Some(0xE1)] {
              bytes.clear();
              bytes.extend(std::iter::repeat_n(b'x', before));
              bytes.extend_from_slice(&[a, b, c]);
              bytes.extend(after);
              bytes.extend_from_slice(b"abcdefghi");
              assert_eq!(dense(&bytes), reference(&bytes), "{bytes:x?}");
            }
          }
        }
      }
    }
  }

  #[test]
  fn ascii_words_and_long_mixed_input_match_std() {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
      state ^= state << 13;
      state ^= state >> 7;
      state ^= state << 17;
      state
    };
    for _ in 0..2000 {
      let len = (next() % 300) as usize;
      let bytes: Vec<u8> = (0..len)
        .map(|_| match next() % 4 {
          0 => next() as u8,
          1 => (next() % 0x80) as u8,
          _ => b"a\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80"[(next() % 10) as usize],
        })
        .collect();
      assert_eq!(dense(&bytes), reference(&bytes), "{bytes:x?}");
    }
  }
}
