//! `readFilesUtf8` / `readFilesUtf8Async`: a list of files read by several
//! threads at once, each file through the single read's pipeline (read →
//! classify → transcode), the JS strings made on the JS thread in list order.
//!
//! Reader threads take the next index from a shared counter, read and decode
//! that file and leave the result in a ring of slots; the JS thread takes the
//! results in order and makes their strings. A reader takes no index beyond
//! the ring's reach, nor while the results waiting for the JS thread hold more
//! than `PENDING_MAX_BYTES`: however long the list, memory holds the strings
//! made so far plus a bounded working set.
//!
//! Sync: the calling thread reads too (the entry it needs next it reads and
//! makes at once), and each call (`readFilesNext`) returns at the first entry
//! that is not a string, which lib/batch.js then has fs answer before it goes
//! on or stops. A sync batch has a loop's side effects: what its readers read
//! ahead of the JS thread depends on `Ahead`, and once the caller stops
//! (`readFilesCancel`), the call returns at once: readers still busy end on
//! their own, their reads stopped between chunks. Async: every entry is read,
//! as `Promise.all` over `fs.promises.readFile` starts every read, and the
//! readers wake the JS thread through a threadsafe function, whose JS
//! callback calls `readFilesTake`.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use napi::bindgen_prelude::{Array, External, ToNapiValue};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{sys, Env, JsValue, Status};
use napi_derive::napi;

use crate::external_memory;
use crate::js_string::{self, Maker, Outcome, Reply, FS_ANSWERS, STRING_TOO_LONG};
use crate::limits::{
  BATCH_MAX_THREADS as MAX_THREADS, BATCH_PENDING_MAX_BYTES as PENDING_MAX_BYTES, BATCH_RUN,
  BATCH_SPARES as SPARES_MAX, BATCH_WINDOW as WINDOW, LOCAL_KEEP,
};

/// Results taken out of the ring (no longer counted in the pending bytes)
/// whose strings the JS thread makes before it reads any further.
const TAKEN_MAX_BYTES: usize = PENDING_MAX_BYTES / 4;
/// Small buffers of each element type a batch's readers keep between them.
const READERS_KEEP: usize = SPARES_MAX / 2;
/// Spent buffers a reader takes with each file it claims: a read buffer and
/// a conversion's output, for this file and the next.
const SPARES_PER_CLAIM: usize = 2 * LOCAL_KEEP;
use crate::read::{ReadError, ReadFacts};
use crate::transcode::Text;
use crate::{buffers, pipeline, read};

// ---- The single-read pipeline, as the batch uses it. ----

/// Which entries a batch's readers may read before the JS thread needs them.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ahead {
  /// None: the flags can create, truncate or append, so entries are opened
  /// one by one in list order, as a loop opens them.
  Nothing,
  /// Regular files only, found by a stat before any open: a sync batch that
  /// throws at its first failure must not have opened a FIFO or a device
  /// past it (nor wait for one), which a loop would never have reached.
  RegularFiles,
  /// Every entry: each is read whatever the others give (errors returned in
  /// place, or an async batch).
  Everything,
}

impl Ahead {
  /// From lib/batch.js's number: 0, 1 or 2 as above.
  fn from_js(ahead: u32) -> Self {
    match ahead {
      0 => Ahead::Nothing,
      1 => Ahead::RegularFiles,
      _ => Ahead::Everything,
    }
  }
}

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

  fn facts(self, facts: ReadFacts) -> ReadFacts {
    if self.alone {
      facts.read_alone()
    } else {
      facts
    }
  }
}

/// The read step of one entry in list order: the file at `path`, on the
/// calling thread alone (the other cores are busy with the other files),
/// stopped between chunks once `cancel` is set; one of kMaxLength bytes or
/// more is not read (`ReadError::TooLarge`).
fn read_file<'a>(
  path: &'a [u8],
  how: Reading,
  cancel: &'a AtomicBool,
) -> impl FnOnce(&mut Vec<u8>) -> Result<ReadFacts, ReadError> + 'a {
  move |buf| {
    read::with_terminated(path, |path| {
      read::read_path_cancellable_into(path, how.flags, cancel, buf)
    })
    .map(|f| how.facts(f))
  }
}

