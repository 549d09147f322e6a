//! Every JS entry point of the addon, and nothing else: each takes its
//! arguments and calls one `pipeline` function. index.js and lib/ are the only
//! callers; they pass well-formed arguments and turn failure codes into fs's
//! errors (lib/errors.js).
//!
//! - `readPath` (string path), `decodeUtf8` (and the bench build's
//!   `readPathLength`): plain Node-API callbacks (`raw`), for the lowest fixed
//!   cost per call;
//! - `readPathBytes` (Buffer path), `readFd`, `engine`, `reader`,
//!   `noteHeapBytes` (for lib/heap.js), `setLeanStrings`, `copyAllStrings`:
//!   `#[napi]` functions below;
//! - `readPathAsync`, `readPathBytesAsync`, `readFdAsync`: tasks on libuv's
//!   thread pool (`tasks`);
//! - `readFiles`, `readFilesStart`/`Take`/`Cancel`: many files read by several
//!   threads at once (`batch`).

mod batch;
mod raw;
mod tasks;

use std::ptr;

use napi::bindgen_prelude::{Function, Object, Uint8Array};
use napi::{sys, Env, JsValue};
use napi_derive::napi;

use crate::js_string::{self, Maker, Reply};
use crate::{limits, pipeline, read, transcode};

/// Reads the file at `path` given as raw bytes (a Buffer path) opened with
/// numeric fs `flags`: the string, or a failure code.
#[napi(js_name = "readPathBytes", catch_unwind, ts_return_type = "string | number")]
pub fn read_path_bytes(env: Env, path: Uint8Array, flags: i32) -> Reply {
  pipeline::read_to_string(
    env.raw(),
    |buf| read::with_terminated(&path, |path| read::read_path_into(path, flags, buf)),
    Maker::SyncCall,
  )
}

/// Reads from an open fd's current position to EOF, leaving the fd open.
#[napi(js_name = "readFd", catch_unwind, ts_return_type = "string | number")]
pub fn read_fd(env: Env, fd: i32) -> Reply {
  pipeline::read_to_string(env.raw(), |buf| read::read_fd_into(fd, buf), Maker::SyncCall)
}

/// Notes what the calling thread's JS heap holds in small objects outside its
/// young generation, which decides whether large strings may be external (see
/// `limits::ExternalFrom`); returns how many calls lib/heap.js lets pass
/// before it tells again. It tells only once the addon first asked (see
/// `set_heap_meter`).
#[napi(js_name = "noteHeapBytes")]
pub fn note_heap_bytes(bytes: f64) -> u32 {
  js_string::note_heap_bytes(bytes as usize);
  limits::tuned!(HEAP_CHECK_EVERY)
}

/// Takes lib/heap.js's function that measures the calling thread's heap: the
/// addon calls it when a string is first large enough for the heap's size to
/// matter, so that a process that reads only small files never loads node:v8.
#[napi(js_name = "setHeapMeter")]
pub fn set_heap_meter(env: Env, meter: Function<(), f64>) {
  js_string::set_heap_meter(env.raw(), meter.raw());
}

/// Sets the process's memory mode: `lean` (fast is the default) makes strings
/// external only where fs's are (see `limits::ExternalFrom::lean_units`).
/// Returns whether it was lean.
#[napi(js_name = "setLeanStrings")]
pub fn set_lean_strings(lean: bool) -> bool {
  js_string::set_lean(lean)
}

/// Copies every string into V8's heap from now on, in every mode: for
/// runtimes whose Node-API frees an external string's buffer too late (see
/// `js_string::copy_all_strings`).
#[napi(js_name = "copyAllStrings")]
pub fn copy_all_strings() {
  js_string::copy_all_strings()
}

/// Which UTF-8 engine this process uses ("simdutf" or "fallback").
#[napi(js_name = "engine")]
pub fn engine() -> &'static str {
  transcode::engine()
}

/// Every threshold of `limits` by name, as this process uses it (the
/// calibrate suite's reference). Only in the bench build.
#[cfg(feature = "bench")]
#[napi(js_name = "thresholds")]
pub fn thresholds(env: Env) -> std::collections::HashMap<String, f64> {
  limits::all(js_string::external_from(env.raw()))
    .into_iter()
    .map(|(name, value)| (name.to_owned(), value as f64))
    .collect()
}

/// Which reader this build has ("syscalls" or "portable"; see `read`).
#[napi(js_name = "reader")]
pub fn reader() -> &'static str {
  read::READER
}

/// Pins the library (see `pin`) and adds the plain callbacks (`raw`) to the
/// exports napi-rs builds.
#[napi(module_exports)]
pub fn init(exports: Object, env: Env) -> napi::Result<()> {
  crate::pin::pin_this_library();
  raw::register(&env, &exports)
}

/// The bytes of `value` if it is a Uint8Array (a Buffer is one), else `None`.
///
/// # Safety
/// `value` must be a live value of the current synchronous call, and the slice
/// must not be used after it returns: only then does the value keep the memory
/// alive and unmoved.
unsafe fn uint8_array_bytes<'a>(env: sys::napi_env, value: sys::napi_value) -> Option<&'a [u8]> {
  let mut kind = sys::TypedarrayType::int8_array;
  let mut length = 0;
  let mut data = ptr::null_mut();
  // SAFETY: `value` is live (this function's contract); the out-pointers are locals.
  let status = unsafe {
    sys::napi_get_typedarray_info(
      env,
      value,
      &mut kind,
      &mut length,
      &mut data,
      ptr::null_mut(),
      ptr::null_mut(),
    )
  };
  if status != sys::Status::napi_ok || kind != sys::TypedarrayType::uint8_array {
    return None;
  }
  if length == 0 || data.is_null() {
    return Some(&[]);
  }
  // SAFETY: Node gives the view's first byte and its length; the memory stays
  // alive and unmoved while the caller uses it (this function's contract).
  Some(unsafe { std::slice::from_raw_parts(data.cast::<u8>(), length) })
}
