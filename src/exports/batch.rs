//! `readFilesUtf8` / `readFilesUtf8Async`: a list of files read by several
//! threads at once, each file through the single read's pipeline (read →
//! classify → transcode), the JS strings made on the JS thread in list order.
//!
//! Worker threads take the next index from a shared counter, read and decode
//! that file and leave the result in a ring of slots; the JS thread takes the
//! results in order and makes their strings. A worker takes no index beyond
//! the ring's reach, nor while the results waiting for the JS thread hold more
//! than `PENDING_MAX_BYTES`: however long the list, memory holds the strings
//! made so far plus a bounded working set.
//!
//! Sync: the calling thread is one of the readers; between scopes of strings
//! it reads files itself while it may take one. Async: the workers wake the
//! JS thread through a threadsafe function, whose JS callback calls
//! `readFilesTake`.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread;
use std::time::Duration;

use napi::bindgen_prelude::{Array, External, ToNapiValue};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{sys, Env, JsValue, Status};
use napi_derive::napi;

use crate::external_memory;
use crate::js_string::{self, Maker, Outcome, Reply, FS_ANSWERS, STRING_TOO_LONG};
use crate::limits::{
  BATCH_MAX_THREADS as MAX_THREADS, BATCH_PENDING_MAX_BYTES as PENDING_MAX_BYTES, BATCH_READERS_KEEP as READERS_KEEP,
  BATCH_SCOPE_RESULTS as SCOPE_RESULTS, BATCH_SPARES_MAX as SPARES_MAX, BATCH_SPARES_PER_CLAIM as SPARES_PER_CLAIM,
  BATCH_TAKEN_MAX_BYTES as TAKEN_MAX_BYTES, BATCH_WAKE_RUN as WAKE_RUN, BATCH_WINDOW as WINDOW, LOCAL_KEEP,
};
use crate::read::{ReadError, ReadFacts};
use crate::transcode::Text;
use crate::{buffers, pipeline, read};

// ---- The single-read pipeline, as the batch uses it: these two functions only. ----

/// How a batch reads each of its files.
#[derive(Clone, Copy)]
struct Reading {
  /// fs-style numeric open flags.
  flags: i32,
  /// Each file is converted on the thread that read it (`ReadFacts::alone`):
  /// the batch runs on several threads, which fill the cores, or was asked
  /// for one.
  alone: bool,
}

impl Reading {
  /// For a batch on `threads` threads, asked for `concurrency`.
  fn new(flags: i32, threads: usize, concurrency: u32) -> Self {
    Reading {
      flags,
      alone: threads > 1 || concurrency <= 1,
    }
  }
}

/// The read step of one entry: the file at `path`, on the calling thread
/// alone (the other cores are busy with the other files); one of kMaxLength
/// bytes or more is not read (`ReadError::TooLarge`).
fn read_file(path: &[u8], how: Reading) -> impl FnOnce(&mut Vec<u8>) -> Result<ReadFacts, ReadError> + '_ {
  move |buf| {
    read::with_terminated(path, |path| {
      read::read_path_cancellable_into(path, how.flags, &read::NEVER_CANCELLED, buf)
    })
    .map(|facts| if how.alone { facts.read_alone() } else { facts })
  }
}

/// Reads and decodes the file at `path` (on a worker thread): its code units,
/// or the failure code the single read would return (`too_large` for a file
/// of kMaxLength bytes or more).
fn read_one(path: &[u8], how: Reading, too_large: i32) -> Outcome {
  pipeline::read_to_outcome(read_file(path, how), too_large)
}

/// Reads and decodes the file at `path` on the JS thread and makes its value
/// at once, from this thread's reused buffers as a single read does: for the
/// entry a sync batch needs next, which then never waits in the ring. Its
/// string is made as the workers' are, so every entry of a batch is alike.
fn read_value_now(env: sys::napi_env, path: &[u8], how: Reading) -> Reply {
  pipeline::read_to_string(env, read_file(path, how), Maker::AfterWork)
}