/// What a reader made of an entry.
enum Done {
  /// Read (the code units, or the failure code the single read returns).
  Read(Outcome),
  /// Not opened: not a regular file, read ahead of its turn
  /// (`Ahead::RegularFiles`); the JS thread reads it in list order.
  InOrder,
}

/// Reads and decodes the file at `path` off the JS thread: its code units, or
/// the failure code the single read would return (`too_large` for a file of
/// kMaxLength bytes or more). Ahead of the JS thread with
/// `Ahead::RegularFiles`, anything but a regular file is left `InOrder`.
fn read_one(path: &[u8], how: Reading, ahead: Ahead, cancel: &AtomicBool, too_large: i32) -> Done {
  if ahead != Ahead::RegularFiles {
    return Done::Read(pipeline::read_to_outcome(read_file(path, how, cancel), too_large));
  }
  let mut regular = true;
  let read_if_regular = |buf: &mut Vec<u8>| {
    let facts = read::with_terminated(path, |path| read::read_path_ahead_into(path, how.flags, cancel, buf))?;
    regular = facts.is_some();
    Ok(how.facts(facts.unwrap_or_default()))
  };
  let outcome = pipeline::read_to_outcome(read_if_regular, too_large);
  if regular {
    Done::Read(outcome)
  } else {
    Done::InOrder
  }
}

/// Reads and decodes the file at `path` on the JS thread and makes its value
/// at once, from this thread's reused buffers as a single read does: for the
/// entry a sync batch needs next, which then never waits in the ring. Its
/// string is made as the readers' are, so every entry of a batch is alike.
fn read_value_now(env: sys::napi_env, path: &[u8], how: Reading) -> Reply {
  pipeline::read_to_string(env, read_file(path, how, &read::NEVER_CANCELLED), Maker::AfterWork)
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
  slots: Vec<Option<Done>>,
  /// Bytes held by the results in `slots`.
  pending_bytes: usize,
  /// No reader takes another index: the batch is over or was stopped.
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
  ahead: Ahead,
  /// The failure code for a file of kMaxLength bytes or more (see `read_one`).
  too_large: i32,
  /// How many reader threads it starts (the JS thread not counted).
  readers: usize,
  /// Set when the batch stops: reads in progress stop at their next chunk.
  cancel: AtomicBool,
  state: Mutex<State>,
  /// Signalled when the result the JS thread waits for is ready (sync).
  ready: Condvar,
  /// Signalled when readers may take indices again.
  room: Condvar,
  /// The readers, joined when a sync batch is over (they are ending then);
  /// never waited for when it stops early, which must return at once.
  threads: Mutex<Vec<JoinHandle<()>>>,
}

/// Locks `m`, whether or not a thread panicked while holding it: no section
/// under this lock can leave the state half-updated.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
  m.lock().unwrap_or_else(|e| e.into_inner())
}

fn result_bytes(done: &Done) -> usize {
  match done {
    Done::Read(Outcome::Text(Text::Latin1(v))) => v.capacity(),
    Done::Read(Outcome::Text(Text::Utf16(v))) => v.capacity() * 2,
    _ => 0,
  }
}

/// Whether the JS thread must stop at this result: anything but text (a
/// failure for lib/batch.js to have fs answer, or an entry to read in order).
fn ends_a_run(done: &Done) -> bool {
  !matches!(done, Done::Read(Outcome::Text(_)))
}

