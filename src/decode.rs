//! `decodeUtf8`: a Buffer / TypedArray's bytes as a JS string, `===` to
//! `buffer.toString('utf8', start, end)`. The same classification and
//! transcoding as a file read; ASCII input goes straight from the caller's
//! memory into V8's copy constructor, other text is transcoded into a new buffer
//! that becomes an external string from a size on (see `js_string::external_from`).
//! Its Node-API entry point is a plain callback in `raw_call`, for the lower
//! fixed cost per call that short inputs feel.

use napi::Env;

use crate::js_string::{self, Outcome, Reply};
use crate::transcode::{self, Borrowed};

/// The string for `input[start..end]`, or `STRING_TOO_LONG` (a number) if V8
/// refuses it. The JS layer has clamped `0 <= start <= end <= input.len()`; we
/// clamp again so that no input can index out of bounds.
pub fn decode_utf8(env: &Env, input: &[u8], start: i64, end: i64) -> Reply {
  let end = (end.max(0) as usize).min(input.len());
  let start = (start.max(0) as usize).min(end);
  match transcode::decode_borrowed(&input[start..end]) {
    Borrowed::Ascii(bytes) => js_string::latin1_from_slice(env, bytes),
    Borrowed::Text(text) => Reply::Outcome(Outcome::Text(text)),
  }
}
