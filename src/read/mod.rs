//! Step 1 of the pipeline: get the file's bytes into one owned buffer.
//!
//! Two readers behind one interface, chosen per target:
//! - `syscalls` (Linux): raw syscalls, large files read as two halves at once;
//! - `portable` (every other target, and Linux with the `portable-read`
//!   feature, which is how CI tests it): `std::fs`. Where its failure could
//!   differ from fs's error, it answers `ReadError::FsAnswers` and fs reads again.

#[cfg(all(target_os = "linux", not(feature = "portable-read")))]
mod syscall;
#[cfg(all(target_os = "linux", not(feature = "portable-read")))]
mod syscalls;
#[cfg(all(target_os = "linux", not(feature = "portable-read")))]
use syscalls as reader;

#[cfg(any(not(target_os = "linux"), feature = "portable-read"))]
mod portable;
#[cfg(any(not(target_os = "linux"), feature = "portable-read"))]
use portable as reader;

use std::ffi::CStr;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use crate::buffers;
use crate::limits::facts::{MAX_STRING_LENGTH, PAGE_BYTES, PATH_MAX_BYTES};
pub(crate) use crate::outcome::{ReadError, ReadFacts, Syscall};

/// Which reader this build has: "syscalls" or "portable".
pub(crate) const READER: &str = reader::NAME;

/// How a read is made: the choices its callers differ in.
#[derive(Clone, Copy)]
pub(crate) struct How<'a> {
  /// A large regular file we open may be read as two halves by two threads
  /// (`SPLIT_READ_MIN_BYTES`): only for a sync read, whose caller waits for
  /// it; reads made beside others (async, a batch's) leave the cores to them.
  pub(crate) split: bool,
  /// Only a regular file is opened, found by a stat first; anything else (a
  /// FIFO, a device) is `ReadError::NotRegular`, never opened: a read made
  /// ahead of a loop's order must not wait, nor touch what a loop that
  /// stopped earlier would not have.
  pub(crate) regular_only: bool,
  /// Set by the read's owner to stop it between two chunks
  /// (`ReadError::Cancelled`); `&NEVER_CANCELLED` for reads nobody stops.
  pub(crate) cancel: &'a AtomicBool,
}

impl How<'static> {
  /// A sync call's read: split where large, never stopped.
  pub(crate) const SYNC: How<'static> = How {
    split: true,
    regular_only: false,
    cancel: &NEVER_CANCELLED,
  };
}

