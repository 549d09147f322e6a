//! `readFilesUtf8`: a list of files read by several threads at once (the
//! ring and its readers: `ring`; one entry's read: `entry`), the JS strings
//! made on the JS thread in list order. (Async batches run on the pool of
//! async reads, `exports::pool`.)
//!
//! The calling thread reads too (the entry it needs next it reads and makes
//! at once), and each call (`readFilesNext`) returns at the first entry that
//! is not a string, which lib/batch.js then has fs answer before it goes on
//! or stops. A batch has a loop's side effects: what its readers read ahead of
//! the JS thread depends on `Ahead`, and once the caller stops
//! (`readFilesCancel`), the call returns at once: readers still busy end on
//! their own, their reads stopped between chunks.

mod entry;
mod ring;

use std::ptr;
use std::sync::Arc;

use napi::bindgen_prelude::{Array, External, ToNapiValue};
use napi::{sys, Env, JsValue};
use napi_derive::napi;

use self::entry::{js_value, Ahead, Done, Reading};
use self::ring::{batch_run, ends_a_run, lock, result_bytes, taken_max_bytes, Batch, BatchHandle};
use super::args::collect_paths;
use crate::external_memory;
use crate::js_string::Reply;
use crate::limits::tuned;
use crate::outcome::{Outcome, Text, STRING_TOO_LONG};

/// Most threads a batch starts (`BATCH_MAX_THREADS`).
fn max_threads() -> u32 {
  tuned!(BATCH_MAX_THREADS) as u32
}

/// `readFilesOpen(paths, flags, concurrency, ahead)`: a sync batch of
/// `concurrency` threads in all, the JS thread included; `ahead` (0, 1, 2)
/// says what its readers may read before the JS thread needs it (`Ahead`).
/// `readFilesNext` takes its results.
#[napi(js_name = "readFilesOpen", ts_return_type = "ExternalObject<'batch'>")]
pub fn read_files_open(
  env: Env,
  paths: Array,
  flags: i32,
  concurrency: u32,
  ahead: u32,
) -> napi::Result<External<BatchHandle>> {
  let paths = collect_paths(env.raw(), &paths)?;
  let ahead = Ahead::from_js(ahead);
  let readers = match ahead {
    Ahead::Nothing => 0,
    _ => (concurrency.clamp(1, max_threads()) as usize - 1).min(paths.len().saturating_sub(1)),
  };
  let batch = Arc::new(Batch::new(
    paths,
    Reading::new(flags, readers + 1, concurrency),
    ahead,
    readers,
    STRING_TOO_LONG,
  ));
  Batch::start_readers(&batch, readers);
  Ok(External::new(BatchHandle(batch)))
}

/// `readFilesNext(handle, out)`: makes the values of the sync batch's next
/// entries and stores them in `out` at their indices, up to the first entry
/// that is not a string (its failure code is stored instead): returns that
/// entry's index, or the list's length once every entry is a string. The next
/// call goes on after that entry.
#[napi(js_name = "readFilesNext")]
pub fn read_files_next(env: Env, handle: &External<BatchHandle>, out: Array) -> napi::Result<u32> {
  let env = env.raw();
  let batch = &handle.0;
  let _tally = external_memory::BatchTally::open(env);
  let stopped_at = next_sync(env, batch, out.raw())?;
  if stopped_at >= batch.len() {
    batch.end(true);
  }
  Ok(stopped_at as u32)
}

