//! `decodeUtf8`: a Buffer / TypedArray's bytes as a JS string, `===` to
//! `buffer.toString('utf8', start, end)`. The same classification and
//! transcoding as a file read; ASCII input goes straight from the caller's
//! memory into V8's copy constructor, other text is transcoded into a new buffer
//! that becomes an external string from a size on (see `js_string::external_from`).
//! Its Node-API entry point is a plain callback in `raw_call`, for the lower
//! fixed cost per call that short inputs feel.

use napi::{sys, Env};

use crate::js_string::{self, Outcome, Reply};
use crate::transcode::{self, Borrowed};

/// ASCII input shorter than this is copied straight into V8's heap, whatever
/// size `js_string::external_from` makes strings external from: the caller's
/// bytes must be copied either way, and up to V8's largest young-generation
/// object that copy is cheaper than a pooled copy made external, whose
/// reported memory and finalizer bring on full GCs in a loop of decodes.
const ASCII_COPY_BELOW: usize = 128 << 10;

/// The string for `input[start..end]`, or `STRING_TOO_LONG` (a number) if V8
/// refuses it. The JS layer has clamped `0 <= start <= end <= input.len()`; we
/// clamp again so that no input can index out of bounds.
pub fn decode_utf8(env: &Env, input: &[u8], start: i64, end: i64) -> Reply {
  let end = (end.max(0) as usize).min(input.len());
  let start = (start.max(0) as usize).min(end);
  match transcode::decode_borrowed(&input[start..end]) {
    Borrowed::Ascii(bytes) if bytes.len() < ASCII_COPY_BELOW => copied_latin1(env, bytes),
    Borrowed::Ascii(bytes) => js_string::latin1_from_slice(env, bytes),
    Borrowed::Text(text) => Reply::Outcome(Outcome::Text(text)),
  }
}

/// A string copied into V8's heap from one-byte `data`, which stays the caller's.
fn copied_latin1(env: &Env, data: &[u8]) -> Reply {
  let mut value = std::ptr::null_mut();
  // SAFETY: `data` is valid for `data.len()` bytes for the duration of the
  // call, which copies them.
  let status =
    unsafe { sys::napi_create_string_latin1(env.raw(), data.as_ptr().cast(), data.len() as isize, &mut value) };
  if status == sys::Status::napi_ok {
    Reply::Made(value)
  } else {
    Reply::Outcome(Outcome::Failure(js_string::STRING_TOO_LONG))
  }
}
