//! Runs two halves of one job at the same time: this thread and a second one.
//! A leaf that `read` (two halves of a large file) and `transcode` (two halves
//! of its conversion) both use; it knows nothing of files or text.

mod helper;

use std::cell::Cell;
use std::thread;
use std::time::{Duration, Instant};

use crate::limits::{SPLIT_LOOP_GAP, WAKE_HELPER_FROM_BYTES};

thread_local! {
  /// When this thread's last large sync read ended (`note_splittable_end`).
  static LAST_SPLITTABLE_END: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// Whether a read of `bytes` that could be split should be: while the helper
/// is awake, in a loop of large reads on this thread (the last one ended
/// within `SPLIT_LOOP_GAP`), and from `WAKE_HELPER_FROM_BYTES` on. After an
/// idle gap, waking a sleeping helper costs the caller more than the split
/// saves.
#[cfg_attr(any(not(target_os = "linux"), feature = "portable-read"), allow(dead_code))]
pub(crate) fn worth_splitting(bytes: usize) -> bool {
  worth_splitting_when(
    bytes,
    helper::awake(),
    LAST_SPLITTABLE_END.get().map(|end| end.elapsed()),
  )
}

/// `worth_splitting` with the helper's state and the time since this thread's
/// last large read ended (`None`: none yet) given.
#[cfg_attr(any(not(target_os = "linux"), feature = "portable-read"), allow(dead_code))]
fn worth_splitting_when(bytes: usize, helper_awake: bool, since_last: Option<Duration>) -> bool {
  bytes >= WAKE_HELPER_FROM_BYTES || helper_awake || since_last.is_some_and(|gap| gap < SPLIT_LOOP_GAP)
}

/// Notes that a large sync read (one that could have been split) ended now.
pub(crate) fn note_splittable_end() {
  LAST_SPLITTABLE_END.set(Some(Instant::now()));
}

/// Runs `left` on this thread and `right` on the helper thread (or, if another
/// caller has it, on a new thread), at the same time, and returns both results;
/// `None`, with neither run, if no thread could be started. A `right` the
/// helper has not begun when `left` is done runs on this thread after it, so
/// `right` must not wait for anything `left` does. A panic in `right` is
/// re-raised here (and caught at the napi boundary).
pub(crate) fn both<A, B: Send>(left: impl FnOnce() -> A, right: impl FnOnce() -> B + Send) -> Option<(A, B)> {
  let (left, right) = match helper::run_beside(left, right) {
    Ok(both) => return Some(both),
    Err(not_run) => not_run,
  };
  thread::scope(|scope| {
    let helper = thread::Builder::new().spawn_scoped(scope, right).ok()?;
    let left = left();
    let right = helper.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
    Some((left, right))
  })
}

/// Where a split job divides `len` bytes: the middle, rounded down to a page
/// boundary. A file read as two halves is split here and its conversion just
/// after, so each thread converts the bytes it has read, still in its cache.
pub fn page_aligned_middle(len: usize) -> usize {
  (len / 2) & !4095
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn a_sleeping_helper_is_woken_only_in_a_loop_of_jobs_or_for_a_large_one() {
    let small = WAKE_HELPER_FROM_BYTES - 1;
    let soon = Some(SPLIT_LOOP_GAP / 2);
    let late = Some(SPLIT_LOOP_GAP * 2);
    // Awake: any job is split.
    assert!(worth_splitting_when(small, true, None));
    assert!(worth_splitting_when(small, true, late));
    // Asleep: a job soon after the last one (a loop), or a large one.
    assert!(worth_splitting_when(small, false, soon));
    assert!(worth_splitting_when(WAKE_HELPER_FROM_BYTES, false, None));
    assert!(worth_splitting_when(WAKE_HELPER_FROM_BYTES, false, late));
    // Asleep, a smaller job alone or after an idle gap: done on one thread.
    assert!(!worth_splitting_when(small, false, None));
    assert!(!worth_splitting_when(small, false, late));
  }
}
