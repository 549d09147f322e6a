//! Step 1 of the pipeline: get the file's bytes into one owned buffer.
//!
//! Two readers behind one interface, chosen per target:
//! - `syscalls` (Linux): raw syscalls, large files read as two halves at once;
//! - `portable` (every other target, and Linux with the `portable-read`
//!   feature, which is how CI tests it): `std::fs`. Where its failure could
//!   differ from fs's error, it answers `ReadError::ForFs` and fs reads again.

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
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use crate::buffers;
use crate::limits::{STACK_PATH_BYTES, UNKNOWN_SIZE_FIRST_CHUNK};
use crate::v8::MAX_STRING_LENGTH;

/// Which reader this build has: "syscalls" or "portable".
pub(crate) const READER: &str = reader::NAME;

/// The syscall that failed, so the JS layer can build fs's error (`syscall` field).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Syscall {
  /// open(2).
  Open = 0,
  /// Also used for a failed fstat: Node's utf8 path does not fstat, so the same
  /// fault reaches fs users as a failed read (e.g. EBADF for a bad fd).
  Read = 1,
}

/// Why a read failed.
#[derive(Debug, PartialEq, Eq)]
pub enum ReadError {
  /// An OS error: errno and the syscall that returned it.
  Os {
    /// The OS error number.
    errno: i32,
    /// The call that returned it.
    syscall: Syscall,
  },
  /// fs answers this call itself, with its own result or error: a path with a
  /// NUL byte, or what the portable reader cannot reproduce exactly.
  ForFs,
  /// A regular file of at least the caller's size limit
  /// (`read_path_limited_into`), not read.
  TooLarge,
  /// A file of unknown size (a device, a FIFO, procfs) or one that grew while
  /// it was read reached `max_bytes()`: no string can hold it, so the read
  /// stopped there (and freed its buffer).
  TooLong,
  /// The caller's cancel flag was set (an aborted async read): the read stopped
  /// between two chunks.
  Cancelled,
}

/// What a read found out about the bytes besides their count, for the steps
/// after it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadFacts {
  /// How many leading bytes are known to be ASCII: large files are read in
  /// chunks that are checked while still hot in cache, which spares
  /// `classify` a pass over cold memory.
  pub ascii_prefix: usize,
  /// Read as two halves by two threads: each half is in its own core's cache,
  /// so converting them is worth splitting the same way.
  pub in_halves: bool,
  /// Read by a batch whose threads fill the cores, or which was asked for
  /// one thread: the conversion stays on this thread too.
  pub alone: bool,
}

impl ReadFacts {
  /// These facts, for bytes read by one of a batch's threads (`alone`).
  pub(crate) fn read_alone(self) -> Self {
    ReadFacts { alone: true, ..self }
  }
}

/// Whether a large regular file may be read as two halves at explicit offsets
/// (the Linux reader's `read_halves`): only a file just opened for a
/// synchronous read. A caller's fd is never split: pread needs the offset, and
/// where it stands is the caller's.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Split {
  Allowed,
  Never,
}

