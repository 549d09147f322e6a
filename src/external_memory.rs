//! What V8's GC is told of our external strings' buffers (Node does not tell
//! it): their bytes, added when a string is made and subtracted when its
//! finalizer runs, or a loop of reads would grow RSS to gigabytes before any
//! finalizer ran.
//!
//! A sync batch's strings are not reported one by one but in one sum, once the
//! batch has returned: at the next batch's start, or when lib/batch.js asks in
//! a microtask, whichever comes first. Reported as they are made, they start
//! mark-compacts in the middle of the batch, which can free none of its
//! strings (all are alive until it returns) and which find the caller's
//! previous batch still held, so that it lives on until the next one.
//!
//! Finalizers run on the JS thread or, on Node 26, on V8's GC threads, so the
//! sums owed are shared, and V8's count never goes below what we reported
//! (V8 checks): an owed sum is reported first and only then forgotten.
//!
//! Reporting is not always enough: V8 frees external strings only in a full
//! GC, whose marking it starts once external memory grew by its step, and
//! Node 20's V8 can leave that marking unfinished for as long as a loop never
//! yields to the event loop, while a batch reports only when it returns. Once
//! `EXTERNAL_MEMORY_STEP` bytes of strings were made with none collected
//! before a sync batch began, its strings are copied (`copies_instead`): V8's
//! own allocations end that marking, as they do in fs's loops, and the dead
//! strings a loop of batches holds stay bounded. The batch's own strings do
//! not count: they are all alive until it returns, so no GC could take any.

use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use napi::sys;

use crate::limits::facts::EXTERNAL_MEMORY_STEP;

const STEP: u64 = EXTERNAL_MEMORY_STEP as u64;

/// Where an external string's bytes were counted: in a sync batch's tally,
/// reported after the batch, or `REPORTED_ALONE`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Tally(u64);

/// The tally of bytes reported on their own, when the string was made.
const REPORTED_ALONE: Tally = Tally(0);

/// The bytes of one batch's strings not yet reported to V8.
struct Owed {
  /// The env the batch ran on (as an address: only compared).
  env: usize,
  tally: Tally,
  /// Bytes made minus bytes finalized since the tally opened; after a
  /// report began, the finalized bytes that report already covered (≤ 0).
  bytes: i64,
  /// The batch is still making strings.
  open: bool,
  /// Bytes of external strings made in this tally: alive until the batch
  /// returns, they are no sign of a stalled GC (`copies_instead`).
  made: u64,
}

impl Owed {
  /// The tally of a batch still making strings on `env`.
  fn is_open_on(&self, env: sys::napi_env) -> bool {
    self.open && self.env == env as usize
  }
}

/// The tallies not yet reported, of every env (Workers have their own).
struct Tallies {
  owed: Vec<Owed>,
  /// The envs whose teardown forgets their tallies (`forget_env`).
  envs: Vec<usize>,
}

static TALLIES: Mutex<Tallies> = Mutex::new(Tallies {
  owed: Vec::new(),
  envs: Vec::new(),
});
static LAST_TALLY: AtomicU64 = AtomicU64::new(0);

/// Bytes of external strings made since V8 last took one back (any env),
/// then of the copies made instead while stalled.
static SINCE_COLLECTED: AtomicU64 = AtomicU64::new(0);

/// Starts the count since the last collection again.
fn restart_since_collected() {
  SINCE_COLLECTED.store(0, Ordering::Relaxed);
}

fn tallies() -> MutexGuard<'static, Tallies> {
  // Never held across a call into V8, whose GC runs finalizers that take it.
  TALLIES.lock().unwrap_or_else(|e| e.into_inner())
}

fn adjust(env: sys::napi_env, change: i64) {
  let mut total = 0i64;
  // SAFETY: `env` is a live env (callers check for null at teardown).
  unsafe { sys::napi_adjust_external_memory(env, change, &mut total) };
}

/// A new external string's `bytes`: owed in its env's open batch tally if
/// there is one, else reported now. Returns the tally (`REPORTED_ALONE`).
pub(crate) fn add(env: sys::napi_env, bytes: i64) -> Tally {
  SINCE_COLLECTED.fetch_add(bytes as u64, Ordering::Relaxed);
  let tally = tallies().owed.iter_mut().find(|o| o.is_open_on(env)).map(|o| {
    o.bytes += bytes;
    o.made += bytes as u64;
    o.tally
  });
  tally.unwrap_or_else(|| {
    adjust(env, bytes);
    REPORTED_ALONE
  })
}

