//! The Linux reader: what `fs.readFileSync` does at the syscall level, with
//! fewer calls: open (O_CLOEXEC), fstat, one read sized from `st_size` (+1
//! byte so that a file which grew since fstat is noticed), close. Large files
//! we opened ourselves are read as two halves by two threads at once (from
//! `SPLIT_READ_MIN_BYTES`, see `read_halves`). Files that report size 0 or
//! are not regular (procfs, FIFOs, character devices, terminals) are read in a
//! growing loop until read returns 0. EINTR is retried everywhere.

use std::ffi::CStr;
use std::io;
use std::mem::MaybeUninit;
use std::os::unix::io::RawFd;
use std::sync::atomic::AtomicBool;

use super::syscall;
use super::{
  cancelled, empty_with_room, grow_towards, known_size, max_bytes, room_for, too_long, ReadError, ReadFacts, Stop,
  Syscall,
};
use crate::limits::facts::MAX_STRING_LENGTH;
use crate::limits::tuned;

/// The chunk of a large read (`limits::READ_CHUNK_BYTES`).
fn read_chunk() -> usize {
  tuned!(READ_CHUNK_BYTES)
}

/// Files not split are read chunk by chunk from the split's size on (what
/// counts as a large read): smaller ones in one read, which chunks would only
/// cut up.
fn chunked_read_min() -> usize {
  tuned!(SPLIT_READ_MIN_BYTES)
}
use crate::two_threads::{both, page_aligned_middle};

pub const NAME: &str = "syscalls";

/// Opens `path` with `flags` and reads it whole (in halves if `split`).
pub fn read_path(
  path: &CStr,
  flags: i32,
  split: bool,
  cancel: &AtomicBool,
  buf: &mut Vec<u8>,
) -> Result<ReadFacts, ReadError> {
  let fd = open(path, flags).map_err(|e| os_error(e, Syscall::Open))?;
  // Dropping `fd` closes it on every path out of here.
  read_open_fd(fd.raw(), split, MAX_STRING_LENGTH, cancel, buf)
}

/// Reads a caller's fd from its offset to EOF, whatever its size.
pub fn read_fd(fd: RawFd, cancel: &AtomicBool, buf: &mut Vec<u8>) -> Result<ReadFacts, ReadError> {
  read_open_fd(fd, false, usize::MAX, cancel, buf)
}

/// Opens `path` (O_CLOEXEC added, O_CREAT with mode 0o666 like Node), retried
/// on EINTR (an open of a FIFO blocks until a writer comes).
fn open(path: &CStr, flags: i32) -> io::Result<syscall::OwnedFd> {
  loop {
    match syscall::open(path, flags) {
      Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
      result => return result,
    }
  }
}

/// Opens and reads `path` only if it is a regular file, which it looks up
/// first (stat): anything else (a FIFO, a device) is `ReadError::NotRegular`,
/// not opened. The size the stat gave is the read's guess, as fstat's is for
/// `read_path`.
pub fn read_regular_path(
  path: &CStr,
  flags: i32,
  cancel: &AtomicBool,
  buf: &mut Vec<u8>,
) -> Result<ReadFacts, ReadError> {
  let (regular, size) = kind_and_size(&syscall::stat(path).map_err(|e| os_error(e, Syscall::Open))?);
  if !regular {
    return Err(ReadError::NotRegular);
  }
  let fd = open(path, flags).map_err(|e| os_error(e, Syscall::Open))?;
  read_known_kind(fd.raw(), regular, size, false, MAX_STRING_LENGTH, cancel, buf)
}

fn read_open_fd(
  fd: RawFd,
  split: bool,
  limit: usize,
  cancel: &AtomicBool,
  buf: &mut Vec<u8>,
) -> Result<ReadFacts, ReadError> {
  let (regular, size) = syscall::fstat(fd)
    .map(|st| kind_and_size(&st))
    .map_err(|e| os_error(e, Syscall::Read))?;
  read_known_kind(fd, regular, size, split, limit, cancel, buf)
}

