//! `decodeUtf8`: a Buffer / TypedArray's bytes as a JS string, `===` to
//! `buffer.toString('utf8', start, end)`. The same classification and
//! transcoding as a file read; ASCII input goes straight from the caller's
//! memory into V8's copy constructor, other text is transcoded into a new buffer
//! that becomes an external string from a size on (see `js_string::external_from`).

use napi::Env;
use napi_derive::napi;

use crate::js_string::{self, Outcome, Reply};
use crate::transcode::{self, Borrowed};

/// The string for `input[start..end]`, or `STRING_TOO_LONG` (a number) if V8
/// refuses it. The JS layer has clamped `start <= end <= input.len()`; we clamp
/// again so that no input can index out of bounds.
#[napi(js_name = "decodeUtf8", catch_unwind, ts_return_type = "string | number")]
pub fn decode_utf8(env: Env, input: &[u8], start: f64, end: f64) -> Reply {
  let end = (end as usize).min(input.len());
  let start = (start as usize).min(end);
  match transcode::decode_borrowed(&input[start..end]) {
    Borrowed::Ascii(bytes) => js_string::latin1_from_slice(&env, bytes),
    Borrowed::Text(text) => Reply::Outcome(Outcome::Text(text)),
  }
}