/// The JS value of a result (on the JS thread): the string, copied or external
/// by the single read's rules, or the failure code as a number. A small
/// buffer a string was copied out of goes to `spent`, for the readers.
fn js_value(env: sys::napi_env, outcome: Outcome, spent: &mut Vec<Text>) -> napi::Result<sys::napi_value> {
  // SAFETY: `env` is the live env of the current call, on its JS thread.
  unsafe { js_string::to_value_sparing(env, outcome, Some(spent)) }
}

// ---- The batch. ----

/// The paths of a batch: the bytes of each, or none where JS reads that entry
/// itself (fds and the argument forms only fs should answer).
struct Paths {
  bytes: Vec<u8>,
  /// `(start, end)` in `bytes`; `NOT_NATIVE` as start for an entry JS reads.
  spans: Vec<(usize, usize)>,
}

const NOT_NATIVE: usize = usize::MAX;

impl Paths {
  fn get(&self, index: usize) -> Option<&[u8]> {
    let (start, end) = self.spans[index];
    (start != NOT_NATIVE).then(|| &self.bytes[start..end])
  }

  fn len(&self) -> usize {
    self.spans.len()
  }
}

/// How the JS thread is told that the result it waits for is ready.
enum Waker {
  /// Sync: it sleeps on `Batch::ready`.
  Condvar,
  /// Async: a threadsafe function that calls the JS callback, which calls
  /// `take`. Dropped (released) once the batch is over, so that it no longer
  /// keeps the event loop alive.
  Callback(Option<WakeFn>),
}

type WakeFn = ThreadsafeFunction<(), (), (), Status, false>;

struct State {
  /// The next index a reader takes.
  claimed: usize,
  /// The next index the JS thread takes.
  emitted: usize,
  /// Finished results, at `index % slots.len()`, from `emitted` on.
  slots: Vec<Option<Outcome>>,
  /// Bytes held by the results in `slots`.
  pending_bytes: usize,
  /// No reader takes another index: the batch is over, cancelled, or failed.
  stop: bool,
  js_waiting: bool,
  workers_waiting: usize,
  waker: Waker,
  /// A wake-up is on its way to the JS thread (async).
  wake_queued: bool,
  /// The first index from `emitted` on whose result is not ready yet.
  ready_end: usize,
  /// Small buffers the JS thread copied strings out of, for the readers' next
  /// files: reused there, they spare a malloc on the reader and a free on the
  /// JS thread into the reader's arena, whose lock the two then fight over.
  /// Empty once no reader will claim another file.
  spares: Vec<Text>,
}

struct Batch {
  paths: Paths,
  reading: Reading,
  /// The failure code for a file of kMaxLength bytes or more (see `read_one`).
  too_large: i32,
  /// Stop at the first OS error in list order (the caller throws it).
  stop_at_error: bool,
  /// How many reader threads it starts (the JS thread not counted).
  readers: usize,
  state: Mutex<State>,
  /// Signalled when the result the JS thread waits for is ready (sync).
  ready: Condvar,
  /// Signalled when readers may take indices again.
  room: Condvar,
}

/// Locks `m`, whether or not a thread panicked while holding it: no section
/// under this lock can leave the state half-updated.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
  m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether `outcome` is an OS error (what `stop_at_error` stops at).
fn is_os_error(outcome: &Outcome) -> bool {
  matches!(outcome, Outcome::Failure(code) if *code != FS_ANSWERS)
}

fn result_bytes(outcome: &Outcome) -> usize {
  match outcome {
    Outcome::Text(Text::Latin1(v)) => v.capacity(),
    Outcome::Text(Text::Utf16(v)) => v.capacity() * 2,
    Outcome::Failure(_) => 0,
  }
}

impl Batch {
  fn new(paths: Paths, reading: Reading, readers: usize, too_large: i32, stop_at_error: bool, waker: Waker) -> Self {
    let window = paths.len().clamp(1, WINDOW);
    Batch {
      readers,
      paths,
      reading,
      too_large,
      stop_at_error,
      state: Mutex::new(State {
        claimed: 0,
        emitted: 0,
        slots: (0..window).map(|_| None).collect(),
        pending_bytes: 0,
        stop: false,
        js_waiting: false,
        workers_waiting: 0,
        waker,
        wake_queued: false,
        ready_end: 0,
        spares: Vec::new(),
      }),
      ready: Condvar::new(),
      room: Condvar::new(),
    }
  }

