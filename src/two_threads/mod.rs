//! Runs two halves of one job at the same time: this thread and a second one.
//! A leaf that `read` (two halves of a large file) and `transcode` (two halves
//! of its conversion) both use; it knows nothing of files or text.

mod helper;

use std::thread;

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
  (len / 2) & !(crate::limits::facts::PAGE_BYTES - 1)
}
