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
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Tally(u64);

/// The tally of bytes reported on their own, when the string was made.
const REPORTED_ALONE: Tally = Tally(0);

/// An env, as an address: only compared.
type EnvId = usize;

/// The bytes of one batch's strings not yet reported to V8.
struct Owed {
  env: EnvId,
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
  fn is_open_on(&self, env: EnvId) -> bool {
    self.open && self.env == env
  }
}

/// The tallies not yet reported, of every env (Workers have their own).
struct Tallies {
  owed: Vec<Owed>,
  /// The envs whose teardown forgets their tallies (`forget_env`).
  envs: Vec<EnvId>,
}

/// The whole account, apart from V8: every change to V8's count goes out
/// through the `report` a method is given, so the account is testable
/// without an env.
struct Ledger {
  tallies: Mutex<Tallies>,
  last_tally: AtomicU64,
  /// Bytes of external strings made since V8 last took one back (any env),
  /// then of the copies made instead while stalled.
  since_collected: AtomicU64,
}

static LEDGER: Ledger = Ledger::new();

impl Ledger {
  const fn new() -> Self {
    Ledger {
      tallies: Mutex::new(Tallies {
        owed: Vec::new(),
        envs: Vec::new(),
      }),
      last_tally: AtomicU64::new(0),
      since_collected: AtomicU64::new(0),
    }
  }

  fn tallies(&self) -> MutexGuard<'_, Tallies> {
    // Never held across a report to V8, whose GC runs finalizers that take it.
    self.tallies.lock().unwrap_or_else(|e| e.into_inner())
  }

  /// Starts the count since the last collection again.
  fn restart_since_collected(&self) {
    self.since_collected.store(0, Ordering::Relaxed);
  }

  fn add(&self, env: EnvId, bytes: i64, report: impl FnOnce(i64)) -> Tally {
    self.since_collected.fetch_add(bytes as u64, Ordering::Relaxed);
    let tally = self.tallies().owed.iter_mut().find(|o| o.is_open_on(env)).map(|o| {
      o.bytes += bytes;
      o.made += bytes as u64;
      o.tally
    });
    tally.unwrap_or_else(|| {
      report(bytes);
      REPORTED_ALONE
    })
  }

  fn subtract(&self, bytes: i64, tally: Tally, report: impl FnOnce(i64)) {
    self.restart_since_collected();
    if tally != REPORTED_ALONE {
      if let Some(o) = self.tallies().owed.iter_mut().find(|o| o.tally == tally) {
        o.bytes -= bytes;
        return;
      }
    }
    report(-bytes);
  }

  fn copies_instead(&self, env: EnvId, bytes: usize) -> bool {
    let since = self.since_collected.load(Ordering::Relaxed);
    let Some(own) = self.tallies().owed.iter().find(|o| o.is_open_on(env)).map(|o| o.made) else {
      return false;
    };
    let before = since.saturating_sub(own);
    if before < STEP {
      return false;
    }
    if before >= 2 * STEP {
      self.restart_since_collected();
    } else {
      self.since_collected.fetch_add(bytes as u64, Ordering::Relaxed);
    }
    true
  }

  /// Reports what the tallies of `env` chosen by `which` owe, and forgets them.
  fn report_tallies(&self, env: EnvId, which: impl Fn(&Owed) -> bool, mut report: impl FnMut(i64)) {
    let chosen = |o: &Owed| o.env == env && which(o);
    // Reported first, forgotten after: a finalizer in between subtracts from
    // the tally (making it negative), which is then subtracted from V8.
    let sum: i64 = self
      .tallies()
      .owed
      .iter_mut()
      .filter(|o| chosen(o))
      .map(|o| std::mem::take(&mut o.bytes))
      .sum();
    if sum != 0 {
      report(sum);
    }
    let mut finalized_since = 0;
    self.tallies().owed.retain(|o| {
      if chosen(o) {
        finalized_since += o.bytes;
      }
      !chosen(o)
    });
    if finalized_since != 0 {
      report(finalized_since);
    }
  }

  /// Reports what the ended batches of `env` still owe.
  fn report_ended(&self, env: EnvId, report: impl FnMut(i64)) {
    self.report_tallies(env, |o| !o.open, report);
  }

  /// Opens a tally on `env` after reporting what its ended batches owe,
  /// unless one is open there already (that one then counts these strings
  /// too). `watch_teardown` asks for `forget_env` at the env's teardown, the
  /// first time an env opens a tally; without it, no tally is opened.
  fn open(&self, env: EnvId, watch_teardown: impl FnOnce() -> bool, report: impl FnMut(i64)) -> Option<Tally> {
    self.report_ended(env, report);
    let mut tallies = self.tallies();
    if tallies.owed.iter().any(|o| o.is_open_on(env)) {
      return None;
    }
    if !tallies.envs.contains(&env) {
      if !watch_teardown() {
        return None;
      }
      tallies.envs.push(env);
    }
    let tally = Tally(self.last_tally.fetch_add(1, Ordering::Relaxed) + 1);
    tallies.owed.push(Owed {
      env,
      tally,
      bytes: 0,
      open: true,
      made: 0,
    });
    Some(tally)
  }

  /// The batch of `tally` makes no more strings.
  fn close(&self, tally: Tally) {
    if let Some(o) = self.tallies().owed.iter_mut().find(|o| o.tally == tally) {
      o.open = false;
    }
  }

  /// Reports all of `env`'s tallies and forgets them and the env.
  fn forget_env(&self, env: EnvId, report: impl FnMut(i64)) {
    self.report_tallies(env, |_| true, report);
    self.tallies().envs.retain(|&e| e != env);
  }
}