  fn len(&self) -> usize {
    self.paths.len()
  }

  /// Whether a reader may take the next index now. The index the JS thread
  /// waits for may always be taken, so a full budget never blocks progress.
  fn may_claim(&self, st: &State) -> bool {
    !st.stop
      && st.claimed < self.len()
      && st.claimed < st.emitted + st.slots.len()
      && (st.pending_bytes < PENDING_MAX_BYTES || st.claimed == st.emitted)
  }

  /// `read` run on the path of entry `index`; `None` (fs answers: fs then
  /// reads that entry) for an entry JS reads itself, or if `read` panicked.
  fn on_path<R>(&self, index: usize, read: impl FnOnce(&[u8]) -> R) -> Option<R> {
    let path = self.paths.get(index)?;
    catch_unwind(AssertUnwindSafe(|| read(path))).ok()
  }

  /// Reads entry `index` (on whichever thread).
  fn read(&self, index: usize) -> Outcome {
    self
      .on_path(index, |path| read_one(path, self.reading, self.too_large))
      .unwrap_or(Outcome::Failure(FS_ANSWERS))
  }

  /// Reads entry `index`, the next in list order, on the JS thread and makes
  /// its value (see `read_value_now`); whether it failed with an OS error.
  fn read_now(&self, env: sys::napi_env, index: usize) -> (Reply, bool) {
    let reply = self
      .on_path(index, |path| read_value_now(env, path, self.reading))
      .unwrap_or(Reply::Outcome(Outcome::Failure(FS_ANSWERS)));
    let failed = matches!(&reply, Reply::Outcome(outcome) if is_os_error(outcome));
    (reply, failed)
  }

  /// Moves `ready_end` past the results ready in list order from it on.
  fn extend_ready(&self, st: &mut State) {
    let window = st.slots.len();
    while st.ready_end < self.len() && st.ready_end < st.emitted + window && st.slots[st.ready_end % window].is_some() {
      st.ready_end += 1;
    }
  }

  /// Whether every result has been taken, or none will come any more.
  fn is_over(&self, st: &State) -> bool {
    st.emitted >= self.len() || (st.stop && st.emitted >= st.claimed)
  }

  /// Records that the JS thread made the value of entry `emitted` itself;
  /// returns whether the batch is over (as `take_ready` does).
  fn emitted_now(&self, st: &mut State, failed: bool) -> bool {
    st.emitted += 1;
    if st.ready_end < st.emitted {
      st.ready_end = st.emitted;
      self.extend_ready(st);
    }
    if st.workers_waiting > 0 {
      self.room.notify_all();
    }
    if failed && self.stop_at_error {
      self.stop(st);
      return true;
    }
    self.is_over(st)
  }

  /// Stores a finished result; wakes the JS thread if it extends the run of
  /// results ready in list order (async: once that run is worth a wake-up).
  fn deposit(&self, st: &mut State, index: usize, outcome: Outcome) {
    st.pending_bytes += result_bytes(&outcome);
    let window = st.slots.len();
    st.slots[index % window] = Some(outcome);
    if index != st.ready_end {
      return;
    }
    self.extend_ready(st);
    self.wake_js(st, false);
  }

  /// Tells the JS thread that results are ready in list order. Async, a
  /// wake-up costs the JS thread a callback: one per `WAKE_RUN` results,
  /// unless `now` (a worker is about to wait for room) or no file is left to
  /// start (the batch is ending).
  fn wake_js(&self, st: &mut State, now: bool) {
    if st.ready_end == st.emitted {
      return;
    }
    match &st.waker {
      Waker::Condvar => {
        if st.js_waiting {
          self.ready.notify_one();
        }
      }
      Waker::Callback(wake) => {
        let worth_it = now || st.ready_end - st.emitted >= WAKE_RUN || st.claimed >= self.len();
        if !st.wake_queued && worth_it {
          st.wake_queued = true;
          let delivered = wake
            .as_ref()
            .is_some_and(|w| w.call((), ThreadsafeFunctionCallMode::NonBlocking) == Status::Ok);
          if !delivered {
            // The environment is going away: nobody will take the results.
            self.stop(st);
          }
        }
      }
    }
  }

