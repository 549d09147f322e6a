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
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use napi::bindgen_prelude::{Array, Int32Array, ToNapiValue, Uint8Array};
use napi::{sys, Env, JsValue};
use napi_derive::napi;

use super::args::collect_paths;
use crate::limits::tuned;
use crate::outcome::Text;
use crate::pipeline;
use crate::plan::Caller;

mod readers;

use readers::{lock, max_readers, outcome_bytes, Group, Job, Pool, Queued, State, WakeFn, What};

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
