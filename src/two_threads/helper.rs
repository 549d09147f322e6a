//! A second thread, for the half of a split job that the calling thread does
//! not do itself (`super::both`).
//!
//! A thread started per call (stack mmap, clone, munmap) costs more than the
//! split of a 2 MiB read saves; handing a task to a thread that waits for one
//! costs far less. The helper sleeps while it has no task (it never spins, so
//! it takes no core from anyone between calls) and ends once it has had none
//! for `KEEP_IDLE_FOR`, as idle buffers go: no thread of ours outlives the
//! work. A task it has not begun by the time the caller's own half is done
//! is taken back and run by the caller, so a helper woken late (its core busy
//! with V8's GC threads, say) makes a split no slower than none.
//!
//! One helper serves one caller at a time; a second caller at the same moment
//! (another worker_thread) is told it is busy and starts its own thread.

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::thread;
use std::time::Instant;

use crate::limits::KEEP_IDLE_FOR;

type Task = Box<dyn FnOnce() + Send + 'static>;

/// What the helper and its caller share, under `Helper::state`.
struct State {
  /// The task handed over and not yet taken by the helper.
  task: Option<Task>,
  /// A helper thread is running (asleep or not); it ends after an idle while.
  alive: bool,
}

struct Helper {
  /// Held by the caller whose task the helper has (or is about to get).
  claimed: AtomicBool,
  state: Mutex<State>,
  /// Signalled when a task is handed over (the helper waits on it).
  task_ready: Condvar,
  /// The helper took the task handed over, and is running it.
  begun: AtomicBool,
  /// The task handed over has run and been dropped (with all it borrowed).
  finished: AtomicBool,
  /// Signalled when `finished` is set (the caller may wait on it).
  task_done: Condvar,
}

static HELPER: Helper = Helper::new();

/// Locks `m`, whether or not a thread panicked while holding it (none of our
/// critical sections can leave the data half-updated).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
  m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Helper {
  /// A helper with no task and no thread yet.
  const fn new() -> Helper {
    Helper {
      claimed: AtomicBool::new(false),
      state: Mutex::new(State {
        task: None,
        alive: false,
      }),
      task_ready: Condvar::new(),
      begun: AtomicBool::new(false),
      finished: AtomicBool::new(false),
      task_done: Condvar::new(),
    }
  }

  /// The helper thread's loop: wait for a task, run it, say so; end after
  /// `KEEP_IDLE_FOR` without one.
  fn serve(&'static self) {
    let mut state = lock(&self.state);
    loop {
      if let Some(task) = state.task.take() {
        self.begun.store(true, Ordering::Release);
        drop(state);
        // Never unwinds: `run_beside` wraps the work in catch_unwind.
        task();
        state = lock(&self.state);
        self.finished.store(true, Ordering::Release);
        self.task_done.notify_one();
        continue;
      }
      let (next, waited) = self
        .task_ready
        .wait_timeout(state, KEEP_IDLE_FOR)
        .unwrap_or_else(|e| e.into_inner());
      state = next;
      if waited.timed_out() && state.task.is_none() {
        state.alive = false;
        return;
      }
    }
  }

  /// `run_beside` with this helper. If it has not taken `right` by the time
  /// `left` is done, `right` runs on this thread instead.
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
    let waiting = WaitForHelper(self, Instant::now());
    if let Err(task) = self.hand_over(task) {
      // No helper thread could be started: both halves here.
      task();
      self.finished.store(true, Ordering::Release);
    }
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

  /// Hands `task` to the helper, starting its thread if it has none; gives the
  /// task back if no thread could be started.
  fn hand_over(&'static self, task: Task) -> Result<(), Task> {
    self.begun.store(false, Ordering::Relaxed);
    self.finished.store(false, Ordering::Relaxed);
    let mut state = lock(&self.state);
    if !state.alive {
      let started = thread::Builder::new()
        .name("readfile-utf8-helper".into())
        .spawn(move || self.serve());
      if started.is_err() {
        return Err(task);
      }
      state.alive = true;
    }
    state.task = Some(task);
    self.task_ready.notify_one();
    Ok(())
  }

  /// The task handed over, if the helper has not taken it yet: then it never
  /// will, and the helper counts as finished.
  fn take_back(&self) -> Option<Task> {
    let task = lock(&self.state).task.take()?;
    self.finished.store(true, Ordering::Release);
    Some(task)
  }

  /// Blocks until the task handed over has finished, then frees the helper.
  /// While the helper runs it, it is about as far along as the caller was
  /// (the halves are equal): the caller spins for as long as its own half
  /// took, and only then sleeps, which would add a wake-up to every split.
  fn wait_finished(&self, started: Instant) {
    let spin_for = started.elapsed();
    let spinning = Instant::now();
    while !self.finished.load(Ordering::Acquire) && self.begun.load(Ordering::Acquire) && spinning.elapsed() < spin_for
    {
      std::hint::spin_loop();
    }
    let mut state = lock(&self.state);
    while !self.finished.load(Ordering::Acquire) {
      state = self.task_done.wait(state).unwrap_or_else(|e| e.into_inner());
    }
    drop(state);
    self.claimed.store(false, Ordering::Release);
  }
}