  fn stop(&self, st: &mut State) {
    st.stop = true;
    st.spares.clear();
    if st.workers_waiting > 0 {
      self.room.notify_all();
    }
  }

  /// A worker thread's loop: take an index, read it, store the result.
  fn work(&self) {
    buffers::keep_locally((READERS_KEEP / self.readers.max(1)).max(LOCAL_KEEP));
    let mut finished: Option<(usize, Outcome)> = None;
    let mut spares = Vec::new();
    loop {
      let mut st = lock(&self.state);
      if let Some((index, outcome)) = finished.take() {
        self.deposit(&mut st, index, outcome);
      }
      while !self.may_claim(&st) {
        if st.stop || st.claimed >= self.len() {
          return;
        }
        // The JS thread must drain for room to come.
        self.wake_js(&mut st, true);
        st.workers_waiting += 1;
        // A timeout too, so that a worker whose JS environment went away
        // without a word (async) notices it and ends.
        st = self
          .room
          .wait_timeout(st, Duration::from_millis(250))
          .unwrap_or_else(|e| e.into_inner())
          .0;
        st.workers_waiting -= 1;
        if let Waker::Callback(Some(wake)) = &st.waker {
          if wake.aborted() {
            self.stop(&mut st);
          }
        }
      }
      let index = st.claimed;
      st.claimed += 1;
      let left = st.spares.len().saturating_sub(SPARES_PER_CLAIM);
      spares.extend(st.spares.drain(left..));
      drop(st);
      spares.drain(..).for_each(Text::give_back);
      finished = Some((index, self.read(index)));
    }
  }

  /// Moves the buffers in `spent` into the spares, up to `SPARES_MAX`, while
  /// a reader may still claim a file; once none will, the spares move out into
  /// `spent` instead. What is left in `spent` the caller gives back to its own
  /// thread's buffers, after releasing the lock.
  fn keep_spares(&self, st: &mut State, spent: &mut Vec<Text>) {
    if self.readers == 0 || st.stop || st.claimed >= self.len() {
      spent.append(&mut st.spares);
      return;
    }
    let room = SPARES_MAX.saturating_sub(st.spares.len()).min(spent.len());
    st.spares.extend(spent.drain(..room));
  }

  /// Moves the results ready in list order (up to `max`) into `out`; returns
  /// whether the batch is over (every result taken, or the first error in
  /// list order when `stop_at_error`).
  fn take_ready(&self, st: &mut State, out: &mut Vec<Outcome>, max: usize) -> bool {
    let before = out.len();
    while out.len() - before < max && st.emitted < self.len() {
      let slot = st.emitted % st.slots.len();
      let Some(outcome) = st.slots[slot].take() else {
        break;
      };
      st.pending_bytes -= result_bytes(&outcome);
      st.emitted += 1;
      let failed = is_os_error(&outcome);
      out.push(outcome);
      if failed && self.stop_at_error {
        self.stop(st);
        return true;
      }
    }
    if out.len() > before && st.workers_waiting > 0 {
      self.room.notify_all();
    }
    self.is_over(st)
  }
}

/// A raw JS value as a function's return value.
pub struct Raw(sys::napi_value);

impl ToNapiValue for Raw {
  unsafe fn to_napi_value(_env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
    Ok(val.0)
  }
}

/// The paths of JS array `list`: each a string (its UTF-8 bytes), a
/// Uint8Array (its bytes), or anything else (null: an entry JS reads).
fn collect_paths(env: sys::napi_env, list: &Array) -> napi::Result<Paths> {
  let n = list.len() as usize;
  let mut paths = Paths {
    bytes: Vec::with_capacity(n * 64),
    spans: Vec::with_capacity(n),
  };
  let array = list.raw();
  for i in 0..n {
    let mut value = ptr::null_mut();
    // SAFETY: `env` is this call's env and `array` one of its live arguments.
    napi::check_status!(unsafe { sys::napi_get_element(env, array, i as u32, &mut value) })?;
    let start = paths.bytes.len();
    if string_into(env, value, &mut paths.bytes) || typed_array_into(env, value, &mut paths.bytes) {
      paths.spans.push((start, paths.bytes.len()));
    } else {
      paths.spans.push((NOT_NATIVE, 0));
    }
  }
  Ok(paths)
}

