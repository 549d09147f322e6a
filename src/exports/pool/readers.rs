//! The pool's readers: what waits to be read (single reads and async
//! batches' entries), the state the JS thread and the readers share, and a
//! reader's loop. `super` (the entry points) queues reads and takes results.

use std::collections::{HashMap, VecDeque};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{sys, Status};

use crate::exports::args::Paths;
use crate::limits::tuned;
use crate::outcome::{Outcome, ReadFacts, CANCELLED, FS_ANSWERS, STRING_TOO_LONG};
use crate::pipeline;
use crate::plan::Caller;
use crate::read::{self, How, Source};

/// libuv's default thread pool: the fewest readers a pool may grow to.
pub(super) const UV_THREADPOOL_SIZE: usize = 4;

pub(super) type WakeFn = ThreadsafeFunction<(), (), (), Status, false>;

/// What one read reads.
pub(super) enum What {
  /// A path's bytes (NUL-terminated when read) and its open flags.
  Path(Vec<u8>, i32),
  /// A caller's fd.
  Fd(i32),
  /// One entry of an async batch's paths.
  Entry(Arc<Paths>, usize, i32),
}

/// One read, taken by a reader.
pub(super) struct Job {
  pub(super) id: u32,
  pub(super) what: What,
  /// Set by JS when the read's signal aborts; `None` for a read nobody stops.
  pub(super) cancel: Option<Arc<AtomicBool>>,
  pub(super) caller: Caller,
  /// Its batch, if it is a batch's entry.
  pub(super) group: Option<Arc<Group>>,
}

/// An async batch's reads in progress, and whether JS has given them up (an
/// aborted batch: their results are dropped, and they no longer keep the
/// event loop alive, as a stopped batch's reads did not).
pub(super) struct Group {
  pub(super) first: u32,
  pub(super) running: AtomicUsize,
  pub(super) forgotten: AtomicBool,
  /// Stops its reads between chunks.
  pub(super) cancel: Arc<AtomicBool>,
}

/// What waits to be read: one read, or the entries of an async batch not yet
/// started, of which at most `limit` are read at once (its `concurrency`).
pub(super) enum Queued {
  One(Job),
  Batch {
    paths: Arc<Paths>,
    flags: i32,
    /// The next entry to start, and how many reads are left to start.
    next: usize,
    left: usize,
    limit: usize,
    group: Arc<Group>,
  },
}

/// The next job a reader may take, from the first of `queue` that has one
/// (a batch at its limit is passed over); batches with nothing left to start
/// leave the queue.
pub(super) fn next_job(queue: &mut VecDeque<Queued>) -> Option<Job> {
  let mut i = 0;
  while i < queue.len() {
    match &mut queue[i] {
      Queued::One(_) => {
        let Some(Queued::One(job)) = queue.remove(i) else {
          unreachable!()
        };
        return Some(job);
      }
      Queued::Batch {
        paths,
        flags,
        next,
        left,
        limit,
        group,
      } => {
        // Entries JS reads itself are not queued.
        while *next < paths.len() && paths.get(*next).is_none() {
          *next += 1;
        }
        if *next >= paths.len() {
          queue.remove(i);
          continue;
        }
        if group.running.load(Ordering::Relaxed) >= *limit {
          i += 1;
          continue;
        }
        group.running.fetch_add(1, Ordering::Relaxed);
        let job = Job {
          id: group.first.wrapping_add(*next as u32),
          what: What::Entry(Arc::clone(paths), *next, *flags),
          cancel: Some(Arc::clone(&group.cancel)),
          caller: Caller::Batch,
          group: Some(Arc::clone(group)),
        };
        *next += 1;
        *left -= 1;
        while *next < paths.len() && paths.get(*next).is_none() {
          *next += 1;
        }
        if *next >= paths.len() {
          // Nothing left to start: the queue may be empty now, which wakes
          // the JS thread at each result (see `Pool::wake_js`).
          queue.remove(i);
        }
        return Some(job);
      }
    }
  }
  None
}