impl<'a> How<'a> {
  /// A read made beside others (async, a batch's), stopped by `cancel`.
  pub(crate) fn beside_others(cancel: &'a AtomicBool) -> How<'a> {
    How {
      split: false,
      regular_only: false,
      cancel,
    }
  }
}

/// What is read.
#[derive(Clone, Copy)]
pub(crate) enum Source<'a> {
  /// The file at a path, opened with fs-style numeric flags (`fs.constants`).
  /// A regular file of kMaxLength bytes or more is not read
  /// (`ReadError::TooLarge`): readFileSync refuses it after reading it all.
  Path(&'a CStr, i32),
  /// A caller's fd, from its current position to EOF; never closed, never
  /// split (pread needs the offset, and where it stands is the caller's), and
  /// read whatever its size: its offset may leave less than kMaxLength bytes
  /// of a larger file, which is then read as one of unknown size, never
  /// allocated at its size.
  Fd(i32),
}

/// Reads `source` whole into `buf` (its old contents are dropped), as `how`
/// says. A failed read of a path, and of a caller's fd before any of its bytes
/// were read, is `ReadError::FsAnswers` (`for_fs`): fs answers it. After some
/// bytes, they are gone from a pipe or a caller's offset, so the error is
/// ours to report.
pub(crate) fn read(source: Source, how: How, buf: &mut Vec<u8>) -> Result<ReadFacts, ReadError> {
  match source {
    Source::Path(path, flags) if how.regular_only => reader::read_regular_path(path, flags, how.cancel, buf),
    Source::Path(path, flags) => reader::read_path(path, flags, how.split, how.cancel, buf),
    Source::Fd(fd) => {
      buf.clear();
      return reader::read_fd(fd, how.cancel, buf).map_err(|e| if buf.is_empty() { for_fs(e) } else { e });
    }
  }
  .map_err(for_fs)
}

/// Runs `f` on `path` (raw bytes, as fs passes them to the OS) NUL-terminated,
/// on the stack when it is short. A path with a NUL byte inside is fs's to
/// reject (`ReadError::FsAnswers`).
pub(crate) fn with_terminated<R>(path: &[u8], f: impl FnOnce(&CStr) -> Result<R, ReadError>) -> Result<R, ReadError> {
  let mut stack = [MaybeUninit::<u8>::uninit(); PATH_MAX_BYTES];
  let heap: Vec<u8>;
  let terminated: &[u8] = if path.len() < PATH_MAX_BYTES {
    stack[..path.len()].write_copy_of_slice(path);
    stack[path.len()].write(0);
    // SAFETY: the first `path.len() + 1` bytes were just written.
    unsafe { std::slice::from_raw_parts(stack.as_ptr().cast::<u8>(), path.len() + 1) }
  } else {
    heap = [path, b"\0"].concat();
    &heap
  };
  f(CStr::from_bytes_with_nul(terminated).map_err(|_| ReadError::FsAnswers)?)
}

/// Testing knob: a lower limit for reads of unknown length (a byte count), so
/// that the tests of endless inputs need not read 512 MiB each. It can only
/// lower the limit.
const TEST_MAX_BYTES_VAR: &str = "READFILE_UTF8_TEST_MAX_BYTES";

/// Where reads of unknown length stop (`ReadError::TooLong`): kMaxLength, or
/// the lower `READFILE_UTF8_TEST_MAX_BYTES`, read once, at the first read.
pub(crate) fn max_bytes() -> usize {
  static MAX: OnceLock<usize> = OnceLock::new();
  *MAX.get_or_init(|| max_bytes_from(std::env::var(TEST_MAX_BYTES_VAR).ok().as_deref()))
}

/// kMaxLength, or `test_value` (a byte count) if it is lower; anything else
/// (not a number, higher, absent) leaves the limit as it is.
fn max_bytes_from(test_value: Option<&str>) -> usize {
  test_value
    .and_then(|v| v.trim().parse::<usize>().ok())
    .map_or(MAX_STRING_LENGTH, |lower| lower.clamp(1, MAX_STRING_LENGTH))
}

/// When a read stops before EOF.
#[derive(Clone, Copy)]
struct Stop<'a> {
  /// Reads of unknown length stop at this many bytes (`max_bytes()`).
  max: usize,
  /// Set by the read's owner to stop it between two chunks.
  cancel: &'a AtomicBool,
}

/// The cancel flag of reads that cannot be cancelled (the synchronous ones, a
/// batch's, an async read without a signal).
pub(crate) static NEVER_CANCELLED: AtomicBool = AtomicBool::new(false);

/// Whether the read's owner asked it to stop; checked between chunks.
pub(crate) fn cancelled(cancel: &AtomicBool) -> bool {
  cancel.load(Ordering::Relaxed)
}

/// A path whose read failed is fs's to answer (`ReadError::FsAnswers`): with its
/// own error, or, through a layer that patches fs (Yarn PnP, Electron's asar,
/// memfs), with the file it serves. Nothing was consumed that fs could not
/// read again: opening a path has no effect a second open would undo.
fn for_fs(e: ReadError) -> ReadError {
  match e {
    ReadError::Os { .. } => ReadError::FsAnswers,
    e => e,
  }
}

/// A sync read of raw path bytes into a new buffer (for tests and tools).
pub fn read_path(path: &[u8], flags: i32) -> Result<Vec<u8>, ReadError> {
  let mut buf = Vec::new();
  with_terminated(path, |path| read(Source::Path(path, flags), How::SYNC, &mut buf))?;
  Ok(buf)
}