/// Appends the UTF-8 of `value` to `bytes` if it is a string.
fn string_into(env: sys::napi_env, value: sys::napi_value, bytes: &mut Vec<u8>) -> bool {
  // Room for a usual path; Node writes at most room - 1 bytes and a NUL.
  bytes.reserve(1024);
  let room = bytes.capacity() - bytes.len();
  let mut written = 0;
  // SAFETY: the spare capacity is writable for `room` bytes.
  let status = unsafe {
    sys::napi_get_value_string_utf8(
      env,
      value,
      bytes.as_mut_ptr().add(bytes.len()).cast(),
      room,
      &mut written,
    )
  };
  if status != sys::Status::napi_ok {
    return false;
  }
  // Node stops before a character that does not fit (up to 4 bytes): with
  // room to spare, the string was written whole.
  if written + 4 >= room {
    // SAFETY: a null buffer asks for the length only.
    unsafe { sys::napi_get_value_string_utf8(env, value, ptr::null_mut(), 0, &mut written) };
    bytes.reserve(written + 1);
    // SAFETY: as above, with room for `written` bytes and the NUL.
    unsafe {
      sys::napi_get_value_string_utf8(
        env,
        value,
        bytes.as_mut_ptr().add(bytes.len()).cast(),
        written + 1,
        &mut written,
      )
    };
  }
  // SAFETY: Node initialised `written` bytes after the old length.
  unsafe { bytes.set_len(bytes.len() + written) };
  true
}

/// Appends the bytes of `value` to `bytes` if it is a Uint8Array.
fn typed_array_into(env: sys::napi_env, value: sys::napi_value, bytes: &mut Vec<u8>) -> bool {
  // SAFETY: `value` is a live value of this call (the list holds it), and the
  // bytes are copied before it returns.
  match unsafe { super::uint8_array_bytes(env, value) } {
    Some(view) => {
      bytes.extend_from_slice(view);
      true
    }
    None => false,
  }
}

/// Starts up to `count` worker threads running `work`; returns how many started.
fn spawn_workers(count: usize, mut spawn: impl FnMut(thread::Builder) -> std::io::Result<()>) -> usize {
  (0..count)
    .take_while(|_| spawn(thread::Builder::new().name("readfile-utf8-batch".into())).is_ok())
    .count()
}

/// Sets `stop` when dropped: however the sync call ends, the workers end too
/// before the scope joins them.
struct StopOnDrop<'a>(&'a Batch);

impl Drop for StopOnDrop<'_> {
  fn drop(&mut self) {
    let mut st = lock(&self.0.state);
    st.stop = true;
    self.0.room.notify_all();
  }
}

/// `readFiles(paths, flags, concurrency, stopAtError)`: reads every path of
/// the list with `concurrency` threads in all (this one included) and returns
/// an array of strings and failure codes in list order (see `js_string`). With
/// `stopAtError`, the array ends at the first OS error (the caller throws it).
#[napi(js_name = "readFiles", ts_return_type = "Array<string | number>")]
pub fn read_files(env: Env, paths: Array, flags: i32, concurrency: u32, stop_at_error: bool) -> napi::Result<Raw> {
  let env = env.raw();
  let paths = collect_paths(env, &paths)?;
  let workers = (concurrency.clamp(1, MAX_THREADS) as usize - 1).min(paths.len().saturating_sub(1));
  let batch = Batch::new(
    paths,
    Reading::new(flags, workers + 1, concurrency),
    workers,
    STRING_TOO_LONG,
    stop_at_error,
    Waker::Condvar,
  );
  let mut out = ptr::null_mut();
  // SAFETY: `env` is this call's env; `out` receives the new array.
  napi::check_status!(unsafe { sys::napi_create_array(env, &mut out) })?;
  let _window = external_memory::BatchWindow::open(env);
  thread::scope(|scope| {
    let _stop = StopOnDrop(&batch);
    spawn_workers(workers, |builder| {
      builder.spawn_scoped(scope, || batch.work()).map(|_| ())
    });
    collect_sync(env, &batch, out)
  })?;
  Ok(Raw(out))
}