impl Job {
  /// Reads it on a reader thread: everything but making the string.
  pub(super) fn read(&self) -> Outcome {
    let cancel = self.cancel.as_deref().unwrap_or(&read::NEVER_CANCELLED);
    if read::cancelled(cancel) {
      return Outcome::Failure(CANCELLED);
    }
    let how = How::beside_others(cancel);
    let path = |path: &[u8], flags: i32| {
      // A regular file of kMaxLength bytes or more is left to fs.promises (its
      // answer for it, a string or which error, depends on the Node version).
      pipeline::read_to_outcome(
        |buf| read::with_terminated(path, |path| read::read(Source::Path(path, flags), how, buf)),
        FS_ANSWERS,
      )
    };
    match &self.what {
      What::Path(bytes, flags) => path(bytes, *flags),
      What::Entry(paths, index, flags) => match paths.get(*index) {
        // A batch's reads fill the cores: each converts on its own thread.
        Some(p) if paths.len() > 1 => entry_outcome(p, *flags, how),
        Some(p) => path(p, *flags),
        None => Outcome::Failure(FS_ANSWERS),
      },
      // As the sync readFd (fs has no promise API for fds).
      What::Fd(fd) => pipeline::read_to_outcome(|buf| read::read(Source::Fd(*fd), how, buf), STRING_TOO_LONG),
    }
  }
}

/// An entry of a batch of several, read and converted on this thread alone
/// (`ReadFacts::alone`).
pub(super) fn entry_outcome(path: &[u8], flags: i32, how: How) -> Outcome {
  pipeline::read_to_outcome(
    |buf| {
      read::with_terminated(path, |path| read::read(Source::Path(path, flags), how, buf))
        .map(|facts| ReadFacts { alone: true, ..facts })
    },
    FS_ANSWERS,
  )
}

pub(super) struct State {
  pub(super) queue: VecDeque<Queued>,
  /// Finished reads not yet taken by the JS thread.
  pub(super) done: Vec<(u32, Caller, Outcome)>,
  /// Bytes the results in `done` hold.
  pub(super) done_bytes: usize,
  pub(super) readers: usize,
  /// Readers waiting for a job.
  pub(super) idle: usize,
  /// Reads submitted and not yet taken (the event loop is kept alive for them).
  pub(super) in_flight: usize,
  /// Dropped once the pool closes (its env is going away).
  pub(super) wake: Option<WakeFn>,
  pub(super) wake_queued: bool,
  pub(super) next_id: u32,
  /// The async batches submitted (a group no reader or queue holds is gone).
  pub(super) groups: Vec<Arc<Group>>,
  /// The cancel flags of single reads in flight that have a signal, by id.
  pub(super) cancels: HashMap<u32, Arc<AtomicBool>>,
  pub(super) closed: bool,
}

pub(super) struct Pool {
  pub(super) state: Mutex<State>,
  /// Signalled when a job is queued, room is made, or the pool closes.
  pub(super) work: Condvar,
}

/// Locks `m`, whether or not a thread panicked while holding it: no section
/// under this lock can leave the state half-updated.
pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
  m.lock().unwrap_or_else(|e| e.into_inner())
}

pub(super) fn outcome_bytes(outcome: &Outcome) -> usize {
  match outcome {
    Outcome::Text { text, .. } => text.data_bytes(),
    Outcome::Failure(_) => 0,
  }
}

/// Most readers a pool starts.
pub(super) fn max_readers() -> usize {
  let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
  cores.min(tuned!(BATCH_DEFAULT_THREADS)).max(UV_THREADPOOL_SIZE)
}

impl Pool {
  /// A reader's loop: take a job, read it, leave its result; end once idle
  /// for `KEEP_IDLE_FOR`, or when the pool closes.
  pub(super) fn serve(&self) {
    let mut st = lock(&self.state);
    loop {
      if st.closed {
        break;
      }
      if st.done_bytes >= tuned!(BATCH_PENDING_MAX_BYTES) && !st.queue.is_empty() {
        // The JS thread must take results for room to come.
        self.wake_js(&mut st, true);
        st = self
          .work
          .wait_timeout(st, tuned!(KEEP_IDLE_FOR))
          .unwrap_or_else(|e| e.into_inner())
          .0;
        if st.wake.as_ref().is_none_or(|w| w.aborted()) {
          self.close(&mut st);
        }
        continue;
      }
      let Some(job) = next_job(&mut st.queue) else {
        // Whatever waits in the queue cannot start (its batches are at their
        // limits, a read of theirs may block for ever): no run is coming, so
        // the results ready now go to JS now.
        self.wake_js(&mut st, true);
        st.idle += 1;
        let (next, waited) = self
          .work
          .wait_timeout(st, tuned!(KEEP_IDLE_FOR))
          .unwrap_or_else(|e| e.into_inner());
        st = next;
        st.idle -= 1;
        if waited.timed_out() && st.queue.is_empty() {
          break;
        }
        continue;
      };
      drop(st);
      // A panic is caught here: the read's promise then has fs answer it.
      let outcome = catch_unwind(AssertUnwindSafe(|| job.read())).unwrap_or(Outcome::Failure(FS_ANSWERS));
      st = lock(&self.state);
      let forgotten = job.group.as_ref().is_some_and(|group| {
        // A reader waiting for this batch's limit may start its next entry.
        group.running.fetch_sub(1, Ordering::Relaxed);
        self.work.notify_one();
        group.forgotten.load(Ordering::Relaxed)
      });
      if st.closed || forgotten {
        if let Outcome::Text { text, .. } = outcome {
          text.give_back();
        }
        if forgotten {
          continue;
        }
        break;
      }
      if job.group.is_none() && job.cancel.is_some() {
        st.cancels.remove(&job.id);
      }
      st.done_bytes += outcome_bytes(&outcome);
      st.done.push((job.id, job.caller, outcome));
      self.wake_js(&mut st, false);
    }
    st.readers -= 1;
  }

