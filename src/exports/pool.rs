//! Async reads — single ones (`readFileUtf8Async`, the `fs.readFile` and
//! `fs.promises.readFile` drop-ins) and async batches alike — on one pool of
//! reader threads per JS thread, instead of one libuv task each. Reads in
//! flight together share the threads, and their results reach the JS thread
//! in bulk: a reader leaves each result in a list and wakes the JS thread
//! through one threadsafe function, whose callback takes every result ready
//! (`poolTake`) and makes their strings, and takes again at each turn of the
//! event loop while results come. Each read keeps its own flags, cancel
//! flag and failure; results come back as they finish, not in the order asked.
//!
//! Readers start as reads come (up to `BATCH_DEFAULT_THREADS`, and at least
//! libuv's own four, so that reads blocked on FIFOs leave others running, as
//! in fs's pool) and end once idle for `KEEP_IDLE_FOR`: no thread outlives
//! the work. The threadsafe function keeps the event loop alive only while
//! reads are in flight. Readers start no file while the results not yet taken
//! hold `BATCH_PENDING_MAX_BYTES`.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use napi::bindgen_prelude::{Array, Int32Array, ToNapiValue, Uint8Array};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{sys, Env, JsValue, Status};
use napi_derive::napi;

use super::args::{collect_paths, Paths};
use crate::limits::tuned;
use crate::outcome::{Outcome, ReadFacts, Text, CANCELLED, FS_ANSWERS, STRING_TOO_LONG};
use crate::pipeline;
use crate::plan::Caller;
use crate::read::{self, How, Source};

/// libuv's default thread pool: the fewest readers a pool may grow to.
const UV_THREADPOOL_SIZE: usize = 4;

type WakeFn = ThreadsafeFunction<(), (), (), Status, false>;

/// What one read reads.
enum What {
  /// A path's bytes (NUL-terminated when read) and its open flags.
  Path(Vec<u8>, i32),
  /// A caller's fd.
  Fd(i32),
  /// One entry of an async batch's paths.
  Entry(Arc<Paths>, usize, i32),
}

/// One read, taken by a reader.
struct Job {
  id: u32,
  what: What,
  /// Set by JS when the read's signal aborts; `None` for a read nobody stops.
  cancel: Option<Arc<AtomicBool>>,
  caller: Caller,
  /// Its batch, if it is a batch's entry.
  group: Option<Arc<Group>>,
}

/// An async batch's reads in progress, and whether JS has given them up (an
/// aborted batch: their results are dropped, and they no longer keep the
/// event loop alive, as a stopped batch's reads did not).
struct Group {
  first: u32,
  running: AtomicUsize,
  forgotten: AtomicBool,
  /// Stops its reads between chunks.
  cancel: Arc<AtomicBool>,
}

