//! readfile-utf8: `fs.readFileSync(path, 'utf8')`, faster, with the same result.
//!
//! The data's way through the crate:
//!   arguments (index.js, then the `#[napi]` functions below)
//!   → `read`      the file's bytes into one owned buffer
//!   → `classify`  ASCII / fits Latin-1 / other UTF-8 / invalid
//!   → `transcode` Latin-1 or UTF-16 code units (U+FFFD replacement as Node)
//!   → `js_string` a JS string, copied or external.

pub mod async_read;
pub mod classify;
pub mod decode;
pub mod js_string;
pub mod read;
pub mod simd;
pub mod transcode;

use napi::bindgen_prelude::Uint8Array;
use napi_derive::napi;

use js_string::Outcome;
use read::ReadError;

/// Failure code for a path with a NUL byte (index.js lets fs throw its error).
pub const NUL_IN_PATH: i32 = -1;

/// Failure codes returned to JS instead of a string: `errno * 8 + syscall` for an
/// OS error (see `read::Syscall`), or one of the negative codes (`NUL_IN_PATH`,
/// `js_string::STRING_TOO_LONG`). index.js turns them into fs's errors.
fn outcome(read: Result<Vec<u8>, ReadError>) -> Outcome {
  match read {
    // Node's readFileSync(p, 'utf8') refuses any file of kMaxLength *bytes* or
    // more, whatever it decodes to (measured on Node 20 and 26), so do we.
    Ok(bytes) if bytes.len() >= js_string::MAX_STRING_LENGTH => Outcome::Failure(js_string::STRING_TOO_LONG),
    Ok(bytes) => Outcome::Text(transcode::decode(bytes)),
    Err(ReadError::Os { errno, syscall }) => Outcome::Failure(errno * 8 + syscall as i32),
    Err(ReadError::NulInPath) => Outcome::Failure(NUL_IN_PATH),
  }
}

/// Reads the file at `path` (a string) opened with numeric fs `flags`.
#[napi(js_name = "readPath", catch_unwind, ts_return_type = "string | number")]
pub fn read_path(path: String, flags: i32) -> Outcome {
  outcome(read::read_path(path.as_bytes(), flags))
}

/// Reads the file at `path` given as raw bytes (a Buffer path).
#[napi(js_name = "readPathBytes", catch_unwind, ts_return_type = "string | number")]
pub fn read_path_bytes(path: Uint8Array, flags: i32) -> Outcome {
  outcome(read::read_path(&path, flags))
}

/// Reads from an open fd's current position to EOF, leaving the fd open.
#[napi(js_name = "readFd", catch_unwind, ts_return_type = "string | number")]
pub fn read_fd(fd: i32) -> Outcome {
  outcome(read::read_fd(fd))
}

/// Which UTF-8 engine this process uses ("simdutf" or "fallback").
#[napi(js_name = "engine")]
pub fn engine() -> &'static str {
  if simd::available() {
    "simdutf"
  } else {
    "fallback"
  }
}