/// The JS thread's part of a sync batch: takes the results in order and makes
/// their values; reads a file itself while the next result is not ready.
/// Returns the index of the first entry that is not a string, or the length.
fn next_sync(env: sys::napi_env, batch: &Batch, out: sys::napi_value) -> napi::Result<usize> {
  let mut taken = Vec::with_capacity(batch_run());
  let mut spent = Vec::new();
  loop {
    let mut st = lock(&batch.state);
    batch.keep_spares(&mut st, &mut spent);
    if st.emitted >= batch.len() {
      return Ok(batch.len());
    }
    // The entry needed next, if no reader has it: read and made now, as a
    // single read makes it, never waiting in the ring.
    if taken.is_empty() && st.claimed == st.emitted && batch.may_claim(&st) {
      let index = st.claimed;
      st.claimed += 1;
      drop(st);
      let made = made_now(env, batch, out, index)?;
      batch.emitted_now(&mut lock(&batch.state));
      if !made {
        return Ok(index);
      }
      continue;
    }
    // Strings are made a scope's worth at a time: meanwhile this thread reads
    // ahead while it can, so one lock and one handle scope serve many files.
    let mut taken_bytes = 0;
    loop {
      let before = taken.len();
      batch.take_ready(&mut st, &mut taken, batch_run() - before, true);
      taken_bytes += taken[before..]
        .iter()
        .map(|(_, done)| result_bytes(done))
        .sum::<usize>();
      let run_ended = taken.last().is_some_and(|(_, done)| ends_a_run(done));
      if run_ended || st.emitted >= batch.len() || taken.len() >= batch_run() || taken_bytes >= taken_max_bytes() {
        break;
      }
      if batch.may_claim(&st) && st.claimed > st.emitted {
        let index = st.claimed;
        st.claimed += 1;
        drop(st);
        let done = batch.read_ahead(index);
        st = lock(&batch.state);
        batch.deposit(&mut st, index, done);
        continue;
      }
      if !taken.is_empty() || (st.claimed == st.emitted && batch.may_claim(&st)) {
        break;
      }
      st.js_waiting = true;
      st = batch.ready.wait(st).unwrap_or_else(|e| e.into_inner());
      st.js_waiting = false;
    }
    drop(st);
    spent.drain(..).for_each(Text::give_back);
    if let Some(stopped_at) = set_elements(env, batch, out, &mut taken, &mut spent)? {
      return Ok(stopped_at);
    }
  }
}

/// Reads entry `index` on the JS thread, in list order, and stores its value
/// in `out`; returns whether it is a string.
fn made_now(env: sys::napi_env, batch: &Batch, out: sys::napi_value, index: usize) -> napi::Result<bool> {
  let _scope = HandleScope::open(env)?;
  let reply = batch.read_now(env, index);
  let made = reply.is_string();
  // SAFETY: `env` is the live env of this call, on its JS thread.
  let value = unsafe { Reply::to_napi_value(env, reply) }?;
  set_element(env, out, index, value)?;
  Ok(made)
}

/// Makes the values of `taken` and stores them in `out` at their indices, the
/// entries left `InOrder` read now; returns the index of the first that is
/// not a string, if one is (sync: the last taken, see `take_ready`).
fn set_elements(
  env: sys::napi_env,
  batch: &Batch,
  out: sys::napi_value,
  taken: &mut Vec<(usize, Done)>,
  spent: &mut Vec<Text>,
) -> napi::Result<Option<usize>> {
  let _scope = HandleScope::open(env)?;
  let mut first_not_made = None;
  for (index, done) in taken.drain(..) {
    let made = match done {
      Done::Read(outcome) => {
        let made = !matches!(outcome, Outcome::Failure(_));
        js_value(env, outcome, spent).and_then(|value| set_element(env, out, index, value))?;
        made
      }
      Done::InOrder => made_now(env, batch, out, index)?,
    };
    if !made {
      first_not_made = first_not_made.or(Some(index));
    }
  }
  Ok(first_not_made)
}

fn set_element(env: sys::napi_env, out: sys::napi_value, index: usize, value: sys::napi_value) -> napi::Result<()> {
  // SAFETY: `out` is a live array and `value` a live value of the current scope.
  napi::check_status!(unsafe { sys::napi_set_element(env, out, index as u32, value) })
}

