//! The ring of a batch and its reader threads: readers take the next index
//! from a shared counter, read and decode that file (`entry`) and leave the
//! result in a ring of slots; the JS thread takes the results in list order
//! and makes their strings. A reader takes no index beyond the ring's reach
//! (`BATCH_WINDOW`), nor while the results waiting for the JS thread hold
//! `BATCH_PENDING_MAX_BYTES` or more: however long the list, memory holds the
//! strings made so far plus a bounded working set.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};

use napi::sys;

use super::entry::{read_one, read_value_now, Ahead, Done, Reading};
use crate::buffers;
use crate::exports::args::Paths;
use crate::js_string::Reply;
use crate::limits::tuned;
use crate::outcome::{Outcome, Text, FS_ANSWERS};

/// At most this many results wait for the JS thread (`BATCH_WINDOW`).
fn window() -> usize {
  tuned!(BATCH_WINDOW)
}

/// Readers start no new file past this many bytes waiting
/// (`BATCH_PENDING_MAX_BYTES`).
fn pending_max_bytes() -> usize {
  tuned!(BATCH_PENDING_MAX_BYTES)
}

/// Spent buffers the JS thread holds out for the readers (`BATCH_SPARES`).
pub(super) fn spares_max() -> usize {
  tuned!(BATCH_SPARES)
}

/// Results the JS thread makes into strings at a time (`BATCH_RUN`), per
/// handle scope: a list of 10^5 files does not hold 10^5 handles at once.
pub(super) fn batch_run() -> usize {
  tuned!(BATCH_RUN).min(window())
}

/// Results taken out of the ring (no longer counted in the pending bytes)
/// whose strings the JS thread makes before it reads any further: a run's
/// share of the ring's bytes, as a run is a share of its slots.
pub(super) fn taken_max_bytes() -> usize {
  pending_max_bytes() / (window() / batch_run()).max(1)
}

/// Spent buffers a reader takes with each file it claims: a read buffer and
/// a conversion's output, for this file and the next.
fn spares_per_claim() -> usize {
  2 * buffers::LOCAL_KEEP
}

pub(super) struct State {
  /// The next index a reader takes.
  pub(super) claimed: usize,
  /// The next index the JS thread takes.
  pub(super) emitted: usize,
  /// Finished results, at `index % slots.len()`, from `emitted` on.
  pub(super) slots: Vec<Option<Done>>,
  /// Bytes held by the results in `slots`.
  pub(super) pending_bytes: usize,
  /// No reader takes another index: the batch is over or was stopped.
  pub(super) stop: bool,
  pub(super) js_waiting: bool,
  pub(super) workers_waiting: usize,
  /// The first index from `emitted` on whose result is not ready yet.
  pub(super) ready_end: usize,
  /// Small buffers the JS thread copied strings out of, for the readers' next
  /// files: reused there, they spare a malloc on the reader and a free on the
  /// JS thread into the reader's arena, whose lock the two then fight over.
  /// Empty once no reader will claim another file.
  pub(super) spares: Vec<Text>,
}

pub(super) struct Batch {
  pub(super) paths: Paths,
  pub(super) reading: Reading,
  pub(super) ahead: Ahead,
  /// The failure code for a file of kMaxLength bytes or more (see `read_one`).
  pub(super) too_large: i32,
  /// How many reader threads it starts (the JS thread not counted).
  pub(super) readers: usize,
  /// Set when the batch stops: reads in progress stop at their next chunk.
  pub(super) cancel: AtomicBool,
  pub(super) state: Mutex<State>,
  /// Signalled when the result the JS thread waits for is ready (sync).
  pub(super) ready: Condvar,
  /// Signalled when readers may take indices again.
  pub(super) room: Condvar,
  /// The readers, joined when a sync batch is over (they are ending then);
  /// never waited for when it stops early, which must return at once.
  pub(super) threads: Mutex<Vec<JoinHandle<()>>>,
}

/// Locks `m`, whether or not a thread panicked while holding it: no section
/// under this lock can leave the state half-updated.
pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
  m.lock().unwrap_or_else(|e| e.into_inner())
}

pub(super) fn result_bytes(done: &Done) -> usize {
  match done {
    Done::Read(Outcome::Text {
      text: Text::Latin1(v), ..
    }) => v.capacity(),
    Done::Read(Outcome::Text {
      text: Text::Utf16(v), ..
    }) => v.capacity() * 2,
    _ => 0,
  }
}

/// Whether the JS thread must stop at this result: anything but text (a
/// failure for lib/batch.js to have fs answer, or an entry to read in order).
pub(super) fn ends_a_run(done: &Done) -> bool {
  !matches!(done, Done::Read(Outcome::Text { .. }))
}