/// Takes back the `bytes` that `add` reported or owed in `tally` (from a
/// finalizer, on any thread).
pub(crate) fn subtract(env: sys::napi_env, bytes: i64, tally: Tally) {
  restart_since_collected();
  if tally != REPORTED_ALONE {
    if let Some(o) = tallies().owed.iter_mut().find(|o| o.tally == tally) {
      o.bytes -= bytes;
      return;
    }
  }
  adjust(env, -bytes);
}

/// Whether a string of `bytes` bytes that would be external is copied
/// instead, because V8 collected none of `EXTERNAL_MEMORY_STEP` bytes of them
/// made before the sync batch on `env` that makes it (see the module's
/// documentation).
/// A single call's strings are reported as they are made, and each report
/// steps V8's marking; copies of them, which land on fresh pages, only made
/// the calls after a burst of large strings slower. The copies count too:
/// after as many bytes of them, strings are external again, so that a caller
/// who keeps every string (none ever collected) loses only part of the speed.
pub(crate) fn copies_instead(env: sys::napi_env, bytes: usize) -> bool {
  let since = SINCE_COLLECTED.load(Ordering::Relaxed);
  let Some(own) = tallies().owed.iter().find(|o| o.is_open_on(env)).map(|o| o.made) else {
    return false;
  };
  let before = since.saturating_sub(own);
  if before < STEP {
    return false;
  }
  if before >= 2 * STEP {
    restart_since_collected();
  } else {
    SINCE_COLLECTED.fetch_add(bytes as u64, Ordering::Relaxed);
  }
  true
}

/// Reports the bytes that the ended batches of `env` still owe.
pub(crate) fn report_ended_batches(env: sys::napi_env) {
  report_tallies(env, |o| !o.open);
}

/// Reports what the tallies of `env` chosen by `which` owe, and forgets them.
fn report_tallies(env: sys::napi_env, which: impl Fn(&Owed) -> bool) {
  let chosen = |o: &Owed| o.env == env as usize && which(o);
  // Reported first, forgotten after: a finalizer in between subtracts from
  // the tally (making it negative), which is then subtracted from V8.
  let sum: i64 = tallies()
    .owed
    .iter_mut()
    .filter(|o| chosen(o))
    .map(|o| std::mem::take(&mut o.bytes))
    .sum();
  if sum != 0 {
    adjust(env, sum);
  }
  let mut finalized_since = 0;
  tallies().owed.retain(|o| {
    if chosen(o) {
      finalized_since += o.bytes;
    }
    !chosen(o)
  });
  if finalized_since != 0 {
    adjust(env, finalized_since);
  }
}

/// At `env`'s teardown (a cleanup hook): its tallies are reported, since
/// finalizers may still run with that env before it is gone, and forgotten,
/// so that an env made later at the same address does not inherit them.
unsafe extern "C" fn forget_env(env: *mut c_void) {
  report_tallies(env.cast(), |_| true);
  tallies().envs.retain(|&e| e != env as usize);
}

/// While it lives, the external strings made on its env go into one tally,
/// reported after it ends (see the module's documentation).
pub(crate) struct BatchTally {
  tally: Option<Tally>,
}

impl BatchTally {
  /// Reports what earlier batches still owe, then opens a tally, unless one
  /// is open on this env already (that one then counts these strings too).
  pub(crate) fn open(env: sys::napi_env) -> Self {
    report_ended_batches(env);
    let mut tallies = tallies();
    if tallies.owed.iter().any(|o| o.is_open_on(env)) {
      return BatchTally { tally: None };
    }
    if !tallies.envs.contains(&(env as usize)) {
      // SAFETY: `env` is the live env of the current call, and `forget_env`
      // gets it back at its teardown, while it can still be used.
      let status = unsafe { sys::napi_add_env_cleanup_hook(env, Some(forget_env), env.cast()) };
      if status != sys::Status::napi_ok {
        // Not forgotten at teardown, so not counted in tallies either.
        return BatchTally { tally: None };
      }
      tallies.envs.push(env as usize);
    }
    let tally = Tally(LAST_TALLY.fetch_add(1, Ordering::Relaxed) + 1);
    tallies.owed.push(Owed {
      env: env as usize,
      tally,
      bytes: 0,
      open: true,
      made: 0,
    });
    BatchTally { tally: Some(tally) }
  }
}

impl Drop for BatchTally {
  fn drop(&mut self) {
    if let Some(tally) = self.tally {
      if let Some(o) = tallies().owed.iter_mut().find(|o| o.tally == tally) {
        o.open = false;
      }
    }
  }
}