/// The JS thread's part of a sync batch: take the results in order and make
/// their values; read a file itself while the next result is not ready.
fn collect_sync(env: sys::napi_env, batch: &Batch, out: sys::napi_value) -> napi::Result<()> {
  let mut taken = Vec::with_capacity(SCOPE_RESULTS);
  let mut index = 0u32;
  // Where the values this thread makes at once live, a scope's worth at a time.
  let mut inline: Option<HandleScope> = None;
  let mut spent = Vec::new();
  loop {
    let mut st = lock(&batch.state);
    batch.keep_spares(&mut st, &mut spent);
    // Strings are made a scope's worth at a time: between them this thread
    // keeps reading while it can, so one lock and one handle scope serve many files.
    let mut taken_bytes = 0;
    let over = loop {
      let before = taken.len();
      let over = batch.take_ready(&mut st, &mut taken, SCOPE_RESULTS - before);
      taken_bytes += taken[before..].iter().map(result_bytes).sum::<usize>();
      if over || taken.len() >= SCOPE_RESULTS || taken_bytes >= TAKEN_MAX_BYTES {
        break over;
      }
      if batch.may_claim(&st) {
        let claimed = st.claimed;
        st.claimed += 1;
        if claimed == st.emitted && taken.is_empty() {
          // The entry needed next: its value is made now, as a single read
          // makes it, and never waits in the ring.
          drop(st);
          if inline.as_ref().is_none_or(|scope| scope.values >= SCOPE_RESULTS) {
            drop(inline.take()); // closes the full one first
            inline = Some(HandleScope::open(env)?);
          }
          let failed = set_element_now(env, out, &mut index, batch, claimed)?;
          if let Some(scope) = inline.as_mut() {
            scope.values += 1;
          }
          st = lock(&batch.state);
          if batch.emitted_now(&mut st, failed) {
            break true;
          }
          continue;
        }
        drop(st);
        let outcome = batch.read(claimed);
        st = lock(&batch.state);
        batch.deposit(&mut st, claimed, outcome);
        continue;
      }
      if !taken.is_empty() {
        break false;
      }
      st.js_waiting = true;
      st = batch.ready.wait(st).unwrap_or_else(|e| e.into_inner());
      st.js_waiting = false;
    };
    drop(st);
    spent.drain(..).for_each(Text::give_back);
    inline = None;
    set_elements(env, out, &mut index, &mut taken, &mut spent)?;
    if over {
      return Ok(());
    }
  }
}

/// A handle scope, closed when dropped: the values made in it are then free
/// to be collected once nothing else holds them.
struct HandleScope {
  env: sys::napi_env,
  raw: sys::napi_handle_scope,
  /// Values made in it so far.
  values: usize,
}

impl HandleScope {
  fn open(env: sys::napi_env) -> napi::Result<Self> {
    let mut raw = ptr::null_mut();
    // SAFETY: `env` is the live env of the current call, on its JS thread.
    napi::check_status!(unsafe { sys::napi_open_handle_scope(env, &mut raw) })?;
    Ok(HandleScope { env, raw, values: 0 })
  }
}

impl Drop for HandleScope {
  fn drop(&mut self) {
    // SAFETY: `raw` was opened by `open` in this call, and every scope opened
    // after it is dropped before it (each where it was opened).
    unsafe { sys::napi_close_handle_scope(self.env, self.raw) };
  }
}

/// Reads entry `entry` (the next in list order) and stores its value in `out`
/// at `*index`, in the caller's handle scope; returns whether it failed with
/// an OS error.
fn set_element_now(
  env: sys::napi_env,
  out: sys::napi_value,
  index: &mut u32,
  batch: &Batch,
  entry: usize,
) -> napi::Result<bool> {
  let (reply, failed) = batch.read_now(env, entry);
  // SAFETY: `env` is the live env of this call, on its JS thread.
  let value = unsafe { Reply::to_napi_value(env, reply) }?;
  // SAFETY: `out` is a live array and `value` a live value of the current scope.
  napi::check_status!(unsafe { sys::napi_set_element(env, out, *index, value) })?;
  *index += 1;
  Ok(failed)
}