/// Reads an open fd whose kind and size are known (from fstat or stat).
fn read_known_kind(
  fd: RawFd,
  regular: bool,
  size: usize,
  split: bool,
  limit: usize,
  cancel: &AtomicBool,
  buf: &mut Vec<u8>,
) -> Result<ReadFacts, ReadError> {
  if regular && size >= limit {
    return Err(ReadError::TooLarge);
  }
  let known = known_size(regular, size);
  empty_with_room(buf, room_for(known));
  if split && known.is_some() && size >= tuned!(SPLIT_READ_MIN_BYTES) {
    if let Some(ascii_prefix) = read_halves(fd, size, buf)? {
      return Ok(ReadFacts {
        ascii_prefix,
        in_halves: true,
        ..ReadFacts::default()
      });
    }
    // The file changed under us, or no thread could start: read it on the
    // plain way.
  }
  let stop = Stop {
    max: max_bytes(),
    cancel,
  };
  let ascii_prefix = match known {
    Some(size) => read_sized(fd, size, stop, buf)?,
    None => grow_until_eof(fd, stop, buf).map(|()| 0)?,
  };
  Ok(ReadFacts {
    ascii_prefix,
    ..ReadFacts::default()
  })
}

/// Regular file of `size` bytes, read from the fd's offset into the empty
/// `buf`, which has room for `size + 1` bytes: a read of `size + 1`
/// bytes normally finishes it (large files: chunk by chunk). A read shorter
/// than asked means EOF once `size` bytes are in; before that, only a read of
/// none does (sysfs, FUSE and network file systems may return less per read).
/// A full buffer means the file grew, so we keep reading until EOF. Returns
/// the length of the known-ASCII prefix.
fn read_sized(fd: RawFd, size: usize, stop: Stop, buf: &mut Vec<u8>) -> Result<usize, ReadError> {
  let mut ascii_prefix = 0;
  let chunk = if size >= chunked_read_min() {
    read_chunk()
  } else {
    buf.capacity()
  };
  loop {
    if cancelled(stop.cancel) {
      return Err(ReadError::Cancelled);
    }
    let start = buf.len();
    let n = read_appending(fd, buf, chunk)?;
    if ascii_prefix == start && buf[start..].is_ascii() {
      ascii_prefix = buf.len();
    }
    if buf.len() == buf.capacity() {
      grow_until_eof(fd, stop, buf)?;
      return Ok(ascii_prefix);
    }
    if n == 0 || (n < chunk && buf.len() >= size) {
      return Ok(ascii_prefix);
    }
  }
}

/// Reads a regular file of `size` bytes as two halves, each by its own thread
/// with pread(2) (which leaves the fd's offset alone), each half checked for
/// ASCII chunk by chunk while hot. The second half asks for one byte more, as
/// `read_sized` does: getting it means the file grew. Returns the known-ASCII
/// prefix, or `None` when the file turned out not to be `size` bytes long (it
/// changed since fstat) or no thread could be started: the caller then reads
/// on the plain way, from the fd's offset. `buf` is empty, with room for
/// `size + 1` bytes.
fn read_halves(fd: RawFd, size: usize, buf: &mut Vec<u8>) -> Result<Option<usize>, ReadError> {
  debug_assert!(buf.is_empty());
  // The split sits on a page boundary, so both halves copy whole pages, and
  // where the conversion splits too.
  let split = page_aligned_middle(size);
  let room = &mut buf.spare_capacity_mut()[..size + 1];
  let (left, right) = room.split_at_mut(split);
  let halves = both(
    || pread_checking_ascii(fd, left, 0),
    || pread_checking_ascii(fd, right, split),
  );
  let Some((left, right)) = halves else {
    return Ok(None);
  };
  let ((left_read, left_ascii), (right_read, right_ascii)) = (left?, right?);
  if left_read != split || right_read != size - split {
    return Ok(None);
  }
  // SAFETY: the two preads initialised the first `size` bytes.
  unsafe { buf.set_len(size) };
  Ok(Some(match (left_ascii, right_ascii) {
    (true, true) => size,
    (true, false) => split,
    (false, _) => 0,
  }))
}

/// Fills `dst` from a regular file at `offset` with pread(2) in `READ_CHUNK_BYTES`
/// pieces (the last one takes a shorter tail with it, such as the one byte more
/// that detects growth) until it is full or a short read (EOF, for a regular
/// file); returns the bytes read and whether they are all ASCII.
fn pread_checking_ascii(fd: RawFd, dst: &mut [MaybeUninit<u8>], offset: usize) -> Result<(usize, bool), ReadError> {
  let mut done = 0;
  let mut ascii = true;
  while done < dst.len() {
    let end = if dst.len() - done < 2 * read_chunk() {
      dst.len()
    } else {
      done + read_chunk()
    };
    let n = pread_retrying(fd, &mut dst[done..end], offset + done)?;
    // SAFETY: pread(2) initialised these `n` bytes.
    let chunk = unsafe { std::slice::from_raw_parts(dst[done..].as_ptr().cast::<u8>(), n) };
    ascii = ascii && chunk.is_ascii();
    done += n;
    if done < end {
      break;
    }
  }
  Ok((done, ascii))
}