/// What waits to be read: one read, or the entries of an async batch not yet
/// started, of which at most `limit` are read at once (its `concurrency`).
enum Queued {
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
fn next_job(queue: &mut VecDeque<Queued>) -> Option<Job> {
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
  fn read(&self) -> Outcome {
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
fn entry_outcome(path: &[u8], flags: i32, how: How) -> Outcome {
  pipeline::read_to_outcome(
    |buf| {
      read::with_terminated(path, |path| read::read(Source::Path(path, flags), how, buf))
        .map(|facts| ReadFacts { alone: true, ..facts })
    },
    FS_ANSWERS,
  )
}

struct State {
  queue: VecDeque<Queued>,
  /// Finished reads not yet taken by the JS thread.
  done: Vec<(u32, Caller, Outcome)>,
  /// Bytes the results in `done` hold.
  done_bytes: usize,
  readers: usize,
  /// Readers waiting for a job.
  idle: usize,
  /// Reads submitted and not yet taken (the event loop is kept alive for them).
  in_flight: usize,
  /// Dropped once the pool closes (its env is going away).
  wake: Option<WakeFn>,
  wake_queued: bool,
  next_id: u32,
  /// The async batches submitted (a group no reader or queue holds is gone).
  groups: Vec<Arc<Group>>,
  /// The cancel flags of single reads in flight that have a signal, by id.
  cancels: HashMap<u32, Arc<AtomicBool>>,
  closed: bool,
}

struct Pool {
  state: Mutex<State>,
  /// Signalled when a job is queued, room is made, or the pool closes.
  work: Condvar,
}

/// Locks `m`, whether or not a thread panicked while holding it: no section
/// under this lock can leave the state half-updated.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
  m.lock().unwrap_or_else(|e| e.into_inner())
}

fn outcome_bytes(outcome: &Outcome) -> usize {
  match outcome {
    Outcome::Text { text, .. } => text.data_bytes(),
    Outcome::Failure(_) => 0,
  }
}

/// Most readers a pool starts.
fn max_readers() -> usize {
  let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
  cores.min(tuned!(BATCH_DEFAULT_THREADS)).max(UV_THREADPOOL_SIZE)
}

impl Pool {
  /// A reader's loop: take a job, read it, leave its result; end once idle
  /// for `KEEP_IDLE_FOR`, or when the pool closes.
  fn serve(&self) {
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
        self.wake_js(&mut st, false);
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
  /// to start (nothing else is coming soon) or `now`, else once a run's worth
  /// (`BATCH_RUN`) is ready, each wake-up costing the JS thread a callback.
  fn wake_js(&self, st: &mut State, now: bool) {
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
  fn close(&self, st: &mut State) {
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
  fn submit(pool: &Arc<Pool>, env: sys::napi_env, queued: Vec<Queued>, reads: usize, readers: usize) -> bool {
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
    // Wake idle readers for what they can take; start readers for the rest.
    for _ in 0..reads.min(st.idle) {
      pool.work.notify_one();
    }
    let mut unserved = reads.saturating_sub(st.idle);
    while unserved > 0 && st.readers < readers {
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
  fn ids(&self, count: usize) -> u32 {
    let mut st = lock(&self.state);
    let first = st.next_id;
    st.next_id = st.next_id.wrapping_add(count as u32);
    first
  }
}

thread_local! {
  /// This JS thread's pools, by the id lib/pool.js holds. A number and not an
  /// External: Deno still runs immediates after its teardown has run the
  /// finalizers, and a call then must find nothing, not freed memory.
  static POOLS: RefCell<HashMap<u32, Arc<Pool>>> = RefCell::new(HashMap::new());
}
static NEXT_POOL: AtomicU32 = AtomicU32::new(1);

/// The pool `id` of this JS thread, while its environment lives.
fn pool_of(id: u32) -> Option<Arc<Pool>> {
  POOLS.with(|pools| pools.borrow().get(&id).cloned())
}

/// The environment's cleanup hook: pool `arg` closes (no reader takes another
/// job; results not taken are dropped).
unsafe extern "C" fn close_pool(arg: *mut std::ffi::c_void) {
  let id = arg as usize as u32;
  if let Some(pool) = POOLS.with(|pools| pools.borrow_mut().remove(&id)) {
    pool.close(&mut lock(&pool.state));
  }
}

/// `poolOpen(onReady)`: a pool for this JS thread, by its id; `onReady()` is
/// called on it when results are ready to `poolTake`.
#[napi(js_name = "poolOpen")]
pub fn pool_open(env: Env, on_ready: WakeFn) -> napi::Result<u32> {
  // SAFETY: `env` is this call's, the function was just made on it: no read
  // is in flight, so it must not keep the event loop alive.
  unsafe { sys::napi_unref_threadsafe_function(env.raw(), on_ready.raw()) };
  let pool = Arc::new(Pool {
    state: Mutex::new(State {
      queue: VecDeque::new(),
      done: Vec::new(),
      done_bytes: 0,
      readers: 0,
      idle: 0,
      in_flight: 0,
      wake: Some(on_ready),
      wake_queued: false,
      next_id: 0,
      groups: Vec::new(),
      cancels: HashMap::new(),
      closed: false,
    }),
    work: Condvar::new(),
  });
  let id = NEXT_POOL.fetch_add(1, Ordering::Relaxed);
  // SAFETY: `env` is this call's; the hook runs once, at its teardown, with the id as its argument.
  napi::check_status!(unsafe { sys::napi_add_env_cleanup_hook(env.raw(), Some(close_pool), id as usize as *mut _) })?;
  POOLS.with(|pools| pools.borrow_mut().insert(id, pool));
  Ok(id)
}

/// `poolReadEach(pool, paths, flags, cancellable)`: queues one read per entry
/// of `paths` (a string, a Uint8Array of its bytes, or an integer fd), entry
/// i with open flags `flags[i]`, and with a cancel flag (`poolCancel`) where
/// `cancellable[i]` is 1; entry i gets the id `first + i`. Returns `first`,
/// or -1 where fs answers them (no reader could be started). lib/pool.js
/// gathers the single reads of one turn of the event loop into one call.
#[napi(js_name = "poolReadEach")]
pub fn pool_read_each(
  env: Env,
  pool: u32,
  paths: Array,
  flags: Int32Array,
  cancellable: Uint8Array,
) -> napi::Result<f64> {
  let Some(pool) = pool_of(pool) else {
    return Ok(-1.0);
  };
  let count = paths.len() as usize;
  if flags.len() != count || cancellable.len() != count {
    return Err(napi::Error::from_reason(
      "poolReadEach: one flag and one cancellable per path",
    ));
  }
  let first = pool.ids(count);
  let (mut stack, mut heap) = (super::args::path_room(), Vec::new());
  let mut queued = Vec::with_capacity(count);
  for i in 0..count {
    let mut value = std::ptr::null_mut();
    // SAFETY: `env` is this call's env and `paths` one of its live arguments.
    napi::check_status!(unsafe { sys::napi_get_element(env.raw(), paths.raw(), i as u32, &mut value) })?;
    let what = if let Some(fd) = super::args::int32_number(env.raw(), value) {
      What::Fd(fd)
    } else {
      let bytes = match super::args::string_utf8(env.raw(), value, &mut stack, &mut heap) {
        Some(terminated) => terminated[..terminated.len() - 1].to_vec(),
        // SAFETY: `value` is a live value of this call (the list holds it); the bytes are copied now.
        None => unsafe { super::args::uint8_array_bytes(env.raw(), value) }
          .map(<[u8]>::to_vec)
          .unwrap_or_default(),
      };
      What::Path(bytes, flags[i])
    };
    queued.push(Queued::One(Job {
      id: first.wrapping_add(i as u32),
      what,
      cancel: (cancellable[i] != 0).then(|| Arc::new(AtomicBool::new(false))),
      caller: Caller::Async,
      group: None,
    }));
  }
  let started = Pool::submit(&pool, env.raw(), queued, count, max_readers());
  Ok(if started { f64::from(first) } else { -1.0 })
}

/// `poolCancel(pool, id)`: the single read `id`, submitted as cancellable,
/// stops at its next chunk (JS has rejected its promise already; its result,
/// a failure code, is ignored).
#[napi(js_name = "poolCancel")]
pub fn pool_cancel(pool: u32, id: u32) {
  if let Some(pool) = pool_of(pool) {
    if let Some(cancel) = lock(&pool.state).cancels.get(&id) {
      cancel.store(true, Ordering::Relaxed);
    }
  }
}

/// `poolReadAll(pool, paths, flags, concurrency)`: queues a read of every
/// entry of an async batch (strings and Uint8Arrays; other entries are JS's
/// to read), entry i with id `first + i`, at most `concurrency` at once;
/// returns `first`, or -1 where fs answers them. `poolForget` stops them.
#[napi(js_name = "poolReadAll")]
pub fn pool_read_all(env: Env, pool: u32, paths: Array, flags: i32, concurrency: u32) -> napi::Result<f64> {
  let Some(pool) = pool_of(pool) else {
    return Ok(-1.0);
  };
  let paths = Arc::new(collect_paths(env.raw(), &paths)?);
  let reads = (0..paths.len()).filter(|&i| paths.get(i).is_some()).count();
  let limit = (concurrency as usize).clamp(1, tuned!(BATCH_MAX_THREADS));
  let first = pool.ids(paths.len());
  let group = Arc::new(Group {
    first,
    running: AtomicUsize::new(0),
    forgotten: AtomicBool::new(false),
    cancel: Arc::new(AtomicBool::new(false)),
  });
  {
    let mut st = lock(&pool.state);
    st.groups.retain(|g| Arc::strong_count(g) > 1);
    st.groups.push(Arc::clone(&group));
  }
  let queued = Queued::Batch {
    paths,
    flags,
    next: 0,
    left: reads,
    limit,
    group,
  };
  let started = Pool::submit(&pool, env.raw(), vec![queued], reads, limit);
  Ok(if started { f64::from(first) } else { -1.0 })
}

/// `poolForget(pool, first)`: the async batch whose entry 0 has id `first`
/// was given up (aborted): its reads not started are dropped, those in
/// progress stop at their next chunk and their results will be dropped, and
/// none of them keeps the event loop alive.
#[napi(js_name = "poolForget")]
pub fn pool_forget(env: Env, pool: u32, first: u32) {
  let Some(pool) = pool_of(pool) else { return };
  let mut st = lock(&pool.state);
  let mut gone = 0;
  let queued = st
    .queue
    .iter()
    .position(|q| matches!(q, Queued::Batch { group, .. } if group.first == first));
  if let Some(Queued::Batch { left, .. }) = queued.and_then(|i| st.queue.remove(i)) {
    gone += left;
  }
  if let Some(group) = st.groups.iter().find(|g| g.first == first) {
    group.cancel.store(true, Ordering::Relaxed);
    if !group.forgotten.swap(true, Ordering::Relaxed) {
      gone += group.running.load(Ordering::Relaxed);
    }
  }
  st.groups.retain(|g| g.first != first);
  st.in_flight -= gone.min(st.in_flight);
  if st.in_flight == 0 && gone > 0 {
    if let Some(wake) = &st.wake {
      // SAFETY: on the JS thread of `env`, which the function belongs to.
      unsafe { sys::napi_unref_threadsafe_function(env.raw(), wake.raw()) };
    }
  }
}

/// `poolTake(pool, out)`: appends `id, value` for the oldest results ready, a
/// run (`BATCH_RUN`) at most, to `out` (the string, or a failure code);
/// returns how many. The event loop is let go once no read is in flight.
///
/// While takes find results, the JS thread takes again at its loop's next turn
/// and readers do not wake it: a wake-up queued during the callback would run
/// in the same turn (the threadsafe function drains its queue), and a steady
/// flow of results would then hold the loop there, timers and I/O waiting.
/// A take that finds nothing re-arms the wake-up.
#[napi(js_name = "poolTake")]
pub fn pool_take(env: Env, pool: u32, out: Array) -> napi::Result<u32> {
  let Some(pool) = pool_of(pool) else {
    return Ok(0);
  };
  let (done, idle) = {
    let mut st = lock(&pool.state);
    if st.done.is_empty() {
      st.wake_queued = false;
      return Ok(0);
    }
    // The oldest results, a run at most: one turn of the loop makes no more strings.
    let run = st.done.len().min(tuned!(BATCH_RUN));
    let done: Vec<_> = st.done.drain(..run).collect();
    st.done_bytes -= done.iter().map(|(_, _, outcome)| outcome_bytes(outcome)).sum::<usize>();
    st.in_flight -= done.len();
    if st.in_flight == 0 {
      if let Some(wake) = &st.wake {
        // SAFETY: on the JS thread of `env`, which the function belongs to.
        unsafe { sys::napi_unref_threadsafe_function(env.raw(), wake.raw()) };
      }
    }
    (done, st.idle)
  };
  // Readers waiting for room may go on.
  if idle < lock(&pool.state).readers {
    pool.work.notify_all();
  }
  let env = env.raw();
  let base = out.len();
  let count = done.len() as u32;
  for (n, (id, caller, outcome)) in done.into_iter().enumerate() {
    // SAFETY: `env` is the live env of this call, on its JS thread.
    let value = unsafe { pipeline::outcome_value(env, outcome, caller, None::<&mut Vec<Text>>) }?;
    // SAFETY: as above; `id` becomes a JS number.
    let id = unsafe { u32::to_napi_value(env, id) }?;
    set_element(env, out.raw(), base + 2 * n as u32, id)?;
    set_element(env, out.raw(), base + 2 * n as u32 + 1, value)?;
  }
  Ok(count)
}

fn set_element(env: sys::napi_env, out: sys::napi_value, index: u32, value: sys::napi_value) -> napi::Result<()> {
  // SAFETY: `out` is a live array and `value` a live value of the current scope.
  napi::check_status!(unsafe { sys::napi_set_element(env, out, index, value) })
}
