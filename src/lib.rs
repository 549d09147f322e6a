//! readfile-utf8: `fs.readFileSync(path, 'utf8')`, faster, with the same result.
//!
//! The data's way through the crate:
//!   arguments (index.js, then the `#[napi]` functions below, and `raw_call`
//!             for `readPath`, the hot one)
//!   → `read`      the file's bytes into one owned buffer
//!   → `classify`  ASCII / fits Latin-1 / other UTF-8 / invalid
//!   → `transcode` Latin-1 or UTF-16 code units (U+FFFD replacement as Node)
//!   → `js_string` a JS string, copied or external.

pub mod async_read;
pub mod batch;
pub mod classify;
pub mod decode;
pub mod helper_thread;
pub mod js_string;
pub mod parallel;
pub mod pool;
pub mod raw_call;
pub mod read;
pub mod simd;
pub mod transcode;

use std::cell::RefCell;

use napi::bindgen_prelude::Uint8Array;
use napi::Env;
use napi_derive::napi;

use js_string::{Outcome, Reply, MAX_STRING_LENGTH, STRING_TOO_LONG};
use read::{ReadError, ReadFacts};
use transcode::{Decoded, Text};

/// The largest read buffer kept between calls; a bigger one goes back to the
/// pool (which frees huge buffers soon, see `pool`).
const SCRATCH_KEEP_BYTES: usize = 8 << 20;

thread_local! {
  /// The read buffer, reused across calls so that its memory stays mapped and
  /// cached. Only an ASCII file big enough to become an external string takes it
  /// away (its bytes become the string); otherwise the bytes are transcoded or
  /// copied out of it.
  static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` on this thread's scratch buffer, then gives the buffer to the pool
/// if it has grown past what is kept between calls.
fn with_scratch<R>(f: impl FnOnce(&mut Vec<u8>) -> R) -> R {
  SCRATCH.with_borrow_mut(|buf| {
    let result = f(buf);
    if buf.capacity() > SCRATCH_KEEP_BYTES {
      pool::give(std::mem::take(buf));
    }
    result
  })
}

/// Reads with `read` into the scratch buffer and makes the JS string, or
/// returns a failure code (see `js_string::Outcome`).
pub(crate) fn read_to_string(env: &Env, read: impl FnOnce(&mut Vec<u8>) -> Result<ReadFacts, ReadError>) -> Reply {
  with_scratch(|buf| match read(buf) {
    Ok(facts) => string_from_bytes(env, buf, facts),
    Err(e) => Reply::Outcome(e.into()),
  })
}

/// Reads with `read` into the scratch buffer and returns only the byte count,
/// or the failure code: the read step alone, for the benchmark's floor suite.
pub(crate) fn read_only(read: impl FnOnce(&mut Vec<u8>) -> Result<ReadFacts, ReadError>) -> Result<usize, i32> {
  with_scratch(|buf| read(buf).map(|_| buf.len()).map_err(js_string::failure_code))
}

fn string_from_bytes(env: &Env, bytes: &mut Vec<u8>, facts: ReadFacts) -> Reply {
  // Node's readFileSync(p, 'utf8') refuses any file of kMaxLength *bytes* or
  // more, whatever it decodes to (measured on Node 20 and 26), so do we.
  if bytes.len() >= MAX_STRING_LENGTH {
    return Reply::Outcome(Outcome::Failure(STRING_TOO_LONG));
  }
  match transcode::decode_read(bytes, facts) {
    // Large ASCII: the read buffer itself becomes the external string's data.
    Decoded::Ascii if bytes.len() >= js_string::external_from(env.raw()).one_byte => {
      Reply::Outcome(Outcome::Text(Text::Latin1(std::mem::take(bytes))))
    }
    // Small ASCII: V8 copies the scratch bytes into its heap.
    Decoded::Ascii => js_string::latin1_from_slice(env, bytes),
    Decoded::Converted(text) => Reply::Outcome(Outcome::Text(text)),
  }
}

/// Reads the file at `path` given as raw bytes (a Buffer path).
#[napi(js_name = "readPathBytes", catch_unwind, ts_return_type = "string | number")]
pub fn read_path_bytes(env: Env, path: Uint8Array, flags: i32) -> Reply {
  read_to_string(&env, |buf| read::read_path_into(&path, flags, buf))
}

/// Reads from an open fd's current position to EOF, leaving the fd open.
#[napi(js_name = "readFd", catch_unwind, ts_return_type = "string | number")]
pub fn read_fd(env: Env, fd: i32) -> Reply {
  read_to_string(&env, |buf| read::read_fd_into(fd, buf))
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

/// Which reader this build has ("syscalls" or "portable"; see `read`).
#[napi(js_name = "reader")]
pub fn reader() -> &'static str {
  read::READER
}

/// Adds `readPath` (see `raw_call`) to the exports napi-rs builds.
#[napi(module_exports)]
pub fn init(exports: napi::bindgen_prelude::Object, env: Env) -> napi::Result<()> {
  raw_call::register(&env, &exports)
}