/// One pread(2) into `dst` (retried on EINTR); returns the byte count.
fn pread_retrying(fd: RawFd, dst: &mut [MaybeUninit<u8>], offset: usize) -> Result<usize, ReadError> {
  retrying_eintr(|| syscall::pread(fd, dst, offset))
}

/// Makes a read(2)-like call until it is not interrupted (EINTR); returns its
/// byte count, or its error as a failed read.
fn retrying_eintr(mut call: impl FnMut() -> isize) -> Result<usize, ReadError> {
  loop {
    let n = call();
    if n >= 0 {
      return Ok(n as usize);
    }
    let e = io::Error::last_os_error();
    if e.kind() != io::ErrorKind::Interrupted {
      return Err(os_error(e, Syscall::Read));
    }
  }
}

/// Reads until read returns 0, doubling the buffer whenever it is full, in
/// reads of at most `READ_CHUNK_BYTES` with the cancel flag checked between
/// them; stops at `stop.max` bytes (`ReadError::TooLong`): an endless input
/// (/dev/zero, a FIFO that is never closed) ends there.
fn grow_until_eof(fd: RawFd, stop: Stop, buf: &mut Vec<u8>) -> Result<(), ReadError> {
  let max = stop.max;
  loop {
    if cancelled(stop.cancel) {
      return Err(ReadError::Cancelled);
    }
    if buf.len() >= max {
      return Err(too_long(buf));
    }
    if buf.len() == buf.capacity() {
      grow_towards(buf, max);
    }
    if read_appending(fd, buf, read_chunk().min(max - buf.len()))? == 0 {
      return Ok(());
    }
  }
}

/// (is a regular file, st_size) of a stat.
fn kind_and_size(st: &libc::stat) -> (bool, usize) {
  ((st.st_mode & libc::S_IFMT) == libc::S_IFREG, st.st_size as usize)
}

/// One read(2) of at most `limit` bytes into the spare capacity of `buf`
/// (retried on EINTR), appended to its contents; returns the byte count.
/// Reading into uninitialised capacity spares a memset of the buffer.
fn read_appending(fd: RawFd, buf: &mut Vec<u8>, limit: usize) -> Result<usize, ReadError> {
  let spare = buf.spare_capacity_mut();
  let room = limit.min(spare.len());
  let spare = &mut spare[..room];
  let n = retrying_eintr(|| syscall::read(fd, spare))?;
  // SAFETY: read(2) initialised the first `n` bytes of the spare capacity.
  unsafe { buf.set_len(buf.len() + n) };
  Ok(n)
}

fn os_error(e: io::Error, syscall: Syscall) -> ReadError {
  ReadError::Os {
    errno: e.raw_os_error().unwrap_or(libc::EIO),
    syscall,
  }
}

#[cfg(test)]
mod tests {
  use super::*;
  use crate::limits::facts::PAGE_BYTES;
  use crate::limits::{READ_CHUNK_BYTES, SPLIT_READ_MIN_BYTES};
  use crate::read::{read, read_path, with_terminated, How, Source};
  use std::fs::File;
  use std::io::Write;
  use std::os::unix::ffi::OsStrExt;
  use std::os::unix::io::{AsRawFd, FromRawFd};

  #[test]
  fn reads_whole_file_and_leaves_a_failed_path_to_fs() {
    let dir = scratch_dir("read");
    let p = dir.join("a.txt");
    std::fs::File::create(&p).unwrap().write_all(b"hello").unwrap();
    let bytes = read_path(p.as_os_str().as_bytes(), libc::O_RDONLY).unwrap();
    assert_eq!(bytes, b"hello");
    let missing = dir.join("missing");
    let c_missing = std::ffi::CString::new(missing.as_os_str().as_bytes()).unwrap();
    let never = std::sync::atomic::AtomicBool::new(false);
    // The reader reports the OS error; the read as the pipeline makes it
    // leaves the path to fs, which then answers with its own.
    assert_eq!(
      super::read_path(&c_missing, libc::O_RDONLY, false, &never, &mut Vec::new()),
      Err(ReadError::Os {
        errno: libc::ENOENT,
        syscall: Syscall::Open
      })
    );
    assert_eq!(
      read_path(missing.as_os_str().as_bytes(), libc::O_RDONLY),
      Err(ReadError::FsAnswers)
    );
    assert_eq!(read_path(b"a\0b", libc::O_RDONLY), Err(ReadError::FsAnswers));
    std::fs::remove_dir_all(&dir).unwrap();
  }

  /// A fresh folder for one test's files.
  fn scratch_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("rfu8-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
  }

