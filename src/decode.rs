//! `decodeUtf8`: a Buffer / TypedArray's bytes as a JS string, `===` to
//! `buffer.toString('utf8', start, end)`. The same classification and
//! transcoding as a file read; ASCII input goes straight from the caller's
//! memory into V8's copy constructor, other text is transcoded into a new buffer
//! that becomes an external string from 64 KiB on (see `js_string`).

use std::ptr;

use napi::bindgen_prelude::ToNapiValue;
use napi::sys;
use napi_derive::napi;

use crate::js_string::{Outcome, STRING_TOO_LONG};
use crate::transcode::{self, Borrowed};

/// The string for `input[start..end]`, or `STRING_TOO_LONG` (a number) if V8
/// refuses it. The JS layer has clamped `start <= end <= input.len()`; we clamp
/// again so that no input can index out of bounds.
#[napi(js_name = "decodeUtf8", catch_unwind, ts_return_type = "string | number")]
pub fn decode_utf8(input: &[u8], start: f64, end: f64) -> Decoded<'_> {
  let end = (end as usize).min(input.len());
  let start = (start as usize).min(end);
  Decoded(transcode::decode_borrowed(&input[start..end]))
}

/// A decoded slice, turned into a JS string when napi-rs returns it.
pub struct Decoded<'a>(Borrowed<'a>);

impl ToNapiValue for Decoded<'_> {
  unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
    match val.0 {
      // SAFETY: `env` is the live env napi-rs passed to this conversion.
      Borrowed::Text(text) => unsafe { Outcome::to_napi_value(env, Outcome::Text(text)) },
      Borrowed::Ascii(bytes) => {
        let mut result = ptr::null_mut();
        // SAFETY: `bytes` borrows the caller's typed array, alive for this whole
        // call; V8 copies the bytes before returning.
        let status =
          unsafe { sys::napi_create_string_latin1(env, bytes.as_ptr().cast(), bytes.len() as isize, &mut result) };
        if status == sys::Status::napi_ok {
          Ok(result)
        } else {
          // SAFETY: as above.
          unsafe { i32::to_napi_value(env, STRING_TOO_LONG) }
        }
      }
    }
  }
}