  /// Tells the JS thread that results are ready: at once when no read waits
  /// to start (nothing else is coming soon) or `now` (a reader found nothing
  /// it may start), else once a run's worth (`BATCH_RUN`) is ready, each
  /// wake-up costing the JS thread a callback.
  pub(super) fn wake_js(&self, st: &mut State, now: bool) {
    if st.wake_queued || st.done.is_empty() {
      return;
    }
    if !(now || st.queue.is_empty() || st.done.len() >= tuned!(BATCH_RUN)) {
      return;
    }
    st.wake_queued = true;
    let delivered = st
      .wake
      .as_ref()
      .is_some_and(|w| w.call((), ThreadsafeFunctionCallMode::NonBlocking) == Status::Ok);
    if !delivered {
      // The environment is going away: nobody will take the results.
      self.close(st);
    }
  }

  /// No reader takes another job; results not taken are dropped.
  pub(super) fn close(&self, st: &mut State) {
    st.closed = true;
    st.queue.clear();
    for (_, _, outcome) in st.done.drain(..) {
      if let Outcome::Text { text, .. } = outcome {
        text.give_back();
      }
    }
    st.done_bytes = 0;
    st.wake = None;
    self.work.notify_all();
  }

  /// Queues `queued` (`reads` reads in all, with ids from `first`) and
  /// makes sure readers will take them, up to `readers` at once; returns
  /// `false` if no reader could be started (fs answers them). On the JS
  /// thread (`env`).
  pub(super) fn submit(
    pool: &Arc<Pool>,
    env: sys::napi_env,
    queued: Vec<Queued>,
    reads: usize,
    readers: usize,
  ) -> bool {
    let mut st = lock(&pool.state);
    if st.closed {
      return false;
    }
    if reads == 0 {
      return true;
    }
    for q in queued {
      if let Queued::One(Job {
        id,
        cancel: Some(cancel),
        ..
      }) = &q
      {
        st.cancels.insert(*id, Arc::clone(cancel));
      }
      st.queue.push_back(q);
    }
    if st.in_flight == 0 {
      if let Some(wake) = &st.wake {
        // SAFETY: on the JS thread of `env`, which the function belongs to.
        unsafe { sys::napi_ref_threadsafe_function(env, wake.raw()) };
      }
    }
    st.in_flight += reads;
    // Wake idle readers for what they can take; start readers for the rest,
    // up to libuv's four in all at least: as in fs's pool, reads of others
    // blocked on FIFOs (a batch's at its limit among them) leave these running.
    let wanted = reads.min(readers);
    for _ in 0..wanted.min(st.idle) {
      pool.work.notify_one();
    }
    let mut unserved = wanted.saturating_sub(st.idle);
    while unserved > 0 && st.readers < readers.max(max_readers()) {
      let reader = Arc::clone(pool);
      let spawned = std::thread::Builder::new()
        .name("readfile-utf8-pool".into())
        .spawn(move || reader.serve());
      if spawned.is_err() {
        break;
      }
      st.readers += 1;
      unserved -= 1;
    }
    if st.readers == 0 {
      // No thread at all: these reads are fs's to answer.
      st.in_flight -= reads;
      st.queue.clear();
      st.cancels.clear();
      return false;
    }
    true
  }

  /// The next id, and `count` after it taken.
  pub(super) fn ids(&self, count: usize) -> u32 {
    let mut st = lock(&self.state);
    let first = st.next_id;
    st.next_id = st.next_id.wrapping_add(count as u32);
    first
  }
}