  /// Writes `size` ASCII letters, with the bytes `odd` at `odd_at`, to `path`;
  /// returns them.
  fn write_letters(path: &std::path::Path, size: usize, odd_at: Option<usize>, odd: &[u8]) -> Vec<u8> {
    let mut bytes: Vec<u8> = (0..size).map(|i| b'a' + (i % 26) as u8).collect();
    if let Some(at) = odd_at {
      bytes[at..at + odd.len()].copy_from_slice(odd);
    }
    std::fs::write(path, &bytes).unwrap();
    bytes
  }

  /// Writes `write_letters(path, size, odd_at, odd)` and reads it back with
  /// `read` into exactly the room a read asks for (a larger pooled buffer
  /// would chunk reads); checks the bytes, returns (known-ASCII prefix, read
  /// in halves).
  fn read_letters(
    path: &std::path::Path,
    size: usize,
    odd_at: Option<usize>,
    odd: &[u8],
    read: impl FnOnce(&CStr, &mut Vec<u8>) -> Result<ReadFacts, ReadError>,
  ) -> (usize, bool) {
    let bytes = write_letters(path, size, odd_at, odd);
    let mut buf = Vec::with_capacity(size + 1);
    let got = with_terminated(path.as_os_str().as_bytes(), |p| read(p, &mut buf)).unwrap();
    assert!(buf == bytes, "{size} bytes, odd bytes {odd:x?} at {odd_at:?}");
    (got.ascii_prefix, got.in_halves)
  }

  #[test]
  fn files_from_the_split_size_on_are_read_in_halves_whatever_they_hold() {
    let dir = scratch_dir("split-size");
    let p = dir.join("mid.txt");
    let read = |size, odd_at, odd: &[u8]| {
      read_letters(&p, size, odd_at, odd, |p, buf| {
        read(Source::Path(p, libc::O_RDONLY), How::SYNC, buf)
      })
    };
    // (odd bytes and their position, expected known-ASCII prefix, read in
    // halves): ASCII or not, from its start or further on, every file is
    // split; the known prefix is the left half's if it is ASCII.
    for size in [SPLIT_READ_MIN_BYTES, 2 * chunked_read_min() + 12345] {
      let split = page_aligned_middle(size);
      for (odd, odd_at, expected) in [
        (&b"\xe9"[..], None, (size, true)),
        (b"\xe9", Some(0), (0, true)),
        ("中".as_bytes(), Some(0), (0, true)),
        ("é".as_bytes(), Some(0), (0, true)),
        (b"\xe9", Some(PAGE_BYTES), (0, true)),
        (b"\xe9", Some(split - 1), (0, true)),
        (b"\xe9", Some(split), (split, true)),
        (b"\xe9", Some(size - 1), (split, true)),
      ] {
        assert_eq!(
          read(size, odd_at, odd),
          expected,
          "{size} bytes, odd bytes {odd:x?} at {odd_at:?}"
        );
      }
    }
    // One byte less: read on this thread whatever it holds, its ASCII prefix
    // known chunk by chunk (here one chunk: all or nothing).
    let size = SPLIT_READ_MIN_BYTES - 1;
    assert_eq!(read(size, Some(0), b"\xe9"), (0, false));
    assert_eq!(read(size, Some(size - 1), b"\xe9"), (0, false));
    assert_eq!(read(size, None, b""), (size, false));
    std::fs::remove_dir_all(&dir).unwrap();
  }