impl Batch {
  fn new(paths: Paths, reading: Reading, ahead: Ahead, readers: usize, too_large: i32, waker: Waker) -> Self {
    let window = paths.len().clamp(1, WINDOW);
    Batch {
      readers,
      paths,
      reading,
      ahead,
      too_large,
      cancel: AtomicBool::new(false),
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
      threads: Mutex::new(Vec::new()),
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

  /// `read` run on the path of entry `index`; `None` (fs answers: JS then
  /// reads that entry) for an entry JS reads itself, or if `read` panicked.
  fn on_path<R>(&self, index: usize, read: impl FnOnce(&[u8]) -> R) -> Option<R> {
    let path = self.paths.get(index)?;
    catch_unwind(AssertUnwindSafe(|| read(path))).ok()
  }

  /// Reads entry `index` ahead of (or beside) the JS thread, on any thread.
  fn read_ahead(&self, index: usize) -> Done {
    self
      .on_path(index, |path| {
        read_one(path, self.reading, self.ahead, &self.cancel, self.too_large)
      })
      .unwrap_or(Done::Read(Outcome::Failure(FS_ANSWERS)))
  }

  /// Reads entry `index`, the next in list order, on the JS thread and makes
  /// its value (see `read_value_now`).
  fn read_now(&self, env: sys::napi_env, index: usize) -> Reply {
    self
      .on_path(index, |path| read_value_now(env, path, self.reading))
      .unwrap_or(Reply::Outcome(Outcome::Failure(FS_ANSWERS)))
  }

  /// Moves `ready_end` past the results ready in list order from it on.
  fn extend_ready(&self, st: &mut State) {
    let window = st.slots.len();
    while st.ready_end < self.len() && st.ready_end < st.emitted + window && st.slots[st.ready_end % window].is_some() {
      st.ready_end += 1;
    }
  }

  /// Records that the JS thread made the value of entry `emitted` itself.
  fn emitted_now(&self, st: &mut State) {
    st.emitted += 1;
    if st.ready_end < st.emitted {
      st.ready_end = st.emitted;
      self.extend_ready(st);
    }
    if st.workers_waiting > 0 {
      self.room.notify_all();
    }
  }

  /// Stores a finished result; wakes the JS thread if it extends the run of
  /// results ready in list order (async: once that run is worth a wake-up).
  fn deposit(&self, st: &mut State, index: usize, done: Done) {
    if st.stop {
      return; // nobody takes it: dropped here
    }
    st.pending_bytes += result_bytes(&done);
    let window = st.slots.len();
    st.slots[index % window] = Some(done);
    if index != st.ready_end {
      return;
    }
    self.extend_ready(st);
    self.wake_js(st, false);
  }

  /// Tells the JS thread that results are ready in list order. Async, a
  /// wake-up costs the JS thread a callback: one per `BATCH_RUN` results,
  /// unless `now` (a reader is about to wait for room) or no file is left to
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
        let worth_it = now || st.ready_end - st.emitted >= BATCH_RUN || st.claimed >= self.len();
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

  /// No reader takes another index, reads in progress stop at their next
  /// chunk, and results not taken are dropped.
  fn stop(&self, st: &mut State) {
    st.stop = true;
    self.cancel.store(true, Ordering::Relaxed);
    st.spares.clear();
    st.slots.iter_mut().for_each(|slot| drop(slot.take()));
    st.pending_bytes = 0;
    self.room.notify_all();
    if let Waker::Callback(wake) = &mut st.waker {
      wake.take();
    }
  }

  /// A reader thread's loop: take an index, read it, store the result.
  fn work(&self) {
    buffers::keep_locally((READERS_KEEP / self.readers.max(1)).max(LOCAL_KEEP));
    let mut finished: Option<(usize, Done)> = None;
    let mut spares = Vec::new();
    loop {
      let mut st = lock(&self.state);
      if let Some((index, done)) = finished.take() {
        self.deposit(&mut st, index, done);
      }
      while !self.may_claim(&st) {
        if st.stop || st.claimed >= self.len() {
          return;
        }
        // The JS thread must drain for room to come.
        self.wake_js(&mut st, true);
        st.workers_waiting += 1;
        // A timeout too, so that a reader whose JS environment went away
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
      finished = Some((index, self.read_ahead(index)));
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

  /// Moves the results ready in list order (up to `max`) into `out`, with
  /// their indices, stopping after one that is not text when `stop_at_any`
  /// (sync: lib/batch.js handles it before the batch goes on).
  fn take_ready(&self, st: &mut State, out: &mut Vec<(usize, Done)>, max: usize, stop_at_any: bool) {
    let before = out.len();
    while out.len() - before < max && st.emitted < self.len() {
      let slot = st.emitted % st.slots.len();
      let Some(done) = st.slots[slot].take() else {
        break;
      };
      st.pending_bytes -= result_bytes(&done);
      let ends = stop_at_any && ends_a_run(&done);
      out.push((st.emitted, done));
      st.emitted += 1;
      if ends {
        break;
      }
    }
    if out.len() > before && st.workers_waiting > 0 {
      self.room.notify_all();
    }
  }

  /// Starts up to `count` reader threads on `batch`, keeping their handles.
  fn start_readers(batch: &Arc<Batch>, count: usize) -> usize {
    let mut threads = lock(&batch.threads);
    for _ in 0..count {
      let reader = Arc::clone(batch);
      let builder = thread::Builder::new().name("readfile-utf8-batch".into());
      match builder.spawn(move || reader.work()) {
        Ok(handle) => threads.push(handle),
        Err(_) => break,
      }
    }
    threads.len()
  }

  /// Ends the batch: readers are told to stop; with `wait`, they are joined
  /// (a batch that is over: they are ending anyway); otherwise they end on
  /// their own, after their current read.
  fn end(&self, wait: bool) {
    self.stop(&mut lock(&self.state));
    let threads = std::mem::take(&mut *lock(&self.threads));
    if wait {
      threads.into_iter().for_each(|t| drop(t.join()));
    }
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

/// The JS handle of a batch; stops the batch (without waiting for its
/// readers) if it is collected before the batch is over.
pub struct BatchHandle(Arc<Batch>);

impl Drop for BatchHandle {
  fn drop(&mut self) {
    self.0.end(false);
  }
}

/// `readFilesOpen(paths, flags, concurrency, ahead)`: a sync batch of
/// `concurrency` threads in all, the JS thread included; `ahead` (0, 1, 2)
/// says what its readers may read before the JS thread needs it (`Ahead`).
/// `readFilesNext` takes its results.
#[napi(js_name = "readFilesOpen", ts_return_type = "ExternalObject<'batch'>")]
pub fn read_files_open(
  env: Env,
  paths: Array,
  flags: i32,
  concurrency: u32,
  ahead: u32,
) -> napi::Result<External<BatchHandle>> {
  let paths = collect_paths(env.raw(), &paths)?;
  let ahead = Ahead::from_js(ahead);
  let readers = match ahead {
    Ahead::Nothing => 0,
    _ => (concurrency.clamp(1, MAX_THREADS) as usize - 1).min(paths.len().saturating_sub(1)),
  };
  let batch = Arc::new(Batch::new(
    paths,
    Reading::new(flags, readers + 1, concurrency),
    ahead,
    readers,
    STRING_TOO_LONG,
    Waker::Condvar,
  ));
  Batch::start_readers(&batch, readers);
  Ok(External::new(BatchHandle(batch)))
}

/// `readFilesNext(handle, out)`: makes the values of the sync batch's next
/// entries and stores them in `out` at their indices, up to the first entry
/// that is not a string (its failure code is stored instead): returns that
/// entry's index, or the list's length once every entry is a string. The next
/// call goes on after that entry.
#[napi(js_name = "readFilesNext")]
pub fn read_files_next(env: Env, handle: &External<BatchHandle>, out: Array) -> napi::Result<u32> {
  let env = env.raw();
  let batch = &handle.0;
  let _window = external_memory::BatchWindow::open(env);
  let stopped_at = next_sync(env, batch, out.raw())?;
  if stopped_at >= batch.len() {
    batch.end(true);
  }
  Ok(stopped_at as u32)
}

/// The JS thread's part of a sync batch: takes the results in order and makes
/// their values; reads a file itself while the next result is not ready.
/// Returns the index of the first entry that is not a string, or the length.
fn next_sync(env: sys::napi_env, batch: &Batch, out: sys::napi_value) -> napi::Result<usize> {
  let mut taken = Vec::with_capacity(BATCH_RUN);
  let mut spent = Vec::new();
  loop {
    let mut st = lock(&batch.state);
    batch.keep_spares(&mut st, &mut spent);
    if st.emitted >= batch.len() {
      return Ok(batch.len());
    }
    // The entry needed next, if no reader has it: read and made now, as a
    // single read makes it, never waiting in the ring.
    if taken.is_empty() && st.claimed == st.emitted && batch.may_claim(&st) {
      let index = st.claimed;
      st.claimed += 1;
      drop(st);
      let made = made_now(env, batch, out, index)?;
      batch.emitted_now(&mut lock(&batch.state));
      if !made {
        return Ok(index);
      }
      continue;
    }
    // Strings are made a scope's worth at a time: meanwhile this thread reads
    // ahead while it can, so one lock and one handle scope serve many files.
    let mut taken_bytes = 0;
    loop {
      let before = taken.len();
      batch.take_ready(&mut st, &mut taken, BATCH_RUN - before, true);
      taken_bytes += taken[before..]
        .iter()
        .map(|(_, done)| result_bytes(done))
        .sum::<usize>();
      let run_ended = taken.last().is_some_and(|(_, done)| ends_a_run(done));
      if run_ended || st.emitted >= batch.len() || taken.len() >= BATCH_RUN || taken_bytes >= TAKEN_MAX_BYTES {
        break;
      }
      if batch.may_claim(&st) && st.claimed > st.emitted {
        let index = st.claimed;
        st.claimed += 1;
        drop(st);
        let done = batch.read_ahead(index);
        st = lock(&batch.state);
        batch.deposit(&mut st, index, done);
        continue;
      }
      if !taken.is_empty() || (st.claimed == st.emitted && batch.may_claim(&st)) {
        break;
      }
      st.js_waiting = true;
      st = batch.ready.wait(st).unwrap_or_else(|e| e.into_inner());
      st.js_waiting = false;
    }
    drop(st);
    spent.drain(..).for_each(Text::give_back);
    if let Some(stopped_at) = set_elements(env, batch, out, &mut taken, &mut spent)? {
      return Ok(stopped_at);
    }
  }
}

/// Reads entry `index` on the JS thread, in list order, and stores its value
/// in `out`; returns whether it is a string.
fn made_now(env: sys::napi_env, batch: &Batch, out: sys::napi_value, index: usize) -> napi::Result<bool> {
  let _scope = HandleScope::open(env)?;
  let reply = batch.read_now(env, index);
  let made = !matches!(reply, Reply::Outcome(Outcome::Failure(_)));
  // SAFETY: `env` is the live env of this call, on its JS thread.
  let value = unsafe { Reply::to_napi_value(env, reply) }?;
  set_element(env, out, index, value)?;
  Ok(made)
}

/// Makes the values of `taken` and stores them in `out` at their indices, the
/// entries left `InOrder` read now; returns the index of the first that is
/// not a string, if one is (sync: the last taken, see `take_ready`).
fn set_elements(
  env: sys::napi_env,
  batch: &Batch,
  out: sys::napi_value,
  taken: &mut Vec<(usize, Done)>,
  spent: &mut Vec<Text>,
) -> napi::Result<Option<usize>> {
  let _scope = HandleScope::open(env)?;
  let mut first_not_made = None;
  for (index, done) in taken.drain(..) {
    let made = match done {
      Done::Read(outcome) => {
        let made = !matches!(outcome, Outcome::Failure(_));
        js_value(env, outcome, spent).and_then(|value| set_element(env, out, index, value))?;
        made
      }
      Done::InOrder => made_now(env, batch, out, index)?,
    };
    if !made {
      first_not_made = first_not_made.or(Some(index));
    }
  }
  Ok(first_not_made)
}

fn set_element(env: sys::napi_env, out: sys::napi_value, index: usize, value: sys::napi_value) -> napi::Result<()> {
  // SAFETY: `out` is a live array and `value` a live value of the current scope.
  napi::check_status!(unsafe { sys::napi_set_element(env, out, index as u32, value) })
}

/// A handle scope, closed when dropped: the values made in it are then free
/// to be collected once nothing else holds them.
struct HandleScope {
  env: sys::napi_env,
  raw: sys::napi_handle_scope,
}

impl HandleScope {
  fn open(env: sys::napi_env) -> napi::Result<Self> {
    let mut raw = ptr::null_mut();
    // SAFETY: `env` is the live env of the current call, on its JS thread.
    napi::check_status!(unsafe { sys::napi_open_handle_scope(env, &mut raw) })?;
    Ok(HandleScope { env, raw })
  }
}

impl Drop for HandleScope {
  fn drop(&mut self) {
    // SAFETY: `raw` was opened by `open` in this call, and every scope opened
    // after it is dropped before it (each where it was opened).
    unsafe { sys::napi_close_handle_scope(self.env, self.raw) };
  }
}

/// `readFilesStart(paths, flags, concurrency, onReady)`: starts an async
/// batch on `concurrency` reader threads, which read every entry. `onReady()`
/// is called on the JS thread when results are ready to `readFilesTake`.
#[napi(js_name = "readFilesStart", ts_return_type = "ExternalObject<'batch'>")]
pub fn read_files_start(
  env: Env,
  paths: Array,
  flags: i32,
  concurrency: u32,
  on_ready: WakeFn,
) -> napi::Result<External<BatchHandle>> {
  let paths = collect_paths(env.raw(), &paths)?;
  let readers = (concurrency.clamp(1, MAX_THREADS) as usize).min(paths.len());
  let batch = Arc::new(Batch::new(
    paths,
    Reading::new(flags, readers, concurrency),
    Ahead::Everything,
    readers,
    // As readFileUtf8Async: fs.promises answers for files of kMaxLength bytes or more.
    FS_ANSWERS,
    Waker::Callback(Some(on_ready)),
  ));
  if Batch::start_readers(&batch, readers) == 0 {
    // (lib/batch.js never starts an empty batch.)
    return Err(napi::Error::from_reason("readfile-utf8: could not start a thread"));
  }
  Ok(External::new(BatchHandle(batch)))
}

/// `readFilesTake(handle, out)`: stores the values of the results ready in
/// list order into `out` (from where the last call stopped): strings, and
/// failure codes for lib/batch.js to have fs answer; returns true once every
/// entry is in.
#[napi(js_name = "readFilesTake")]
pub fn read_files_take(env: Env, handle: &External<BatchHandle>, out: Array) -> napi::Result<bool> {
  let batch = &handle.0;
  let mut taken = Vec::new();
  let over = {
    let mut st = lock(&batch.state);
    st.wake_queued = false;
    batch.take_ready(&mut st, &mut taken, usize::MAX, false);
    st.emitted >= batch.len()
  };
  if over {
    // Released now, so that it no longer keeps the event loop alive; the
    // readers are ending.
    batch.end(false);
  }
  let mut spent = Vec::new();
  let made = set_elements(env.raw(), batch, out.raw(), &mut taken, &mut spent);
  batch.keep_spares(&mut lock(&batch.state), &mut spent);
  spent.into_iter().for_each(Text::give_back);
  made?;
  Ok(over)
}

/// `readFilesSettle()`: reports to V8's GC the external strings' bytes that
/// the last sync batch still owes (lib/batch.js calls it in a microtask).
#[napi(js_name = "readFilesSettle")]
pub fn read_files_settle(env: Env) {
  external_memory::report_ended_batches(env.raw());
}

/// `readFilesCancel(handle)`: the batch stops (a sync one that threw, an
/// async one aborted): no further file is started, reads in progress stop at
/// their next chunk, and nothing waits for them. Does nothing to a batch
/// that is over.
#[napi(js_name = "readFilesCancel")]
pub fn read_files_cancel(handle: &External<BatchHandle>) {
  handle.0.end(false);
}

/// `readFilesLength(paths, flags, concurrency)`: the batch's read step alone,
/// what its scaling is compared with: every file read on `concurrency`
/// threads (this one included), each thread into one buffer reused for all
/// its files, nothing converted, no string made, no ring. Returns the bytes
/// read; failed entries count nothing. Only in the bench build.
#[cfg(feature = "bench")]
#[napi(js_name = "readFilesLength")]
pub fn read_files_length(env: Env, paths: Array, flags: i32, concurrency: u32) -> napi::Result<f64> {
  use std::sync::atomic::AtomicUsize;

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
        if read_file(path, how, &read::NEVER_CANCELLED)(&mut buf).is_ok() {
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

  fn paths_of(files: &[std::path::PathBuf]) -> Paths {
    let mut paths = Paths {
      bytes: Vec::new(),
      spans: Vec::new(),
    };
    for path in files {
      let start = paths.bytes.len();
      paths.bytes.extend_from_slice(path.as_os_str().as_bytes());
      paths.spans.push((start, paths.bytes.len()));
    }
    paths
  }

  /// Takes every result of `batch` as the JS thread does, without JS: waits
  /// for the next one whenever none is ready.
  fn take_all(batch: &Batch, mut each: impl FnMut(usize, Done, &mut Vec<Text>)) {
    let (mut taken, mut spent) = (Vec::new(), Vec::new());
    loop {
      let mut st = lock(&batch.state);
      batch.keep_spares(&mut st, &mut spent);
      assert!(st.spares.len() <= SPARES_MAX, "{} spares", st.spares.len());
      batch.take_ready(&mut st, &mut taken, usize::MAX, false);
      let over = st.emitted >= batch.len();
      if over {
        batch.keep_spares(&mut st, &mut spent);
        assert!(st.spares.is_empty(), "spares kept with no file left to read");
      } else if taken.is_empty() {
        st.js_waiting = true;
        drop(batch.ready.wait_timeout(st, Duration::from_millis(50)).unwrap());
        continue;
      }
      drop(st);
      for (index, done) in taken.drain(..) {
        each(index, done, &mut spent);
      }
      if over {
        return;
      }
    }
  }

  /// A batch run without JS: one reader thread, and this thread taking the
  /// results in order as the JS thread does, every buffer then spent.
  #[test]
  fn spares_stay_bounded_reused_buffers_hold_the_right_text_and_none_outlive_the_reads() {
    let dir = std::env::temp_dir().join(format!("readfile-utf8-spares-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let count = 700;
    let files: Vec<_> = (0..count)
      .map(|i| {
        let path = dir.join(format!("{i}.txt"));
        std::fs::write(&path, "é".repeat(i % 300)).unwrap();
        path
      })
      .collect();
    let batch = Arc::new(Batch::new(
      paths_of(&files),
      Reading::new(0, 2, 2),
      Ahead::Everything,
      1,
      STRING_TOO_LONG,
      Waker::Condvar,
    ));
    assert_eq!(Batch::start_readers(&batch, 1), 1);
    let mut made = 0;
    take_all(&batch, |index, done, spent| {
      let Done::Read(Outcome::Text(Text::Latin1(units))) = done else {
        panic!("entry {index}: not Latin-1 text");
      };
      assert_eq!(units, vec![0xe9; index % 300], "entry {index}");
      if buffers::is_kept_locally(&units) {
        spent.push(Text::Latin1(units));
      }
      made += 1;
    });
    assert_eq!(made, count);
    batch.end(true);
    std::fs::remove_dir_all(&dir).unwrap();
  }

  /// Reading ahead with `Ahead::RegularFiles`, a FIFO is neither opened nor
  /// waited for: it is left to the JS thread, in list order.
  #[test]
  fn read_ahead_of_regular_files_only_leaves_a_fifo_unopened() {
    let dir = std::env::temp_dir().join(format!("readfile-utf8-ahead-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("a.txt");
    std::fs::write(&file, "text").unwrap();
    let fifo = dir.join("fifo");
    let c_fifo = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_fifo.as_ptr(), 0o600) }, 0);
    let missing = dir.join("missing");
    let batch = Batch::new(
      paths_of(&[file, fifo.clone(), missing]),
      Reading::new(0, 2, 2),
      Ahead::RegularFiles,
      0,
      STRING_TOO_LONG,
      Waker::Condvar,
    );
    // A FIFO that no writer opens: an open of it would block for ever.
    assert!(matches!(batch.read_ahead(1), Done::InOrder));
    assert!(matches!(batch.read_ahead(0), Done::Read(Outcome::Text(Text::Latin1(ref t))) if t == b"text"));
    assert!(matches!(batch.read_ahead(2), Done::Read(Outcome::Failure(FS_ANSWERS))));
    // No writer was let through: a non-blocking open for writing finds no reader.
    let writer = std::fs::OpenOptions::new()
      .write(true)
      .custom_flags(libc::O_NONBLOCK)
      .open(&fifo);
    assert_eq!(writer.unwrap_err().raw_os_error(), Some(libc::ENXIO));
    std::fs::remove_dir_all(&dir).unwrap();
  }

  use std::os::unix::fs::OpenOptionsExt;
}
