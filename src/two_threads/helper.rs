//! A second thread that stays, for the half of a split job that the calling
//! thread does not do itself (`super::both`).
//!
//! A thread started per call (stack mmap, clone, munmap) costs more than the
//! split of a 2 MiB read saves; handing a task to a thread that waits for one
//! costs far less.
//!
//! One helper serves one caller at a time; a second caller at the same moment
//! (another worker_thread) is told it is busy and starts its own thread.

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{fence, AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use crate::limits::{HELPER_SPIN_BRIEFLY, HELPER_SPIN_FOR};

type Task = Box<dyn FnOnce() + Send + 'static>;

struct Helper {
  /// The process that started the helper: a child made by fork(2) without
  /// exec has no helper thread, so it must not wait for one.
  process: u32,
  /// Held by the caller whose task the helper has (or is about to get).
  claimed: AtomicBool,
  /// The task handed over and not yet taken by the helper.
  task: Mutex<Option<Task>>,
  /// Whether `task` holds one, for the helper to spin on.
  task_waiting: AtomicBool,
  task_ready: Condvar,
  /// Set while the helper waits on `task_ready` (a caller then wakes it).
  helper_sleeping: AtomicBool,
  /// Set once the task has run and been dropped (with all it borrowed).
  finished: AtomicBool,
  task_done: Condvar,
  /// Set while the caller waits on `task_done` (the helper then wakes it).
  caller_sleeping: AtomicBool,
}

static HELPER: OnceLock<Option<&'static Helper>> = OnceLock::new();

/// The helper, started on first use; `None` if no thread could be started (not
/// retried: each split then starts a thread of its own, as `super::both`
/// does for a busy helper).
fn helper() -> Option<&'static Helper> {
  *HELPER.get_or_init(|| {
    let helper: &'static Helper = Box::leak(Box::new(Helper::new()));
    let started = thread::Builder::new()
      .name("readfile-utf8-helper".into())
      .spawn(move || helper.serve());
    started.is_ok().then_some(helper)
  })
}

/// Whether the helper is running or spinning for a task (not asleep, which
/// a hand-over would have to wake it from).
#[cfg_attr(any(not(target_os = "linux"), feature = "portable-read"), allow(dead_code))]
pub(super) fn awake() -> bool {
  HELPER
    .get()
    .copied()
    .flatten()
    .is_some_and(|h| !h.helper_sleeping.load(Ordering::Relaxed))
}

