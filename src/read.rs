//! Step 1 of the pipeline: get the file's bytes into one owned buffer.
//!
//! Mirrors what `fs.readFileSync` does at the syscall level, with fewer calls:
//! open (O_CLOEXEC), fstat, one read sized from `st_size` (+1 byte so that a
//! file which grew since fstat is noticed), close. Files that report size 0 or
//! are not regular (procfs, FIFOs, character devices, terminals) are read in a
//! growing loop until read returns 0. EINTR is retried everywhere.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::mem::ManuallyDrop;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::os::unix::io::{FromRawFd, RawFd};

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
}

/// First buffer for files whose size is unknown (st_size 0 or not regular).
const UNKNOWN_SIZE_FIRST_CHUNK: usize = 8 * 1024;

/// Opens `path` with fs-style numeric `flags` (from `fs.constants`) and reads it whole.
pub fn read_path(path: &[u8], flags: i32) -> Result<Vec<u8>, ReadError> {
  if path.contains(&0) {
    return Err(ReadError::NulInPath);
  }
  let file = open(path, flags).map_err(|e| os_error(e, Syscall::Open))?;
  // Dropping `file` closes it on every path out of here. Node ignores close errors
  // for readFileSync's own fd as well (it throws only after a successful read).
  read_open_file(&file)
}

/// Reads from a caller-owned fd from its current position to EOF; never closes it.
pub fn read_fd(fd: RawFd) -> Result<Vec<u8>, ReadError> {
  // SAFETY: the File is wrapped in ManuallyDrop so it never closes the caller's fd;
  // an fd that is not open only makes fstat/read fail with EBADF.
  let file = ManuallyDrop::new(unsafe { File::from_raw_fd(fd) });
  read_open_file(&file)
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

fn read_open_file(mut file: &File) -> Result<Vec<u8>, ReadError> {
  let meta = file.metadata().map_err(|e| os_error(e, Syscall::Read))?;
  let ft = meta.file_type();
  let regular = ft.is_file() && !ft.is_fifo() && !ft.is_char_device();
  let size = meta.len() as usize;
  if regular && size > 0 {
    read_sized(&mut file, size)
  } else {
    read_to_eof(&mut file, UNKNOWN_SIZE_FIRST_CHUNK)
  }
}

/// Regular file of known size: one read of `size + 1` bytes normally finishes it.
/// A short read of a regular file means EOF; a full buffer means the file grew,
/// so we keep reading until EOF.
fn read_sized(file: &mut &File, size: usize) -> Result<Vec<u8>, ReadError> {
  // Zeroed allocation: large ones come straight from mmap already zero, small ones
  // are cheap to clear, and we need no unsafe to read into them.
  let mut buf = vec![0u8; size + 1];
  let mut filled = 0;
  loop {
    match file.read(&mut buf[filled..]) {
      Ok(0) => break,
      Ok(n) => {
        filled += n;
        if filled < buf.len() {
          break; // short read of a regular file: EOF
        }
        return read_rest(file, buf);
      }
      Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
      Err(e) => return Err(os_error(e, Syscall::Read)),
    }
  }
  buf.truncate(filled);
  Ok(buf)
}

/// The buffer is full and more data may follow: continue in the growing loop.
fn read_rest(file: &mut &File, buf: Vec<u8>) -> Result<Vec<u8>, ReadError> {
  let filled = buf.len();
  grow_until_eof(file, buf, filled)
}

fn read_to_eof(file: &mut &File, first_chunk: usize) -> Result<Vec<u8>, ReadError> {
  grow_until_eof(file, vec![0u8; first_chunk], 0)
}

fn grow_until_eof(file: &mut &File, mut buf: Vec<u8>, mut filled: usize) -> Result<Vec<u8>, ReadError> {
  loop {
    if filled == buf.len() {
      let new_len = (buf.len() * 2).max(UNKNOWN_SIZE_FIRST_CHUNK);
      buf.resize(new_len, 0);
    }
    match file.read(&mut buf[filled..]) {
      Ok(0) => break,
      Ok(n) => filled += n,
      Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
      Err(e) => return Err(os_error(e, Syscall::Read)),
    }
  }
  buf.truncate(filled);
  Ok(buf)
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
