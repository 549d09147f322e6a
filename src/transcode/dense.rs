//! The decoder for text whose errors are dense (binary files read as text):
//! WHATWG's UTF-8 decoder written out a character at a time, one U+FFFD per
//! maximal invalid subpart, with ASCII taken a word at a time. Where errors
//! are a few bytes apart, every SIMD decoder keeps restarting; this loop
//! does not, and beats encoding_rs's decoder on such input.

use std::mem::MaybeUninit;

/// What a lead byte starts: the sequence's length (0: no character starts
/// with it) and the range its second byte must be in (WHATWG's lower and
/// upper boundaries: they exclude overlongs, surrogates and code points
/// above U+10FFFF).
#[derive(Clone, Copy)]
struct Lead {
  len: u8,
  low: u8,
  high: u8,
}

const fn lead(len: u8, low: u8, high: u8) -> Lead {
  Lead { len, low, high }
}

const LEADS: [Lead; 256] = {
  let mut leads = [lead(0, 0, 0); 256];
  let mut b = 0xC2;
  while b <= 0xF4 {
    leads[b] = match b {
      0xC2..=0xDF => lead(2, 0x80, 0xBF),
      0xE0 => lead(3, 0xA0, 0xBF),
      0xED => lead(3, 0x80, 0x9F),
      0xE1..=0xEF => lead(3, 0x80, 0xBF),
      0xF0 => lead(4, 0x90, 0xBF),
      0xF4 => lead(4, 0x80, 0x8F),
      _ => lead(4, 0x80, 0xBF),
    };
    b += 1;
  }
  leads
};

const ASCII_WORD: usize = 8;

fn is_continuation(b: u8) -> bool {
  b & 0xC0 == 0x80
}

/// Appends the UTF-16 of `bytes` to `out`, U+FFFD replacing each maximal
/// invalid subpart.
pub(super) fn append_dense(bytes: &[u8], out: &mut Vec<u16>) {
  out.reserve(bytes.len());
  let start = out.len();
  let written = decode_into(bytes, out.spare_capacity_mut());
  // SAFETY: `decode_into` initialised the first `written` units of the spare capacity.
  unsafe { out.set_len(start + written) };
}

/// Writes the UTF-16 of `bytes` into `room` (one unit per byte is always
/// enough: no character takes more units than bytes); returns the units written.
fn decode_into(bytes: &[u8], room: &mut [MaybeUninit<u16>]) -> usize {
  let room = &mut room[..bytes.len()];
  // Past the end reads as a byte no sequence accepts.
  let at = |i: usize| bytes.get(i).copied().unwrap_or(0);
  let (mut i, mut o) = (0, 0);
  while let Some(&b) = bytes.get(i) {
    if b < 0x80 {
      room[o].write(u16::from(b));
      (i, o) = (i + 1, o + 1);
      while let (Some(word), Some(dst)) = (bytes.get(i..i + ASCII_WORD), room.get_mut(o..o + ASCII_WORD)) {
        if u64::from_ne_bytes(word.try_into().unwrap()) & 0x8080_8080_8080_8080 != 0 {
          break;
        }
        for (unit, &byte) in dst.iter_mut().zip(word) {
          unit.write(u16::from(byte));
        }
        (i, o) = (i + ASCII_WORD, o + ASCII_WORD);
      }
      continue;
    }
    let lead = LEADS[usize::from(b)];
    let b1 = at(i + 1);
    // (the unit to write last, the bytes it stands for)
    let (unit, used) = if lead.len == 0 || b1 < lead.low || b1 > lead.high {
      (0xFFFD, 1)
    } else if lead.len == 2 {
      ((u16::from(b & 0x1F) << 6) | u16::from(b1 & 0x3F), 2)
    } else if !is_continuation(at(i + 2)) {
      (0xFFFD, 2)
    } else if lead.len == 3 {
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
  }
  o
}

#[cfg(test)]
mod tests {
  use super::*;

  fn reference(bytes: &[u8]) -> Vec<u16> {
    String::from_utf8_lossy(bytes).encode_utf16().collect()
  }

  fn dense(bytes: &[u8]) -> Vec<u16> {
    let mut out = vec![0x41];
    append_dense(bytes, &mut out);
    assert_eq!(out[0], 0x41, "appends after what is there");
    out.remove(0);
    out
  }

  #[test]
  fn every_short_sequence_of_boundary_bytes_matches_std() {
    // Each byte that decides a branch, in every sequence of up to 4 of them:
    // leads at their range edges, continuations at the second byte's bounds.
    let picks = [
      0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xEC, 0xED, 0xEE, 0xEF,
      0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF,
    ];
    let mut bytes = Vec::new();
    for a in picks {
      for b in picks {
        for c in picks {
          for d in picks {
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