/// A handle scope, closed when dropped: the values made in it are then free
/// to be collected once nothing else holds them.
struct HandleScope {
  env: sys::napi_env,
  raw: sys::napi_handle_scope,
}

impl HandleScope {
  fn open(env: sys::napi_env) -> napi::Result<Self> {
    let mut raw = ptr::null_mut();
    // SAFETY: `env` is the live env of the current call, on its JS thread.
    napi::check_status!(unsafe { sys::napi_open_handle_scope(env, &mut raw) })?;
    Ok(HandleScope { env, raw })
  }
}

impl Drop for HandleScope {
  fn drop(&mut self) {
    // SAFETY: `raw` was opened by `open` in this call, and every scope opened
    // after it is dropped before it (each where it was opened).
    unsafe { sys::napi_close_handle_scope(self.env, self.raw) };
  }
}

/// `readFilesSettle()`: reports to V8's GC the external strings' bytes that
/// the last sync batch still owes (lib/batch.js calls it in a microtask).
#[napi(js_name = "readFilesSettle")]
pub fn read_files_settle(env: Env) {
  external_memory::report_ended_batches(env.raw());
}

/// `readFilesCancel(handle)`: the batch stops (it threw, or is done): no further file is started, reads in progress stop at
/// their next chunk, and nothing waits for them. Does nothing to a batch
/// that is over.
#[napi(js_name = "readFilesCancel")]
pub fn read_files_cancel(handle: &External<BatchHandle>) {
  handle.0.end(false);
}

/// `readFilesLength(paths, flags, concurrency)`: the batch's read step alone,
/// what its scaling is compared with: every file read on `concurrency`
/// threads (this one included), each thread into one buffer reused for all
/// its files, nothing converted, no string made, no ring. Returns the bytes
/// read; failed entries count nothing. Only in the bench build.
#[cfg(feature = "bench")]
#[napi(js_name = "readFilesLength")]
pub fn read_files_length(env: Env, paths: Array, flags: i32, concurrency: u32) -> napi::Result<f64> {
  use std::sync::atomic::{AtomicUsize, Ordering};
  use std::thread;

  use crate::buffers;

  let paths = collect_paths(env.raw(), &paths)?;
  let threads = (concurrency.clamp(1, max_threads()) as usize).min(paths.len().max(1));
  let reading = Reading::new(flags, threads, concurrency);
  let next = AtomicUsize::new(0);
  let read_all = || {
    let mut buf = Vec::new();
    let mut total = 0;
    loop {
      let index = next.fetch_add(1, Ordering::Relaxed);
      if index >= paths.len() {
        buffers::give(buf);
        return total;
      }
      if let Some(path) = paths.get(index) {
        let how = crate::read::How::beside_others(&crate::read::NEVER_CANCELLED);
        if entry::read_file(path, reading, how)(&mut buf).is_ok() {
          total += buf.len();
        }
      }
    }
  };
  let total = thread::scope(|scope| {
    let others: Vec<_> = (1..threads).map(|_| scope.spawn(read_all)).collect();
    let mine = read_all();
    mine + others.into_iter().map(|other| other.join().unwrap_or(0)).sum::<usize>()
  });
  Ok(total as f64)
}

#[cfg(all(test, unix))]
mod tests {
  use std::os::unix::ffi::OsStrExt;
  use std::time::Duration;

  use super::ring::spares_max;
  use super::*;
  use crate::buffers;
  use crate::outcome::FS_ANSWERS;

  fn paths_of(files: &[std::path::PathBuf]) -> crate::exports::args::Paths {
    let mut paths = crate::exports::args::Paths::new();
    for path in files {
      paths.push(Some(path.as_os_str().as_bytes()));
    }
    paths
  }