/// Runs `f` on `path` (raw bytes, as fs passes them to the OS) NUL-terminated,
/// on the stack when it is short. A path with a NUL byte inside is fs's to
/// reject (`ReadError::ForFs`).
pub(crate) fn with_terminated<R>(path: &[u8], f: impl FnOnce(&CStr) -> Result<R, ReadError>) -> Result<R, ReadError> {
  let mut stack = [0u8; STACK_PATH_BYTES];
  let heap: Vec<u8>;
  let terminated: &[u8] = if path.len() < STACK_PATH_BYTES {
    stack[..path.len()].copy_from_slice(path);
    &stack[..=path.len()]
  } else {
    heap = [path, b"\0"].concat();
    &heap
  };
  f(CStr::from_bytes_with_nul(terminated).map_err(|_| ReadError::ForFs)?)
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
fn cancelled(cancel: &AtomicBool) -> bool {
  cancel.load(Ordering::Relaxed)
}

/// A path whose read failed is fs's to answer (`ReadError::ForFs`): with its
/// own error, or, through a layer that patches fs (Yarn PnP, Electron's asar,
/// memfs), with the file it serves. Nothing was consumed that fs could not
/// read again: opening a path has no effect a second open would undo.
fn for_fs(e: ReadError) -> ReadError {
  match e {
    ReadError::Os { .. } => ReadError::ForFs,
    e => e,
  }
}

/// Opens `path` with fs-style numeric `flags` (from `fs.constants`) and reads
/// it whole into `buf` (its old contents are dropped). A regular file of
/// kMaxLength bytes or more is not read (`ReadError::TooLarge`): readFileSync
/// refuses it after reading it all.
pub(crate) fn read_path_into(path: &CStr, flags: i32, buf: &mut Vec<u8>) -> Result<ReadFacts, ReadError> {
  reader::read_path(path, flags, MAX_STRING_LENGTH, Split::Allowed, &NEVER_CANCELLED, buf).map_err(for_fs)
}

/// Like `read_path_into`, but the file is read on this thread alone, and the
/// read stops between chunks once `cancel` is set (`ReadError::Cancelled`):
/// for reads that run beside others (async reads on libuv's pool, a batch's),
/// where the other core is busy anyway.
pub(crate) fn read_path_cancellable_into(
  path: &CStr,
  flags: i32,
  cancel: &AtomicBool,
  buf: &mut Vec<u8>,
) -> Result<ReadFacts, ReadError> {
  reader::read_path(path, flags, MAX_STRING_LENGTH, Split::Never, cancel, buf).map_err(for_fs)
}

/// Like `read_path_cancellable_into`, for a read made ahead of a loop's order
/// (a sync batch's next files): only a regular file is opened, found by a
/// stat first; anything else (a FIFO, a device) is `Ok(None)`, never opened,
/// so that a read ahead never waits, nor touches what a loop that stopped
/// earlier would not have.
pub(crate) fn read_path_ahead_into(
  path: &CStr,
  flags: i32,
  cancel: &AtomicBool,
  buf: &mut Vec<u8>,
) -> Result<Option<ReadFacts>, ReadError> {
  reader::read_regular_path(path, flags, MAX_STRING_LENGTH, cancel, buf).map_err(for_fs)
}

/// Reads a caller-owned fd from its current position to EOF into `buf`; never
/// closes it. A failure before any byte was read is fs's to answer (it reads
/// the fd from the same position); after, the bytes are gone from a pipe or
/// a caller's offset, so the error is ours to report.
pub(crate) fn read_fd_into(fd: i32, buf: &mut Vec<u8>) -> Result<ReadFacts, ReadError> {
  read_fd_cancellable_into(fd, &NEVER_CANCELLED, buf)
}

/// `read_fd_into` that stops between chunks once `cancel` is set
/// (`ReadError::Cancelled`).
pub(crate) fn read_fd_cancellable_into(
  fd: i32,
  cancel: &AtomicBool,
  buf: &mut Vec<u8>,
) -> Result<ReadFacts, ReadError> {
  buf.clear();
  reader::read_fd(fd, cancel, buf).map_err(|e| if buf.is_empty() { for_fs(e) } else { e })
}

/// `read_path_into` of raw path bytes into a new buffer (for tests and tools).
pub fn read_path(path: &[u8], flags: i32) -> Result<Vec<u8>, ReadError> {
  let mut buf = Vec::new();
  with_terminated(path, |path| read_path_into(path, flags, &mut buf))?;
  Ok(buf)
}

/// `read_fd_into` into a new buffer (for tests and tools).
pub fn read_fd(fd: i32) -> Result<Vec<u8>, ReadError> {
  let mut buf = Vec::new();
  read_fd_into(fd, &mut buf)?;
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
  let target = buf.capacity().saturating_mul(2).max(UNKNOWN_SIZE_FIRST_CHUNK).min(max);
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
  known_size.map_or(UNKNOWN_SIZE_FIRST_CHUNK, |size| size + 1)
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
    assert_eq!(room_for(None), UNKNOWN_SIZE_FIRST_CHUNK);
  }

  #[test]
  fn growth_doubles_up_to_the_limit_and_never_past_it() {
    let mut buf: Vec<u8> = Vec::new();
    grow_towards(&mut buf, 100_000);
    assert_eq!(buf.capacity(), UNKNOWN_SIZE_FIRST_CHUNK);
    for expected in [16_384, 32_768, 65_536, 100_000] {
      buf.resize(buf.capacity(), 0);
      grow_towards(&mut buf, 100_000);
      assert_eq!(buf.capacity(), expected);
    }
    let mut buf = vec![1u8; 10];
    assert!(matches!(too_long(&mut buf), ReadError::TooLong));
    assert_eq!(buf.capacity(), 0, "the buffer is freed");
  }
}