/// Makes the values of `taken` and stores them in `out` from `*index` on.
fn set_elements(
  env: sys::napi_env,
  out: sys::napi_value,
  index: &mut u32,
  taken: &mut Vec<Outcome>,
  spent: &mut Vec<Text>,
) -> napi::Result<()> {
  let _scope = HandleScope::open(env)?;
  let mut result = Ok(());
  for outcome in taken.drain(..) {
    if result.is_err() {
      continue; // the rest are dropped: nothing leaks
    }
    result = js_value(env, outcome, spent).and_then(|value| {
      // SAFETY: `out` is a live array and `value` a live value of this scope.
      napi::check_status!(unsafe { sys::napi_set_element(env, out, *index, value) })
    });
    *index += 1;
  }
  result
}

/// The JS handle of an async batch; cancels the batch if it is collected
/// before the batch is over.
pub struct BatchHandle(Arc<Batch>);

impl Drop for BatchHandle {
  fn drop(&mut self) {
    let mut st = lock(&self.0.state);
    self.0.stop(&mut st);
    if let Waker::Callback(wake) = &mut st.waker {
      wake.take();
    }
  }
}

/// `readFilesStart(paths, flags, concurrency, stopAtError, onReady)`: starts
/// an async batch on `concurrency` worker threads. `onReady()` is called on
/// the JS thread when results are ready to `readFilesTake`.
#[napi(js_name = "readFilesStart", ts_return_type = "ExternalObject<'batch'>")]
pub fn read_files_start(
  env: Env,
  paths: Array,
  flags: i32,
  concurrency: u32,
  stop_at_error: bool,
  on_ready: WakeFn,
) -> napi::Result<External<BatchHandle>> {
  let paths = collect_paths(env.raw(), &paths)?;
  let workers = (concurrency.clamp(1, MAX_THREADS) as usize).min(paths.len());
  let batch = Arc::new(Batch::new(
    paths,
    Reading::new(flags, workers, concurrency),
    workers,
    // As readFileUtf8Async: fs.promises answers for files of kMaxLength bytes or more.
    FS_ANSWERS,
    stop_at_error,
    Waker::Callback(Some(on_ready)),
  ));
  let started = spawn_workers(workers, |builder| {
    let batch = Arc::clone(&batch);
    builder.spawn(move || batch.work()).map(|_| ())
  });
  if started == 0 {
    // (lib/batch.js never starts an empty batch.)
    return Err(napi::Error::from_reason("readfile-utf8: could not start a thread"));
  }
  Ok(External::new(BatchHandle(batch)))
}

/// `readFilesTake(handle, out)`: stores the values of the results ready in
/// list order into `out` (from where the last call stopped); returns true once
/// the batch is over (then `out` ends at the first OS error if asked to).
#[napi(js_name = "readFilesTake")]
pub fn read_files_take(env: Env, handle: &External<BatchHandle>, out: Array) -> napi::Result<bool> {
  let batch = &handle.0;
  let mut taken = Vec::new();
  let (over, mut index) = {
    let mut st = lock(&batch.state);
    st.wake_queued = false;
    let index = st.emitted as u32;
    let over = batch.take_ready(&mut st, &mut taken, usize::MAX);
    if over {
      // Released now, so that it no longer keeps the event loop alive.
      if let Waker::Callback(wake) = &mut st.waker {
        wake.take();
      }
    }
    (over, index)
  };
  let mut spent = Vec::new();
  let made = set_elements(env.raw(), out.raw(), &mut index, &mut taken, &mut spent);
  batch.keep_spares(&mut lock(&batch.state), &mut spent);
  spent.into_iter().for_each(Text::give_back);
  made?;
  Ok(over)
}

/// `readFilesSettle()`: reports to V8's GC the external strings' bytes that
/// the last `readFiles` still owes (lib/batch.js calls it in a microtask).
#[napi(js_name = "readFilesSettle")]
pub fn read_files_settle(env: Env) {
  external_memory::report_ended_batches(env.raw());
}