impl Batch {
  pub(super) fn new(paths: Paths, reading: Reading, ahead: Ahead, readers: usize, too_large: i32) -> Self {
    let slots = paths.len().clamp(1, window());
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
        slots: (0..slots).map(|_| None).collect(),
        pending_bytes: 0,
        stop: false,
        js_waiting: false,
        workers_waiting: 0,
        ready_end: 0,
        spares: Vec::new(),
      }),
      ready: Condvar::new(),
      room: Condvar::new(),
      threads: Mutex::new(Vec::new()),
    }
  }

  pub(super) fn len(&self) -> usize {
    self.paths.len()
  }

  /// Whether a reader may take the next index now. The index the JS thread
  /// waits for may always be taken, so a full budget never blocks progress.
  pub(super) fn may_claim(&self, st: &State) -> bool {
    !st.stop
      && st.claimed < self.len()
      && st.claimed < st.emitted + st.slots.len()
      && (st.pending_bytes < pending_max_bytes() || st.claimed == st.emitted)
  }

  /// `read` run on the path of entry `index`; `None` (fs answers: JS then
  /// reads that entry) for an entry JS reads itself, or if `read` panicked.
  fn on_path<R>(&self, index: usize, read: impl FnOnce(&[u8]) -> R) -> Option<R> {
    let path = self.paths.get(index)?;
    catch_unwind(AssertUnwindSafe(|| read(path))).ok()
  }

  /// Reads entry `index` ahead of (or beside) the JS thread, on any thread.
  pub(super) fn read_ahead(&self, index: usize) -> Done {
    self
      .on_path(index, |path| {
        read_one(path, self.reading, self.ahead, &self.cancel, self.too_large)
      })
      .unwrap_or(Done::Read(Outcome::Failure(FS_ANSWERS)))
  }

  /// Reads entry `index`, the next in list order, on the JS thread and makes
  /// its value (see `read_value_now`).
  pub(super) fn read_now(&self, env: sys::napi_env, index: usize) -> Reply {
    self
      .on_path(index, |path| read_value_now(env, path, self.reading))
      .unwrap_or(Reply::Failure(FS_ANSWERS))
  }

  /// Moves `ready_end` past the results ready in list order from it on.
  fn extend_ready(&self, st: &mut State) {
    let window = st.slots.len();
    while st.ready_end < self.len() && st.ready_end < st.emitted + window && st.slots[st.ready_end % window].is_some() {
      st.ready_end += 1;
    }
  }

  /// Records that the JS thread made the value of entry `emitted` itself.
  pub(super) fn emitted_now(&self, st: &mut State) {
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
  /// results ready in list order.
  pub(super) fn deposit(&self, st: &mut State, index: usize, done: Done) {
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
    self.wake_js(st);
  }

  /// Tells the JS thread, if it waits, that results are ready in list order.
  fn wake_js(&self, st: &mut State) {
    if st.ready_end != st.emitted && st.js_waiting {
      self.ready.notify_one();
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
  }

  /// A reader thread's loop: take an index, read it, store the result.
  fn work(&self) {
    buffers::keep_locally((spares_max() / 2 / self.readers.max(1)).max(buffers::LOCAL_KEEP));
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
        // The JS thread must drain for room to come; it stops the batch when
        // it is done with it (`readFilesCancel`, or the handle collected).
        self.wake_js(&mut st);
        st.workers_waiting += 1;
        st = self.room.wait(st).unwrap_or_else(|e| e.into_inner());
        st.workers_waiting -= 1;
      }
      let index = st.claimed;
      st.claimed += 1;
      let left = st.spares.len().saturating_sub(spares_per_claim());
      spares.extend(st.spares.drain(left..));
      drop(st);
      spares.drain(..).for_each(Text::give_back);
      finished = Some((index, self.read_ahead(index)));
    }
  }

  /// Moves the buffers in `spent` into the spares, up to `BATCH_SPARES`, while
  /// a reader may still claim a file; once none will, the spares move out into
  /// `spent` instead. What is left in `spent` the caller gives back to its own
  /// thread's buffers, after releasing the lock.
  pub(super) fn keep_spares(&self, st: &mut State, spent: &mut Vec<Text>) {
    if self.readers == 0 || st.stop || st.claimed >= self.len() {
      spent.append(&mut st.spares);
      return;
    }
    let room = spares_max().saturating_sub(st.spares.len()).min(spent.len());
    st.spares.extend(spent.drain(..room));
  }

  /// Moves the results ready in list order (up to `max`) into `out`, with
  /// their indices, stopping after one that is not text when `stop_at_any`
  /// (sync: lib/batch.js handles it before the batch goes on).
  pub(super) fn take_ready(&self, st: &mut State, out: &mut Vec<(usize, Done)>, max: usize, stop_at_any: bool) {
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
  pub(super) fn start_readers(batch: &Arc<Batch>, count: usize) -> usize {
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
  pub(super) fn end(&self, wait: bool) {
    self.stop(&mut lock(&self.state));
    let threads = std::mem::take(&mut *lock(&self.threads));
    if wait {
      threads.into_iter().for_each(|t| drop(t.join()));
    }
  }
}

/// The JS handle of a batch; stops the batch (without waiting for its
/// readers) if it is collected before the batch is over.
pub struct BatchHandle(pub(super) Arc<Batch>);

impl Drop for BatchHandle {
  fn drop(&mut self) {
    self.0.end(false);
  }
}