/// What changes V8's count of `env`'s external memory.
fn reporter(env: sys::napi_env) -> impl FnMut(i64) {
  move |change| {
    let mut total = 0i64;
    // SAFETY: `env` is a live env (callers check for null at teardown).
    unsafe { sys::napi_adjust_external_memory(env, change, &mut total) };
  }
}

/// A new external string's `bytes`: owed in its env's open batch tally if
/// there is one, else reported now. Returns the tally (`REPORTED_ALONE`).
pub(crate) fn add(env: sys::napi_env, bytes: i64) -> Tally {
  LEDGER.add(env as EnvId, bytes, reporter(env))
}

/// Takes back the `bytes` that `add` reported or owed in `tally` (from a
/// finalizer, on any thread).
pub(crate) fn subtract(env: sys::napi_env, bytes: i64, tally: Tally) {
  LEDGER.subtract(bytes, tally, reporter(env))
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
  LEDGER.copies_instead(env as EnvId, bytes)
}

/// Reports the bytes that the ended batches of `env` still owe.
pub(crate) fn report_ended_batches(env: sys::napi_env) {
  LEDGER.report_ended(env as EnvId, reporter(env));
}

/// At `env`'s teardown (a cleanup hook): its tallies are reported, since
/// finalizers may still run with that env before it is gone, and forgotten,
/// so that an env made later at the same address does not inherit them.
unsafe extern "C" fn forget_env(env: *mut c_void) {
  LEDGER.forget_env(env as EnvId, reporter(env.cast()));
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
    let watch_teardown = || {
      // SAFETY: `env` is the live env of the current call, and `forget_env`
      // gets it back at its teardown, while it can still be used.
      let status = unsafe { sys::napi_add_env_cleanup_hook(env, Some(forget_env), env.cast()) };
      // Not forgotten at teardown, so not counted in tallies either.
      status == sys::Status::napi_ok
    };
    BatchTally {
      tally: LEDGER.open(env as EnvId, watch_teardown, reporter(env)),
    }
  }
}

impl Drop for BatchTally {
  fn drop(&mut self) {
    if let Some(tally) = self.tally {
      LEDGER.close(tally);
    }
  }
}

#[cfg(test)]
mod tests {
  use super::*;
  use std::cell::Cell;

  const A: EnvId = 0x1000;
  const B: EnvId = 0x2000;

  /// V8's count of one env's external memory, which never goes below zero.
  #[derive(Default)]
  struct V8 {
    total: Cell<i64>,
    reports: Cell<u32>,
  }