/// Locks `m`, whether or not a thread panicked while holding it (none of our
/// critical sections can leave the data half-updated).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
  m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Helper {
  /// A helper with no task, for a thread to `serve`.
  fn new() -> Helper {
    Helper {
      process: std::process::id(),
      claimed: AtomicBool::new(false),
      task: Mutex::new(None),
      task_waiting: AtomicBool::new(false),
      task_ready: Condvar::new(),
      helper_sleeping: AtomicBool::new(false),
      finished: AtomicBool::new(false),
      task_done: Condvar::new(),
      caller_sleeping: AtomicBool::new(false),
    }
  }

  /// The helper's loop: wait for a task, run it, say so.
  fn serve(&self) {
    let mut last_end: Option<Instant> = None;
    // Whether each of the last two tasks came within `HELPER_SPIN_FOR` of the
    // one before: a loop of reads, worth the long spin. Between calls with
    // idle gaps that spin would only hold a core the caller's vCPU may share.
    let (mut came_soon, mut previous_came_soon) = (false, false);
    loop {
      let spin_for = if came_soon && previous_came_soon {
        HELPER_SPIN_FOR
      } else {
        HELPER_SPIN_BRIEFLY
      };
      spin_until(&self.task_waiting, spin_for);
      let task = {
        let mut slot = lock(&self.task);
        // Set under the lock, which a caller takes to hand a task over: one
        // that comes after the wait below has begun sees it, and wakes us.
        self.helper_sleeping.store(true, Ordering::SeqCst);
        let task = loop {
          if let Some(task) = slot.take() {
            break task;
          }
          slot = self.task_ready.wait(slot).unwrap_or_else(|e| e.into_inner());
        };
        self.helper_sleeping.store(false, Ordering::SeqCst);
        self.task_waiting.store(false, Ordering::Relaxed);
        task
      };
      previous_came_soon = came_soon;
      came_soon = last_end.is_some_and(|end| end.elapsed() < HELPER_SPIN_FOR);
      // Never unwinds: `run_beside` wraps the work in catch_unwind.
      task();
      // Stored before `caller_sleeping` is read, which the caller stores before
      // it reads `finished`: one of the two sees the other's store. The full
      // fences (here and in `wait_finished`) make that store-then-load order
      // explicit rather than left to the SeqCst pair: a CI run under qemu's
      // arm64 emulation once found both threads asleep here.
      self.finished.store(true, Ordering::SeqCst);
      fence(Ordering::SeqCst);
      if self.caller_sleeping.load(Ordering::SeqCst) {
        // Under the lock, which the caller holds until its wait has begun.
        let _slot = lock(&self.task);
        self.task_done.notify_one();
      }
      last_end = Some(Instant::now());
    }
  }

  /// Blocks until the task handed over has finished, then frees the helper.
  fn wait_finished(&self) {
    if !spin_until(&self.finished, HELPER_SPIN_FOR) {
      let mut slot = lock(&self.task);
      self.caller_sleeping.store(true, Ordering::SeqCst);
      fence(Ordering::SeqCst);
      while !self.finished.load(Ordering::SeqCst) {
        slot = self.task_done.wait(slot).unwrap_or_else(|e| e.into_inner());
      }
      self.caller_sleeping.store(false, Ordering::SeqCst);
    }
    self.claimed.store(false, Ordering::Release);
  }

  /// The task handed over, if the helper has not taken it yet: then it never
  /// will, and the helper counts as finished.
  fn take_back(&self) -> Option<Task> {
    let task = lock(&self.task).take()?;
    self.task_waiting.store(false, Ordering::Relaxed);
    self.finished.store(true, Ordering::Release);
    Some(task)
  }

  /// `run_beside` with this helper. If it has not taken `right` by the time
  /// `left` is done (asleep, or its core busy with other work), `right` runs
  /// on this thread instead of this thread waiting for it.
  fn run_beside<A, B, L, R>(&'static self, left: L, right: R) -> Result<(A, B), (L, R)>
  where
    B: Send,
    L: FnOnce() -> A,
    R: FnOnce() -> B + Send,
  {
    if self.claimed.swap(true, Ordering::Acquire) {
      return Err((left, right));
    }
    let mut right_result: Option<thread::Result<B>> = None;
    let result_slot = &mut right_result;
    let task: Box<dyn FnOnce() + Send + '_> = Box::new(move || {
      *result_slot = Some(panic::catch_unwind(AssertUnwindSafe(right)));
    });
    // SAFETY: only the lifetime is erased; `waiting` below blocks until the task has
    // been run and dropped (by the helper, or here once taken back) before this
    // function returns or unwinds, so nothing the task borrows (`right`'s captures,
    // `right_result`) is used after its borrow ends.
    let task: Task = unsafe { std::mem::transmute::<Box<dyn FnOnce() + Send + '_>, Task>(task) };
    self.hand_over(task);
    let waiting = WaitForHelper(self);
    let left = left();
    if let Some(task) = self.take_back() {
      task();
    }
    drop(waiting);
    match right_result {
      Some(Ok(right)) => Ok((left, right)),
      Some(Err(payload)) => panic::resume_unwind(payload),
      None => unreachable!("the task finished without running"),
    }
  }

  /// Hands `task` to the helper, waking it if it sleeps.
  fn hand_over(&self, task: Task) {
    self.finished.store(false, Ordering::Relaxed);
    *lock(&self.task) = Some(task);
    self.task_waiting.store(true, Ordering::Release);
    if self.helper_sleeping.load(Ordering::SeqCst) {
      self.task_ready.notify_one();
    }
  }
}

/// Spins until `flag` is set or `spin_for` has passed; returns whether it was set.
fn spin_until(flag: &AtomicBool, spin_for: Duration) -> bool {
  let start = Instant::now();
  loop {
    if flag.load(Ordering::Acquire) {
      return true;
    }
    if start.elapsed() >= spin_for {
      return false;
    }
    std::hint::spin_loop();
  }
}

