//! Step 1 of the pipeline: get the file's bytes into one owned buffer.
//!
//! Mirrors what `fs.readFileSync` does at the syscall level, with fewer calls:
//! open (O_CLOEXEC), fstat, one read sized from `st_size` (+1 byte so that a
//! file which grew since fstat is noticed), close. Files that report size 0 or
//! are not regular (procfs, FIFOs, character devices, terminals) are read in a
//! growing loop until read returns 0. EINTR is retried everywhere.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::{AsRawFd, RawFd};

/// The syscall that failed, so the JS layer can build fs's error (`syscall` field).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Syscall {
  Open = 0,
  /// Also used for a failed fstat: Node's utf8 path does not fstat, so the same
  /// fault reaches fs users as a failed read (e.g. EBADF for a bad fd).
  Read = 1,
}

/// Why a read failed.
#[derive(Debug, PartialEq, Eq)]
pub enum ReadError {
  /// An OS error: errno and the syscall that returned it.
  Os { errno: i32, syscall: Syscall },
  /// The path contains a NUL byte; fs rejects it before any syscall.
  NulInPath,
  /// A regular file of at least the caller's size limit (`read_path_limited`), not read.
  TooLarge,
}

/// First buffer for files whose size is unknown (st_size 0 or not regular).
const UNKNOWN_SIZE_FIRST_CHUNK: usize = 8 * 1024;

/// Opens `path` with fs-style numeric `flags` (from `fs.constants`) and reads it whole.
pub fn read_path(path: &[u8], flags: i32) -> Result<Vec<u8>, ReadError> {
  let mut buf = Vec::new();
  read_path_into(path, flags, &mut buf)?;
  Ok(buf)
}

/// Reads from a caller-owned fd from its current position to EOF; never closes it.
pub fn read_fd(fd: RawFd) -> Result<Vec<u8>, ReadError> {
  let mut buf = Vec::new();
  read_fd_into(fd, &mut buf)?;
  Ok(buf)
}

/// Like `read_path`, into `buf` (its old contents are dropped). Reusing one
/// buffer across calls keeps its memory mapped and in cache: a fresh buffer
/// costs a page fault per 4 KiB on every read.
///
/// Returns how many leading bytes are already known to be ASCII: large files
/// are read in chunks that are checked while still hot in cache (see
/// `read_sized`), which spares `classify` a pass over cold memory.
pub fn read_path_into(path: &[u8], flags: i32, buf: &mut Vec<u8>) -> Result<usize, ReadError> {
  read_path_limited_into(path, flags, usize::MAX, buf)
}

/// Like `read_path`, but a regular file whose size is `limit` bytes or more is
/// not read at all: `ReadError::TooLarge` (decided from the one fstat the read
/// makes anyway).
pub fn read_path_limited(path: &[u8], flags: i32, limit: usize) -> Result<Vec<u8>, ReadError> {
  let mut buf = Vec::new();
  read_path_limited_into(path, flags, limit, &mut buf)?;
  Ok(buf)
}

fn read_path_limited_into(path: &[u8], flags: i32, limit: usize, buf: &mut Vec<u8>) -> Result<usize, ReadError> {
  if path.contains(&0) {
    return Err(ReadError::NulInPath);
  }
  let file = open(path, flags).map_err(|e| os_error(e, Syscall::Open))?;
  // Dropping `file` closes it on every path out of here; a close error is not
  // reported, since by then the whole file has been read.
  read_open_fd(file.as_raw_fd(), limit, buf)
}

/// Like `read_fd`, into `buf` (its old contents are dropped); returns the
/// length of the known-ASCII prefix as `read_path_into` does.
pub fn read_fd_into(fd: RawFd, buf: &mut Vec<u8>) -> Result<usize, ReadError> {
  read_open_fd(fd, usize::MAX, buf)
}

fn open(path: &[u8], flags: i32) -> io::Result<File> {
  let access = flags & libc::O_ACCMODE;
  OpenOptions::new()
    .read(access != libc::O_WRONLY)
    .write(access != libc::O_RDONLY)
    // std always adds O_CLOEXEC; O_CREAT uses mode 0o666 like Node.
    .custom_flags(flags & !libc::O_ACCMODE)
    .open(std::ffi::OsStr::from_bytes(path))
}

fn read_open_fd(fd: RawFd, limit: usize, buf: &mut Vec<u8>) -> Result<usize, ReadError> {
  let (regular, size) = file_kind_and_size(fd).map_err(|e| os_error(e, Syscall::Read))?;
  if regular && size >= limit {
    return Err(ReadError::TooLarge);
  }
  // Room for st_size + 1 bytes (or a first chunk); a buffer too small is replaced,
  // not grown, so its old contents are never copied.
  let wanted = if regular && size > 0 {
    size + 1
  } else {
    UNKNOWN_SIZE_FIRST_CHUNK
  };
  if buf.capacity() < wanted {
    crate::pool::give(std::mem::replace(buf, crate::pool::take(wanted)));
  }
  buf.clear();
  if regular && size > 0 {
    read_sized(fd, buf)
  } else {
    grow_until_eof(fd, buf).map(|()| 0)
  }
}

