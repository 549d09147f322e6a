//! `decodeUtf8`: a Buffer / TypedArray's bytes as a JS string, `===` to
//! `buffer.toString('utf8', start, end)`. The same classification and
//! transcoding as a file read; ASCII input goes straight from the caller's
//! memory into V8's copy constructor, other text is transcoded into a new buffer
//! that becomes an external string from 64 KiB on (see `js_string`).

use napi::Env;
use napi_derive::napi;

use crate::js_string::{self, Outcome, Reply, STRING_TOO_LONG};
use crate::transcode::{self, Borrowed, Text};

/// The string for `input[start..end]`, or `STRING_TOO_LONG` (a number) if V8
/// refuses it. The JS layer has clamped `start <= end <= input.len()`; we clamp
/// again so that no input can index out of bounds.
#[napi(js_name = "decodeUtf8", catch_unwind, ts_return_type = "string | number")]
pub fn decode_utf8(env: Env, input: &[u8], start: f64, end: f64) -> Reply {
  let end = (end as usize).min(input.len());
  let start = (start as usize).min(end);
  match transcode::decode_borrowed(&input[start..end]) {
    // Large ASCII on a V8 that copies big one-byte strings slowly: our own copy
    // (into a pooled buffer) becomes an external string.
    Borrowed::Ascii(bytes) if bytes.len() >= js_string::external_min_bytes(env.raw()) => {
      let mut own = crate::pool::take(bytes.len());
      own.extend_from_slice(bytes);
      Reply::Outcome(Outcome::Text(Text::Latin1(own)))
    }
    // The caller's bytes are copied by V8 while they are borrowed here.
    Borrowed::Ascii(bytes) => match js_string::copy_latin1_from(&env, bytes) {
      Some(value) => Reply::Made(value),
      None => Reply::Outcome(Outcome::Failure(STRING_TOO_LONG)),
    },
    Borrowed::Text(text) => Reply::Outcome(Outcome::Text(text)),
  }
}