/// `readFilesCancel(handle)`: no further file is started; the threadsafe
/// function is released, so the batch no longer keeps the event loop alive.
#[napi(js_name = "readFilesCancel")]
pub fn read_files_cancel(handle: &External<BatchHandle>) {
  let mut st = lock(&handle.0.state);
  handle.0.stop(&mut st);
  if let Waker::Callback(wake) = &mut st.waker {
    wake.take();
  }
}

/// `readFilesLength(paths, flags, concurrency)`: the batch's read step alone,
/// what its scaling is compared with: every file read on `concurrency`
/// threads (this one included), each thread into one buffer reused for all
/// its files, nothing converted, no string made, no ring. Returns the bytes
/// read; failed entries count nothing. Only in the bench build.
#[cfg(feature = "bench")]
#[napi(js_name = "readFilesLength")]
pub fn read_files_length(env: Env, paths: Array, flags: i32, concurrency: u32) -> napi::Result<f64> {
  use std::sync::atomic::{AtomicUsize, Ordering};

  let paths = collect_paths(env.raw(), &paths)?;
  let threads = (concurrency.clamp(1, MAX_THREADS) as usize).min(paths.len().max(1));
  let how = Reading::new(flags, threads, concurrency);
  let next = AtomicUsize::new(0);
  let read_all = || {
    let mut buf = Vec::new();
    let mut total = 0;
    loop {
      let index = next.fetch_add(1, Ordering::Relaxed);
      if index >= paths.len() {
        buffers::give(buf);
        return total;
      }
      if let Some(path) = paths.get(index) {
        if read_file(path, how)(&mut buf).is_ok() {
          total += buf.len();
        }
      }
    }
  };
  let total = thread::scope(|scope| {
    let others: Vec<_> = (1..threads).map(|_| scope.spawn(read_all)).collect();
    let mine = read_all();
    mine + others.into_iter().map(|other| other.join().unwrap_or(0)).sum::<usize>()
  });
  Ok(total as f64)
}

#[cfg(all(test, unix))]
mod tests {
  use std::os::unix::ffi::OsStrExt;

  use super::*;

  /// A sync batch run without JS: one reader thread, and this thread taking
  /// the results in order as the JS thread does, every buffer then spent.
  #[test]
  fn spares_stay_bounded_reused_buffers_hold_the_right_text_and_none_outlive_the_reads() {
    let dir = std::env::temp_dir().join(format!("readfile-utf8-spares-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let count = 700;
    let mut paths = Paths {
      bytes: Vec::new(),
      spans: Vec::new(),
    };
    for i in 0..count {
      let path = dir.join(format!("{i}.txt"));
      std::fs::write(&path, "é".repeat(i % 300)).unwrap();
      let start = paths.bytes.len();
      paths.bytes.extend_from_slice(path.as_os_str().as_bytes());
      paths.spans.push((start, paths.bytes.len()));
    }
    let batch = Batch::new(paths, Reading::new(0, 2, 2), 1, STRING_TOO_LONG, false, Waker::Condvar);
    let (mut taken, mut spent, mut made) = (Vec::new(), Vec::new(), 0);
    thread::scope(|scope| {
      scope.spawn(|| batch.work());
      loop {
        let mut st = lock(&batch.state);
        batch.keep_spares(&mut st, &mut spent);
        assert!(st.spares.len() <= SPARES_MAX, "{} spares", st.spares.len());
        let over = batch.take_ready(&mut st, &mut taken, usize::MAX);
        if over {
          batch.keep_spares(&mut st, &mut spent);
          assert!(st.spares.is_empty(), "spares kept with no file left to read");
        } else if taken.is_empty() {
          st.js_waiting = true;
          drop(batch.ready.wait_timeout(st, Duration::from_millis(50)).unwrap());
          continue;
        }
        drop(st);
        for outcome in taken.drain(..) {
          let Outcome::Text(Text::Latin1(units)) = outcome else {
            panic!("entry {made}: not Latin-1 text");
          };
          assert_eq!(units, vec![0xe9; made % 300], "entry {made}");
          if buffers::is_kept_locally(&units) {
            spent.push(Text::Latin1(units));
          }
          made += 1;
        }
        if over {
          break;
        }
      }
    });
    assert_eq!(made, count);
    std::fs::remove_dir_all(&dir).unwrap();
  }
}