  impl V8 {
    fn report(&self) -> impl FnMut(i64) + '_ {
      |change| {
        assert_ne!(change, 0, "a report of nothing");
        let total = self.total.get() + change;
        assert!(total >= 0, "V8's count would go below zero: {total}");
        self.total.set(total);
        self.reports.set(self.reports.get() + 1);
      }
    }
  }

  fn never(_: i64) {
    panic!("reported when it should have been owed");
  }

  #[test]
  fn strings_outside_a_batch_are_reported_as_made_and_taken_back_when_finalized() {
    let (ledger, v8) = (Ledger::new(), V8::default());
    let t1 = ledger.add(A, 100, v8.report());
    let t2 = ledger.add(A, 30, v8.report());
    assert_eq!((t1, t2), (REPORTED_ALONE, REPORTED_ALONE));
    assert_eq!(v8.total.get(), 130);
    ledger.subtract(100, t1, v8.report());
    assert_eq!(v8.total.get(), 30);
    ledger.subtract(30, t2, v8.report());
    assert_eq!((v8.total.get(), v8.reports.get()), (0, 4));
  }

  #[test]
  fn a_batch_owes_its_strings_until_it_ended_and_the_next_one_starts() {
    let (ledger, v8) = (Ledger::new(), V8::default());
    let tally = ledger.open(A, || true, v8.report()).expect("a tally");
    let s1 = ledger.add(A, 100, never);
    let s2 = ledger.add(A, 50, never);
    assert_eq!((s1, s2), (tally, tally));
    // A finalizer of one of them while the batch runs: nothing to report.
    ledger.subtract(50, s2, never);
    ledger.report_ended(A, never);
    ledger.close(tally);
    // Closed: the next string is reported alone.
    assert_eq!(ledger.add(A, 7, v8.report()), REPORTED_ALONE);
    assert_eq!(v8.total.get(), 7);
    ledger.report_ended(A, v8.report());
    assert_eq!(v8.total.get(), 107, "the batch's live bytes, once");
    // Finalized after the report: taken back from V8 directly.
    ledger.subtract(100, s1, v8.report());
    assert_eq!(v8.total.get(), 7);
    assert!(ledger.tallies().owed.is_empty());
  }

  #[test]
  fn the_next_batch_reports_what_the_last_one_owes() {
    let (ledger, v8) = (Ledger::new(), V8::default());
    let first = ledger.open(A, || true, never).unwrap();
    ledger.add(A, 64, never);
    ledger.close(first);
    let second = ledger
      .open(A, || panic!("the env is watched already"), v8.report())
      .unwrap();
    assert_eq!(v8.total.get(), 64);
    let s = ledger.add(A, 1, never);
    assert_eq!(s, second);
    // Finalized while its batch runs: owed, not reported.
    ledger.subtract(1, s, never);
    ledger.close(second);
    let third = ledger.open(A, || true, never).unwrap();
    let tallies = [first, second, third];
    assert!(!tallies.contains(&REPORTED_ALONE), "{tallies:?}");
    assert!(first != second && second != third && first != third, "{tallies:?}");
  }

  #[test]
  fn a_finalizer_that_runs_while_a_report_is_made_is_taken_back_after_it() {
    let (ledger, v8) = (Ledger::new(), V8::default());
    let tally = ledger.open(A, || true, never).unwrap();
    let a = ledger.add(A, 100, never);
    let b = ledger.add(A, 40, never);
    ledger.close(tally);
    let mut first = true;
    let mut report = v8.report();
    ledger.report_ended(A, |change| {
      report(change);
      if std::mem::take(&mut first) {
        // The report started a GC that finalized a string of the tally.
        ledger.subtract(40, b, never);
      }
    });
    drop(report);
    assert_eq!(v8.total.get(), 100);
    ledger.subtract(100, a, v8.report());
    assert_eq!(v8.total.get(), 0);
  }

  #[test]
  fn tallies_are_per_env_and_nested_batches_share_the_outer_one() {
    let (ledger, v8a, v8b) = (Ledger::new(), V8::default(), V8::default());
    let ta = ledger.open(A, || true, never).unwrap();
    assert_eq!(ledger.open(A, || true, never), None, "one open tally per env");
    assert_eq!(ledger.add(B, 5, v8b.report()), REPORTED_ALONE, "B has no batch open");
    let tb = ledger.open(B, || true, never).unwrap();
    assert_eq!(ledger.add(A, 10, never), ta);
    assert_eq!(ledger.add(B, 20, never), tb);
    ledger.close(ta);
    ledger.report_ended(A, v8a.report());
    ledger.report_ended(B, never);
    assert_eq!((v8a.total.get(), v8b.total.get()), (10, 5));
    ledger.close(tb);
    ledger.report_ended(B, v8b.report());
    assert_eq!(v8b.total.get(), 25);
  }

  #[test]
  fn an_env_whose_teardown_cannot_be_watched_gets_no_tally() {
    let (ledger, v8) = (Ledger::new(), V8::default());
    assert_eq!(ledger.open(A, || false, never), None);
    assert_eq!(ledger.add(A, 9, v8.report()), REPORTED_ALONE);
    assert_eq!(v8.total.get(), 9);
    // Watched the next time it can be; once only.
    assert!(ledger.open(A, || true, never).is_some());
    assert_eq!(ledger.tallies().envs, vec![A]);
  }

  #[test]
  fn teardown_reports_every_tally_of_its_env_and_forgets_the_env() {
    let (ledger, v8a, v8b) = (Ledger::new(), V8::default(), V8::default());
    let ta = ledger.open(A, || true, never).unwrap();
    ledger.add(A, 11, never);
    let tb = ledger.open(B, || true, never).unwrap();
    ledger.add(B, 3, never);
    ledger.forget_env(A, v8a.report());
    assert_eq!(v8a.total.get(), 11, "an open tally too");
    assert_eq!(ledger.tallies().envs, vec![B]);
    assert_eq!(ledger.tallies().owed.len(), 1);
    // A new env at A's address is watched again and does not inherit.
    let mut watched = false;
    ledger.open(
      A,
      || {
        watched = true;
        true
      },
      never,
    );
    assert!(watched);
    ledger.close(ta);
    ledger.close(tb);
    ledger.report_ended(B, v8b.report());
    assert_eq!(v8b.total.get(), 3);
  }

  #[test]
  fn a_sync_batch_copies_once_a_step_was_made_before_it_with_none_collected() {
    let ledger = Ledger::new();
    let step = STEP as i64;
    assert!(!ledger.copies_instead(A, 1), "no batch open: never");
    ledger.add(A, step - 1, |_| ());
    let tally = ledger.open(A, || true, |_| ()).unwrap();
    assert!(!ledger.copies_instead(A, 1), "one byte short of a step");
    // The batch's own strings are no sign of a stall.
    ledger.add(A, 4 * step, never);
    assert!(!ledger.copies_instead(A, 1));
    assert!(!ledger.copies_instead(B, 1), "B has no batch open");
    let own = 4 * STEP;
    let since = |n: u64| ledger.since_collected.store(own + n, Ordering::Relaxed);
    let count = || ledger.since_collected.load(Ordering::Relaxed);
    since(STEP);
    assert!(ledger.copies_instead(A, 1000), "a step before it, none collected");
    // The copies count towards a second step, after which strings are
    // external again (the count starts over).
    assert_eq!(count(), own + STEP + 1000);
    since(2 * STEP - 1);
    assert!(ledger.copies_instead(A, 1));
    assert_eq!(count(), own + 2 * STEP);
    assert!(ledger.copies_instead(A, 1), "two steps before the batch");
    assert_eq!(count(), 0);
    assert!(!ledger.copies_instead(A, 1));
    // Any string collected starts the count again.
    ledger.since_collected.store(10 * STEP, Ordering::Relaxed);
    ledger.subtract(1, tally, never);
    assert_eq!(ledger.since_collected.load(Ordering::Relaxed), 0);
  }
}