/// Files from this size on are read in chunks of `CHUNK_BYTES`, each checked for
/// ASCII right after it is read, while it is still in cache.
const CHUNKED_MIN_BYTES: usize = 1 << 20;
const CHUNK_BYTES: usize = 256 * 1024;

/// Regular file of known size: a read of `size + 1` bytes normally finishes it
/// (large files: chunk by chunk). A short read of a regular file means EOF; a
/// full buffer means the file grew, so we keep reading until EOF. Returns the
/// length of the known-ASCII prefix.
fn read_sized(fd: RawFd, buf: &mut Vec<u8>) -> Result<usize, ReadError> {
  let wanted = buf.capacity();
  let chunk = if wanted >= CHUNKED_MIN_BYTES {
    CHUNK_BYTES
  } else {
    wanted
  };
  let mut ascii_prefix = 0;
  loop {
    let start = buf.len();
    let n = read_appending(fd, buf, chunk)?;
    if ascii_prefix == start && buf[start..].is_ascii() {
      ascii_prefix = buf.len();
    }
    if buf.len() == buf.capacity() {
      grow_until_eof(fd, buf)?;
      return Ok(ascii_prefix);
    }
    if n < chunk {
      return Ok(ascii_prefix); // short read of a regular file: EOF
    }
  }
}

/// Reads until read returns 0, doubling the buffer whenever it is full.
fn grow_until_eof(fd: RawFd, buf: &mut Vec<u8>) -> Result<(), ReadError> {
  loop {
    if buf.len() == buf.capacity() {
      buf.reserve(buf.capacity().max(UNKNOWN_SIZE_FIRST_CHUNK));
    }
    if read_appending(fd, buf, usize::MAX)? == 0 {
      return Ok(());
    }
  }
}

/// (is a regular file, st_size) from fstat.
fn file_kind_and_size(fd: RawFd) -> io::Result<(bool, usize)> {
  let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
  // SAFETY: fstat writes a full `struct stat` into `st` and reads nothing else;
  // any fd number is allowed (a bad one fails with EBADF).
  if unsafe { libc::fstat(fd, st.as_mut_ptr()) } != 0 {
    return Err(io::Error::last_os_error());
  }
  // SAFETY: fstat returned 0, so it initialised `st`.
  let st = unsafe { st.assume_init() };
  Ok(((st.st_mode & libc::S_IFMT) == libc::S_IFREG, st.st_size as usize))
}

/// One read(2) of at most `limit` bytes into the spare capacity of `buf`
/// (retried on EINTR), appended to its contents; returns the byte count.
/// Reading into uninitialised capacity spares a memset of the buffer.
fn read_appending(fd: RawFd, buf: &mut Vec<u8>, limit: usize) -> Result<usize, ReadError> {
  let spare = buf.spare_capacity_mut();
  let room = limit.min(spare.len());
  let spare = &mut spare[..room];
  loop {
    // SAFETY: `spare` is valid for writes of `spare.len()` bytes for the whole call.
    let n = unsafe { libc::read(fd, spare.as_mut_ptr().cast(), spare.len()) };
    if n >= 0 {
      let n = n as usize;
      // SAFETY: read(2) initialised the first `n` bytes of the spare capacity.
      unsafe { buf.set_len(buf.len() + n) };
      return Ok(n);
    }
    let e = io::Error::last_os_error();
    if e.kind() != io::ErrorKind::Interrupted {
      return Err(os_error(e, Syscall::Read));
    }
  }
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
  use std::io::Write;

  #[test]
  fn reads_whole_file_and_reports_enoent() {
    let dir = std::env::temp_dir().join(format!("rfu8-read-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("a.txt");
    std::fs::File::create(&p).unwrap().write_all(b"hello").unwrap();
    let bytes = read_path(p.as_os_str().as_bytes(), libc::O_RDONLY).unwrap();
    assert_eq!(bytes, b"hello");
    let missing = dir.join("missing");
    assert_eq!(
      read_path(missing.as_os_str().as_bytes(), libc::O_RDONLY),
      Err(ReadError::Os {
        errno: libc::ENOENT,
        syscall: Syscall::Open
      })
    );
    assert_eq!(read_path(b"a\0b", libc::O_RDONLY), Err(ReadError::NulInPath));
    std::fs::remove_dir_all(&dir).unwrap();
  }
}
