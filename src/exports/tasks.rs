//! The async reads: the pipeline (read → classify → transcode) run on libuv's
//! thread pool as napi-rs `Task`s. The main thread only turns the finished code
//! units into a JS string (`js_string`): O(1) for an external string, a copy of
//! a small one otherwise.
//!
//! A read can be cancelled (an aborted `signal`): lib/async.js rejects at once
//! and sets the read's `ReadCancel`, which the reader checks between chunks.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use napi::bindgen_prelude::{AsyncTask, ToNapiValue, TypeName};
use napi::{sys, Env, Task, ValueType};
use napi_derive::napi;

use crate::outcome::{Outcome, FS_ANSWERS, STRING_TOO_LONG};
use crate::pipeline;
use crate::plan::Caller;
use crate::read::{self, How, Source};

/// What to read: a path's bytes (NUL-terminated when read) and its open
/// flags, or a caller's fd.
enum What {
  Path { path: Vec<u8>, flags: i32 },
  Fd(i32),
}

/// One read, queued on the thread pool.
pub struct ReadTask {
  what: What,
  /// Set by JS when the read's signal aborts (see `ReadCancel`); `None` for a
  /// read without a signal, which then needs no flag of its own.
  cancel: Option<Arc<AtomicBool>>,
}

/// The cancel flag of one async read, made by JS for a read that has a signal
/// and passed to the read function; `cancel()` makes the read stop at its next
/// chunk (the promise then settles with a failure code JS ignores).
#[napi]
pub struct ReadCancel {
  flag: Arc<AtomicBool>,
}

#[napi]
impl ReadCancel {
  /// A flag not set yet.
  #[napi(constructor)]
  #[allow(clippy::new_without_default)]
  pub fn new() -> Self {
    ReadCancel {
      flag: Arc::new(AtomicBool::new(false)),
    }
  }

  /// Stops the read at its next chunk.
  #[napi]
  pub fn cancel(&self) {
    self.flag.store(true, Ordering::Relaxed);
  }
}

impl ReadTask {
  fn start(what: What, cancel: Option<&ReadCancel>) -> AsyncTask<ReadTask> {
    let cancel = cancel.map(|c| Arc::clone(&c.flag));
    AsyncTask::new(ReadTask { what, cancel })
  }
}

/// The promise's value: the string, or a failure code (as the sync functions).
pub struct Settled(Outcome);

impl TypeName for Settled {
  fn type_name() -> &'static str {
    "string | number"
  }
  fn value_type() -> ValueType {
    ValueType::Unknown
  }
}

impl ToNapiValue for Settled {
  unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
    // SAFETY: `env` is the live env napi-rs passed to this conversion (main thread).
    unsafe { pipeline::outcome_value(env, val.0, Caller::Async, None) }
  }
}

impl Task for ReadTask {
  type Output = Outcome;
  type JsValue = Settled;

  /// On a pool thread: everything but the string creation. The read's facts
  /// (the ASCII prefix checked chunk by chunk as it read) go to the decode.
  /// A panic is caught here: napi-rs runs `compute` on a libuv thread
  /// without catching one, which would abort the process.
  fn compute(&mut self) -> napi::Result<Outcome> {
    catch_unwind(AssertUnwindSafe(|| self.read()))
      .map_err(|_| napi::Error::from_reason("readfile-utf8: internal error (panic) in an async read"))
  }

  /// On the main thread: hand the code units over (see `js_string`).
  fn resolve(&mut self, _env: Env, output: Outcome) -> napi::Result<Settled> {
    Ok(Settled(output))
  }
}

impl ReadTask {
  /// The read itself (see `compute`).
  fn read(&self) -> Outcome {
    let how = How::beside_others(self.cancel.as_deref().unwrap_or(&read::NEVER_CANCELLED));
    match &self.what {
      // Regular files of kMaxLength bytes or more are left to fs.promises (its
      // answer for them, a string or which error, depends on the Node
      // version); one that reaches it here grew since fstat. Reads of unknown
      // length stop at kMaxLength with ERR_STRING_TOO_LONG (`ReadError::TooLong`).
      // A path with a NUL inside is fs's to reject (`ReadError::FsAnswers`).
      What::Path { path, flags } => pipeline::read_to_outcome(
        |buf| read::with_terminated(path, |path| read::read(Source::Path(path, *flags), how, buf)),
        FS_ANSWERS,
      ),
      // As the sync readFd (fs has no promise API for fds).
      What::Fd(fd) => pipeline::read_to_outcome(|buf| read::read(Source::Fd(*fd), how, buf), STRING_TOO_LONG),
    }
  }
}

/// Reads the file at `path` (a string) opened with numeric fs `flags`, off the main thread.
#[napi(js_name = "readPathAsync", ts_return_type = "Promise<string | number>")]
pub fn read_path_async(path: String, flags: i32, cancel: Option<&ReadCancel>) -> AsyncTask<ReadTask> {
  ReadTask::start(
    What::Path {
      path: path.into_bytes(),
      flags,
    },
    cancel,
  )
}

/// Reads the file at `path` given as raw bytes (a Buffer path), off the main thread.
#[napi(js_name = "readPathBytesAsync", ts_return_type = "Promise<string | number>")]
pub fn read_path_bytes_async(path: &[u8], flags: i32, cancel: Option<&ReadCancel>) -> AsyncTask<ReadTask> {
  ReadTask::start(
    What::Path {
      path: path.to_vec(),
      flags,
    },
    cancel,
  )
}

/// Reads from an open fd's current position to EOF (left open), off the main thread.
#[napi(js_name = "readFdAsync", ts_return_type = "Promise<string | number>")]
pub fn read_fd_async(fd: i32, cancel: Option<&ReadCancel>) -> AsyncTask<ReadTask> {
  ReadTask::start(What::Fd(fd), cancel)
}