  #[test]
  fn a_read_on_one_thread_knows_its_ascii_prefix_chunk_by_chunk() {
    let dir = scratch_dir("chunked");
    let p = dir.join("big.txt");
    let size = 2 * chunked_read_min() + 12345;
    // The start of the chunk that holds `at`.
    let chunk_start = |at: usize| at / READ_CHUNK_BYTES * READ_CHUNK_BYTES;
    for (odd_at, expected) in [
      (None, size),
      (Some(0), 0),
      (Some(READ_CHUNK_BYTES - 1), 0),
      (Some(READ_CHUNK_BYTES), READ_CHUNK_BYTES),
      (Some(size / 2), chunk_start(size / 2)),
      (Some(size - 1), chunk_start(size - 1)),
    ] {
      // Async and batch reads are never split: this one is chunked.
      let got = read_letters(&p, size, odd_at, b"\xe9", |p, buf| {
        read(
          Source::Path(p, libc::O_RDONLY),
          How::beside_others(&crate::read::NEVER_CANCELLED),
          buf,
        )
      });
      assert_eq!(got, (expected, false), "odd byte at {odd_at:?}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
  }

  #[test]
  fn reads_of_unknown_length_stop_at_the_limit_and_free_their_buffer() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let never = AtomicBool::new(false);
    let zero = File::open("/dev/zero").unwrap();
    // A limit that is no multiple of the chunk or of a doubling.
    let max = 3 * READ_CHUNK_BYTES + 5;
    let mut buf = Vec::new();
    let stop = Stop { max, cancel: &never };
    assert_eq!(
      grow_until_eof(zero.as_raw_fd(), stop, &mut buf),
      Err(ReadError::TooLong)
    );
    assert_eq!(buf.capacity(), 0);
    // A FIFO's content: one byte under the limit reads whole, at the limit is
    // too long (as Node counts: kMaxLength bytes or more).
    for (len, expected) in [(max - 1, Ok(())), (max, Err(ReadError::TooLong))] {
      let mut fds = [0; 2];
      // SAFETY: `fds` has room for the two fds pipe(2) writes.
      assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
      // SAFETY: both fds were just made by pipe(2) and are owned only here.
      let (reader, mut writer) = unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) };
      let feeder = std::thread::spawn(move || writer.write_all(&vec![b'x'; len]));
      let mut buf = Vec::new();
      assert_eq!(
        grow_until_eof(reader.as_raw_fd(), stop, &mut buf),
        expected,
        "{len} bytes"
      );
      if expected.is_ok() {
        assert_eq!(buf.len(), len);
        assert!(buf.capacity() <= max);
      }
      drop(reader);
      let _ = feeder.join().unwrap(); // EPIPE once the reader stopped
    }
    // A cancelled read stops before its next chunk.
    let cancel = AtomicBool::new(true);
    let mut buf = Vec::new();
    let stop = Stop { max, cancel: &cancel };
    assert_eq!(
      grow_until_eof(zero.as_raw_fd(), stop, &mut buf),
      Err(ReadError::Cancelled)
    );
    cancel.store(false, Ordering::Relaxed);
    assert!(buf.is_empty());
  }

  #[test]
  fn halves_read_the_whole_file_or_report_a_changed_one() {
    let dir = scratch_dir("halves");
    let p = dir.join("big.txt");
    let size = SPLIT_READ_MIN_BYTES + 12345;
    let split = page_aligned_middle(size);
    // (position of one non-ASCII byte, expected known-ASCII prefix)
    for (odd_at, prefix) in [
      (None, size),
      (Some(0), 0),
      (Some(split - 1), 0),
      (Some(split), split),
      (Some(size - 1), split),
    ] {
      let bytes = write_letters(&p, size, odd_at, b"\xe9");
      let file = File::open(&p).unwrap();
      let mut buf = Vec::with_capacity(size + 1);
      assert_eq!(
        read_halves(file.as_raw_fd(), size, &mut buf),
        Ok(Some(prefix)),
        "odd byte at {odd_at:?}"
      );
      assert!(buf == bytes, "odd byte at {odd_at:?}");
      // A file longer or shorter than the size fstat gave is left to the plain read.
      for stale_size in [size - 1, size + 1] {
        let mut buf = Vec::with_capacity(size + 2);
        assert_eq!(read_halves(file.as_raw_fd(), stale_size, &mut buf), Ok(None));
        assert!(buf.is_empty(), "the plain read starts from an empty buffer");
      }
      // The path read ends with the same bytes, and leaves nothing open.
      assert!(read_path(p.as_os_str().as_bytes(), libc::O_RDONLY).unwrap() == bytes);
    }
    std::fs::remove_dir_all(&dir).unwrap();
  }

  #[test]
  fn reads_shorter_than_asked_before_the_size_do_not_end_the_read() {
    // A pipe returns what its writer has written so far, as sysfs and FUSE
    // return less than asked: only a read of nothing, or the size reached, ends it.
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two fds pipe(2) writes.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: both fds are fresh and owned here alone.
    let (reader, mut writer) = unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) };
    let pieces: Vec<Vec<u8>> = (0..4u8).map(|i| vec![b'a' + i; 1000]).collect();
    let expected = pieces.concat();
    let feeder = std::thread::spawn(move || {
      for piece in pieces {
        writer.write_all(&piece).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
      }
    });
    let stop = Stop {
      max: max_bytes(),
      cancel: &crate::read::NEVER_CANCELLED,
    };
    let mut buf = Vec::with_capacity(expected.len() + 1);
    assert_eq!(
      read_sized(reader.as_raw_fd(), expected.len(), stop, &mut buf),
      Ok(expected.len())
    );
    assert!(buf == expected);
    feeder.join().unwrap();
  }
}