/// Waits for the helper's task when dropped, so that `run_beside` cannot
/// return or unwind while the helper may still use what the task borrows.
struct WaitForHelper(&'static Helper, Instant);

impl Drop for WaitForHelper {
  fn drop(&mut self) {
    self.0.wait_finished(self.1);
  }
}

/// The process the helper belongs to: a child made by fork(2) without exec
/// has no helper thread, so it must not wait for one.
static PROCESS: std::sync::OnceLock<u32> = std::sync::OnceLock::new();

/// Runs `right` on the helper and `left` on this thread, at the same time, and
/// returns both results. `Err((left, right))`, with neither run, if the helper
/// is busy (or this is a child forked from the process that had it). A panic
/// in `right` is re-raised here.
pub(super) fn run_beside<A, B, L, R>(left: L, right: R) -> Result<(A, B), (L, R)>
where
  B: Send,
  L: FnOnce() -> A,
  R: FnOnce() -> B + Send,
{
  if *PROCESS.get_or_init(std::process::id) != std::process::id() {
    return Err((left, right));
  }
  HELPER.run_beside(left, right)
}

#[cfg(test)]
mod tests {
  use super::*;
  use std::time::Duration;

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
    // A helper said to be alive that no thread serves: every task handed over
    // is still there when the left half is done.
    let idle: &'static Helper = Box::leak(Box::new(Helper::new()));
    lock(&idle.state).alive = true;
    let caller = thread::current().id();
    for round in 0..3 {
      let (left, right) = idle
        .run_beside(|| round, || thread::current().id())
        .unwrap_or_else(|_| panic!("the idle helper was busy"));
      assert_eq!((left, right), (round, caller));
    }
  }

  #[test]
  fn hand_overs_with_halves_and_gaps_of_every_length_are_never_lost() {
    let _one = lock(&ONE_AT_A_TIME);
    // Halves and gaps from nothing to well past a wake-up: each side is found
    // running, spinning, asleep, or between the two.
    let busy = |micros: u64| {
      let start = Instant::now();
      while start.elapsed() < Duration::from_micros(micros) {
        std::hint::spin_loop();
      }
    };
    let mut seed = 0x2545_f491_u64;
    let mut next = move || {
      seed = seed
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
      (seed >> 33) % 600
    };
    for round in 0..1000u64 {
      let (left_for, right_for, gap) = (next(), next(), next());
      let (a, b) = on_the_helper(|| busy(left_for), || (busy(right_for), round).1);
      assert_eq!((a, b), ((), round));
      busy(gap);
    }
  }

  #[test]
  fn the_helper_thread_ends_after_an_idle_while_and_comes_back_when_needed() {
    let _one = lock(&ONE_AT_A_TIME);
    assert_eq!(on_the_helper(|| 1, || 2), (1, 2));
    let deadline = Instant::now() + KEEP_IDLE_FOR * 4 + Duration::from_secs(2);
    while lock(&HELPER.state).alive {
      assert!(Instant::now() < deadline, "the helper thread is still there");
      thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(on_the_helper(|| 3, || 4), (3, 4));
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