/// A sync read of a caller's fd into a new buffer (for tests and tools).
pub fn read_fd(fd: i32) -> Result<Vec<u8>, ReadError> {
  let mut buf = Vec::new();
  read(Source::Fd(fd), How::SYNC, &mut buf)?;
  Ok(buf)
}

/// Makes `buf` empty with room for `wanted` bytes: a buffer too small is
/// swapped for a pooled one, not grown, so its old contents are never copied.
fn empty_with_room(buf: &mut Vec<u8>, wanted: usize) {
  if buf.capacity() < wanted {
    buffers::give(std::mem::replace(buf, buffers::take(wanted)));
  }
  buf.clear();
}

/// Makes room in a full `buf` for the next bytes of a read of unknown length:
/// doubling, but never past `max` bytes in all, so an endless input takes no
/// more memory than the longest string it could become.
fn grow_towards(buf: &mut Vec<u8>, max: usize) {
  let target = buf.capacity().saturating_mul(2).max(PAGE_BYTES).min(max);
  buf.reserve_exact(target.saturating_sub(buf.len()));
}

/// Ends a read that reached `max_bytes()`: its buffer is freed, not kept for
/// reuse (nor pooled), since it is as large as a read can be.
fn too_long(buf: &mut Vec<u8>) -> ReadError {
  *buf = Vec::new();
  ReadError::TooLong
}

/// The size a read can go by: a regular file's, unless it is 0 (procfs) or
/// too large for any string. Such a file, read through a caller's fd whose
/// offset may leave less of it, is read as one of unknown length, which stops
/// at `max_bytes()`: room for its whole size is never asked for at once.
fn known_size(regular: bool, size: usize) -> Option<usize> {
  (regular && size > 0 && size < MAX_STRING_LENGTH).then_some(size)
}

/// The room a read starts with: the file's known size and one byte more
/// (getting it means the file grew), or a first chunk.
fn room_for(known_size: Option<usize>) -> usize {
  known_size.map_or(PAGE_BYTES, |size| size + 1)
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn the_test_limit_can_only_lower_max_bytes() {
    assert_eq!(max_bytes_from(None), MAX_STRING_LENGTH);
    assert_eq!(max_bytes_from(Some("3145733")), 3_145_733);
    assert_eq!(max_bytes_from(Some(" 4096\n")), 4096);
    assert_eq!(max_bytes_from(Some("0")), 1);
    assert_eq!(max_bytes_from(Some("99999999999")), MAX_STRING_LENGTH);
    assert_eq!(max_bytes_from(Some("-5")), MAX_STRING_LENGTH);
    assert_eq!(max_bytes_from(Some("1MiB")), MAX_STRING_LENGTH);
    assert_eq!(max_bytes_from(Some("")), MAX_STRING_LENGTH);
  }

  #[test]
  fn only_a_regular_file_that_a_string_could_hold_is_read_by_its_size() {
    assert_eq!(known_size(true, 10), Some(10));
    assert_eq!(known_size(true, MAX_STRING_LENGTH - 1), Some(MAX_STRING_LENGTH - 1));
    assert_eq!(known_size(true, MAX_STRING_LENGTH), None);
    assert_eq!(known_size(true, 0), None);
    assert_eq!(known_size(false, 10), None);
    assert_eq!(room_for(Some(10)), 11);
    assert_eq!(room_for(None), PAGE_BYTES);
  }

  #[test]
  fn growth_doubles_up_to_the_limit_and_never_past_it() {
    let mut buf: Vec<u8> = Vec::new();
    grow_towards(&mut buf, 100_000);
    assert_eq!(buf.capacity(), PAGE_BYTES);
    for expected in [8_192, 16_384, 32_768, 65_536, 100_000] {
      buf.resize(buf.capacity(), 0);
      grow_towards(&mut buf, 100_000);
      assert_eq!(buf.capacity(), expected);
    }
    let mut buf = vec![1u8; 10];
    assert!(matches!(too_long(&mut buf), ReadError::TooLong));
    assert_eq!(buf.capacity(), 0, "the buffer is freed");
  }
}