  /// Takes every result of `batch` as the JS thread does, without JS: waits
  /// for the next one whenever none is ready.
  fn take_all(batch: &Batch, mut each: impl FnMut(usize, Done, &mut Vec<Text>)) {
    let (mut taken, mut spent) = (Vec::new(), Vec::new());
    loop {
      let mut st = lock(&batch.state);
      batch.keep_spares(&mut st, &mut spent);
      assert!(st.spares.len() <= spares_max(), "{} spares", st.spares.len());
      batch.take_ready(&mut st, &mut taken, usize::MAX, false);
      let over = st.emitted >= batch.len();
      if over {
        batch.keep_spares(&mut st, &mut spent);
        assert!(st.spares.is_empty(), "spares kept with no file left to read");
      } else if taken.is_empty() {
        st.js_waiting = true;
        drop(batch.ready.wait_timeout(st, Duration::from_millis(50)).unwrap());
        continue;
      }
      drop(st);
      for (index, done) in taken.drain(..) {
        each(index, done, &mut spent);
      }
      if over {
        return;
      }
    }
  }

  /// A batch run without JS: one reader thread, and this thread taking the
  /// results in order as the JS thread does, every buffer then spent.
  #[test]
  fn spares_stay_bounded_reused_buffers_hold_the_right_text_and_none_outlive_the_reads() {
    let dir = std::env::temp_dir().join(format!("readfile-utf8-spares-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let count = 700;
    let files: Vec<_> = (0..count)
      .map(|i| {
        let path = dir.join(format!("{i}.txt"));
        std::fs::write(&path, "é".repeat(i % 300)).unwrap();
        path
      })
      .collect();
    let batch = Arc::new(Batch::new(
      paths_of(&files),
      Reading::new(0, 2, 2),
      Ahead::Everything,
      1,
      STRING_TOO_LONG,
    ));
    assert_eq!(Batch::start_readers(&batch, 1), 1);
    let mut made = 0;
    take_all(&batch, |index, done, spent| {
      let Done::Read(Outcome::Text {
        text: Text::Latin1(units),
        ..
      }) = done
      else {
        panic!("entry {index}: not Latin-1 text");
      };
      assert_eq!(units, vec![0xe9; index % 300], "entry {index}");
      if buffers::is_kept_locally(&units) {
        spent.push(Text::Latin1(units));
      }
      made += 1;
    });
    assert_eq!(made, count);
    batch.end(true);
    std::fs::remove_dir_all(&dir).unwrap();
  }

  /// Reading ahead with `Ahead::RegularFiles`, a FIFO is neither opened nor
  /// waited for: it is left to the JS thread, in list order.
  #[test]
  fn read_ahead_of_regular_files_only_leaves_a_fifo_unopened() {
    let dir = std::env::temp_dir().join(format!("readfile-utf8-ahead-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("a.txt");
    std::fs::write(&file, "text").unwrap();
    let fifo = dir.join("fifo");
    let c_fifo = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_fifo.as_ptr(), 0o600) }, 0);
    let missing = dir.join("missing");
    let batch = Batch::new(
      paths_of(&[file, fifo.clone(), missing]),
      Reading::new(0, 2, 2),
      Ahead::RegularFiles,
      0,
      STRING_TOO_LONG,
    );
    // A FIFO that no writer opens: an open of it would block for ever.
    assert!(matches!(batch.read_ahead(1), Done::InOrder));
    assert!(matches!(batch.read_ahead(0), Done::Read(Outcome::Text { text: Text::Latin1(ref t), .. }) if t == b"text"));
    assert!(matches!(batch.read_ahead(2), Done::Read(Outcome::Failure(FS_ANSWERS))));
    // No writer was let through: a non-blocking open for writing finds no reader.
    let writer = std::fs::OpenOptions::new()
      .write(true)
      .custom_flags(libc::O_NONBLOCK)
      .open(&fifo);
    assert_eq!(writer.unwrap_err().raw_os_error(), Some(libc::ENXIO));
    std::fs::remove_dir_all(&dir).unwrap();
  }

  use std::os::unix::fs::OpenOptionsExt;
}
