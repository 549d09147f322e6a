//! The pipeline end to end, once per kind of call: read → classify/transcode
//! (`transcode::decode`) → JS string (`js_string`). The exports only take their
//! arguments and call one of these.

use napi::sys;

use crate::js_string::{self, Maker, Outcome, Reply, TOO_LARGE};
use crate::limits::tuned;
use crate::read::{ReadError, ReadFacts};
use crate::transcode::{self, Decoded, Text};
use crate::v8::MAX_STRING_LENGTH;
use crate::{buffers, classify};

/// Whether a sync call leaves `bytes` to V8's decoder (see
/// `limits::V8_DECODES_INVALID_FROM`): large, and invalid from their start,
/// or, in the lean mode where they are sure to be copied, not ASCII (our
/// converted copy would raise the peak above fs's just as much).
/// Shorter than kMaxLength, they cannot decode to a string V8 refuses.
fn left_to_v8(env: sys::napi_env, bytes: &[u8], facts: ReadFacts) -> bool {
  (tuned!(V8_DECODES_INVALID_FROM)..MAX_STRING_LENGTH).contains(&bytes.len())
    && (transcode::starts_invalid(bytes)
      || js_string::lean_copies(env, bytes.len()) && !classify::is_ascii_after(bytes, facts.ascii_prefix))
}

/// A synchronous read on the JS thread: reads with `read` into a reused buffer
/// and makes the string as `maker` (see `js_string::Maker`), or returns a
/// failure code. Small ASCII is copied from the read buffer into V8's heap,
/// and the buffer goes back for the next read (unless a large one was freed
/// before a copy, see `js_string::from_converted`). A sync call leaves some
/// large text to V8's decoder (`left_to_v8`).
/// A file of kMaxLength bytes or more, found by its size (a `read` with a
/// limit: `ReadError::TooLarge`, which JS then judges) or by the reader as it
/// reads (`ReadError::TooLong`, stopped at `read::max_bytes`), is
/// readFileSync's ERR_STRING_TOO_LONG.
pub(crate) fn read_to_string(
  env: sys::napi_env,
  read: impl FnOnce(&mut Vec<u8>) -> Result<ReadFacts, ReadError>,
  maker: Maker,
) -> Reply {
  let mut buf = Vec::new();
  let result = read(&mut buf);
  let reply = match result {
    Err(ReadError::TooLarge) => Reply::Outcome(Outcome::Failure(TOO_LARGE)),
    Err(e) => Reply::Outcome(e.into()),
    Ok(facts) if maker == Maker::SyncCall && left_to_v8(env, &buf, facts) => js_string::decoded_by_v8(env, &buf),
    Ok(facts) => match transcode::decode(&buf, facts) {
      Decoded::Ascii => js_string::from_read_ascii(env, &mut buf),
      Decoded::Text(text) => js_string::from_converted(env, text, false, maker, Some(&mut buf)),
      Decoded::Replaced(units) => js_string::from_converted(env, Text::Utf16(units), true, maker, Some(&mut buf)),
    },
  };
  buffers::give(buf);
  reply
}

/// A read off the JS thread (libuv's pool, a batch's workers): everything but
/// making the string, which the JS thread does from the returned code units.
/// `too_long` is the failure for a file of kMaxLength bytes or more found by
/// its size (`ReadError::TooLarge`); one found by reading it is
/// `ReadError::TooLong`, which the reader stops at.
pub(crate) fn read_to_outcome(
  read: impl FnOnce(&mut Vec<u8>) -> Result<ReadFacts, ReadError>,
  too_long: i32,
) -> Outcome {
  let mut buf = Vec::new();
  match read(&mut buf) {
    Err(ReadError::TooLarge) => Outcome::Failure(too_long),
    Err(e) => {
      buffers::give(buf);
      e.into()
    }
    Ok(facts) => Outcome::Text(transcode::decode(&buf, facts).owning(buf)),
  }
}

/// `decodeUtf8`: the string for `input[start..end]`, `===` to
/// `buffer.toString('utf8', start, end)`. The JS layer has clamped
/// `0 <= start <= end <= input.len()`; we clamp again so that no input can
/// index out of bounds. ASCII goes from the caller's memory straight into V8's
/// copy constructor, large text invalid from its start into V8's decoder
/// (`left_to_v8`), other text is transcoded into a buffer of ours.
pub(crate) fn decode_to_string(env: sys::napi_env, input: &[u8], start: i64, end: i64) -> Reply {
  let end = (end.max(0) as usize).min(input.len());
  let start = (start.max(0) as usize).min(end);
  let bytes = &input[start..end];
  if left_to_v8(env, bytes, ReadFacts::default()) {
    return js_string::decoded_by_v8(env, bytes);
  }
  match transcode::decode(bytes, ReadFacts::default()) {
    Decoded::Ascii => js_string::from_callers_ascii(env, bytes),
    Decoded::Text(text) => js_string::from_converted(env, text, false, Maker::SyncCall, None),
    Decoded::Replaced(units) => js_string::from_converted(env, Text::Utf16(units), true, Maker::SyncCall, None),
  }
}

/// The read step alone (same syscalls and buffers, no string made): the byte
/// count, or the failure code. For the benchmark's floor suite only.
#[cfg(feature = "bench")]
pub(crate) fn read_only(read: impl FnOnce(&mut Vec<u8>) -> Result<ReadFacts, ReadError>) -> Result<usize, i32> {
  let mut buf = Vec::new();
  let result = read(&mut buf).map(|_| buf.len()).map_err(js_string::failure_code);
  buffers::give(buf);
  result
}