/// Waits for the helper's task when dropped, so that `run_beside` cannot
/// return or unwind while the helper may still use what the task borrows.
struct WaitForHelper(&'static Helper);

impl Drop for WaitForHelper {
  fn drop(&mut self) {
    self.0.wait_finished();
  }
}

/// Runs `right` on the helper and `left` on this thread, at the same time, and
/// returns both results. `Err((left, right))`, with neither run, if the helper
/// is busy or could not be started. A panic in `right` is re-raised here.
pub(super) fn run_beside<A, B, L, R>(left: L, right: R) -> Result<(A, B), (L, R)>
where
  B: Send,
  L: FnOnce() -> A,
  R: FnOnce() -> B + Send,
{
  match helper().filter(|h| h.process == std::process::id()) {
    Some(helper) => helper.run_beside(left, right),
    None => Err((left, right)),
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  /// Serialises these tests; other modules' tests may still hold the helper for
  /// a moment (their callers then start a thread of their own), so a test that
  /// needs the helper waits for it.
  static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

  fn on_the_helper<A, B: Send>(mut left: impl FnOnce() -> A, mut right: impl FnOnce() -> B + Send) -> (A, B) {
    loop {
      match run_beside(left, right) {
        Ok(both) => return both,
        Err((l, r)) => (left, right) = (l, r),
      }
      thread::sleep(Duration::from_millis(1));
    }
  }

  #[test]
  fn runs_both_halves_with_borrowed_data_again_and_again() {
    let _one = lock(&ONE_AT_A_TIME);
    let mut data = vec![0u32; 1000];
    for round in 0..500u32 {
      let (left, right) = data.split_at_mut(500);
      let (a, b) = on_the_helper(
        || {
          left.iter_mut().for_each(|x| *x += round);
          left.len()
        },
        || {
          right.iter_mut().for_each(|x| *x += 2 * round);
          thread::current().name().map(str::to_owned)
        },
      );
      assert_eq!(a, 500);
      // On the helper, or here if taken back before the helper began.
      assert!(b.as_deref() == Some("readfile-utf8-helper") || b == thread::current().name().map(str::to_owned));
    }
    let sum: u32 = (0..500).sum();
    assert!(data[..500].iter().all(|&x| x == sum));
    assert!(data[500..].iter().all(|&x| x == 2 * sum));
  }

  #[test]
  fn a_right_half_the_helper_has_begun_runs_there() {
    let _one = lock(&ONE_AT_A_TIME);
    let begun = AtomicBool::new(false);
    let (waited, on) = on_the_helper(
      || {
        let start = Instant::now();
        while !begun.load(Ordering::Acquire) && start.elapsed() < Duration::from_secs(10) {
          std::hint::spin_loop();
        }
        begun.load(Ordering::Acquire)
      },
      || {
        begun.store(true, Ordering::Release);
        thread::current().name().map(str::to_owned)
      },
    );
    assert!(waited, "the helper never began the right half");
    assert_eq!(on.as_deref(), Some("readfile-utf8-helper"));
  }

  #[test]
  fn a_right_half_the_helper_never_takes_runs_on_the_caller() {
    // A helper no thread serves: every task handed over is still there when
    // the left half is done.
    let idle: &'static Helper = Box::leak(Box::new(Helper::new()));
    let caller = thread::current().id();
    for round in 0..3 {
      let (left, right) = idle
        .run_beside(|| round, || thread::current().id())
        .unwrap_or_else(|_| panic!("the idle helper was busy"));
      assert_eq!((left, right), (round, caller));
    }
  }

  #[test]
  fn hand_overs_around_the_spin_time_are_never_lost() {
    let _one = lock(&ONE_AT_A_TIME);
    // Halves and gaps between hand-overs on both sides of HELPER_SPIN_FOR: each side
    // is found spinning, sleeping, or between the two.
    let busy = |micros: u64| {
      let start = Instant::now();
      while start.elapsed() < Duration::from_micros(micros) {
        std::hint::spin_loop();
      }
    };
    let span = 2 * HELPER_SPIN_FOR.as_micros() as u64;
    let mut seed = 0x2545_f491_u64;
    let mut next = move || {
      seed = seed
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
      (seed >> 33) % span
    };
    for round in 0..1000u64 {
      let (left_for, right_for, gap) = (next(), next(), next());
      let (a, b) = on_the_helper(|| busy(left_for), || (busy(right_for), round).1);
      assert_eq!((a, b), ((), round));
      busy(gap);
    }
  }

  #[test]
  fn a_panic_on_the_helper_reaches_the_caller_and_the_helper_serves_on() {
    let _one = lock(&ONE_AT_A_TIME);
    let caught = panic::catch_unwind(|| on_the_helper(|| 1, || -> u8 { panic!("right half failed") }));
    assert!(caught.is_err());
    assert_eq!(on_the_helper(|| 1, || 2), (1, 2));
  }

  #[test]
  fn a_child_forked_without_exec_does_not_wait_for_a_helper_it_lacks() {
    let _one = lock(&ONE_AT_A_TIME);
    // This process has its helper.
    assert_eq!(on_the_helper(|| 1, || 2), (1, 2));
    // SAFETY: the child only calls run_beside, which refuses before it locks or
    // allocates, and ends with _exit; alarm ends it if it waits instead.
    let child = unsafe { libc::fork() };
    assert!(child >= 0, "fork failed");
    if child == 0 {
      // SAFETY: async-signal-safe calls only, in the child.
      unsafe {
        libc::alarm(5);
        libc::_exit(if run_beside(|| (), || ()).is_err() { 0 } else { 1 });
      }
    }
    let mut status = 0;
    // SAFETY: waits for the child made above; `status` is a valid out-pointer.
    assert_eq!(unsafe { libc::waitpid(child, &mut status, 0) }, child);
    assert!(
      libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
      "child status {status:#x}"
    );
  }

  #[test]
  fn a_second_caller_at_the_same_time_is_told_the_helper_is_busy() {
    let _one = lock(&ONE_AT_A_TIME);
    let (second_was_refused, ()) = on_the_helper(
      || thread::spawn(|| run_beside(|| (), || ()).is_err()).join().unwrap(),
      || thread::sleep(Duration::from_millis(50)),
    );
    assert!(second_was_refused, "a second caller got the busy helper");
  }
}
