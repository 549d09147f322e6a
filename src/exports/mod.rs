//! Every JS entry point of the addon, and nothing else: each takes its
//! arguments (`args`) and calls one `pipeline` function. index.js and lib/
//! are the only callers; they pass well-formed arguments and turn failure
//! codes into fs's errors (lib/errors.js).
//!
//! - `readPath` (string path), `decodeUtf8` (and the bench build's
//!   `readPathLength`): plain Node-API callbacks (`raw`), for the lowest fixed
//!   cost per call;
//! - `readPathBytes` (Buffer path), `readFd`, `engine`, `reader`,
//!   `setHeapMeter` (for lib/heap.js), `setLeanStrings`, `setOtherRuntime`:
//!   `#[napi]` functions below;
//! - `poolOpen`, `poolReadEach`, `poolCancel`, `poolReadAll`, `poolForget`, `poolTake`: async
//!   reads, single or batched, on this JS thread's pool of readers (`pool`);
//! - `readFilesOpen`/`Next`/`Cancel`, `readFilesSettle`: a sync batch, many
//!   files read by several threads at once (`batch`).

mod args;
mod batch;
mod pool;
mod raw;

use napi::bindgen_prelude::{Function, Object, Uint8Array};
use napi::{Env, JsValue};
use napi_derive::napi;

use crate::js_string::Reply;
use crate::plan::Caller;
use crate::read::{self, How, Source};
use crate::{heap, limits, pipeline, transcode};

/// Reads the file at `path` given as raw bytes (a Buffer path) opened with
/// numeric fs `flags`: the string, or a failure code.
#[napi(js_name = "readPathBytes", catch_unwind, ts_return_type = "string | number")]
pub fn read_path_bytes(env: Env, path: Uint8Array, flags: i32) -> Reply {
  pipeline::read_to_string(
    env.raw(),
    |buf| read::with_terminated(&path, |path| read::read(Source::Path(path, flags), How::SYNC, buf)),
    Caller::Sync,
  )
}

/// Reads from an open fd's current position to EOF, leaving the fd open.
#[napi(js_name = "readFd", catch_unwind, ts_return_type = "string | number")]
pub fn read_fd(env: Env, fd: i32) -> Reply {
  pipeline::read_to_string(
    env.raw(),
    |buf| read::read(Source::Fd(fd), How::SYNC, buf),
    Caller::Sync,
  )
}

/// Takes lib/heap.js's function that measures the calling thread's heap: the
/// addon calls it when a string is first large enough for the heap's size to
/// matter (see `heap`), so that a process that reads only small files never
/// loads node:v8.
#[napi(js_name = "setHeapMeter")]
pub fn set_heap_meter(env: Env, meter: Function<(), f64>) {
  heap::set_meter(env.raw(), meter.raw());
}

/// Sets the process's memory mode: `lean` (fast is the default) makes a sync
/// call's strings as fs makes them (see `plan`). Returns whether it was lean.
#[napi(js_name = "setLeanStrings")]
pub fn set_lean_strings(lean: bool) -> bool {
  pipeline::set_lean(lean)
}

/// Says that the runtime is Bun or Deno, whose Node-API frees an external
/// string's buffer too late: every string is copied from now on (see `plan`).
#[napi(js_name = "setOtherRuntime")]
pub fn set_other_runtime() {
  pipeline::set_other_runtime()
}

/// Which UTF-8 engine this process uses ("simdutf" or "fallback").
#[napi(js_name = "engine")]
pub fn engine() -> &'static str {
  transcode::engine()
}

/// Every tuned value of `limits` by name, as this process uses it (the
/// calibrate suite's reference). Only in the bench build.
#[cfg(feature = "bench")]
#[napi(js_name = "thresholds")]
pub fn thresholds() -> std::collections::HashMap<String, f64> {
  limits::all()
    .into_iter()
    .map(|(name, value)| (name.to_owned(), value as f64))
    .collect()
}

/// Which reader this build has ("syscalls" or "portable"; see `read`).
#[napi(js_name = "reader")]
pub fn reader() -> &'static str {
  read::READER
}

/// Pins the library (see `pin`), tells `limits` which Node line runs, and adds
/// the plain callbacks (`raw`) to the exports napi-rs builds.
#[napi(module_exports)]
pub fn init(exports: Object, env: Env) -> napi::Result<()> {
  crate::pin::pin_this_library();
  if let Ok(version) = env.get_node_version() {
    limits::set_node_line(version.major);
  }
  raw::register(&env, &exports)
}
