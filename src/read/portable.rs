//! The portable reader, through `std::fs`: every target but Linux, and Linux
//! with the `portable-read` feature (so that CI runs the JS suite against it).
//!
//! A path read that fails answers `ReadError::FsAnswers`: fs then makes the call
//! itself and throws its own error, field by field, on every OS, so no table
//! of OS errors is kept here. Only read-only opens are made here; other
//! flags go to fs as well. On Windows a path is opened as libuv opens it for
//! fs (`open_as_fs`), not through `std::fs`'s path handling.

use std::ffi::CStr;
use std::fs::File;
use std::io::{self, Read};
use std::sync::atomic::AtomicBool;

use super::{
  cancelled, empty_with_room, grow_towards, known_size, max_bytes, room_for, too_long, ReadError, ReadFacts, Stop,
};
use crate::limits::facts::MAX_STRING_LENGTH;
use crate::limits::tuned;

pub const NAME: &str = "portable";

/// `fs.constants.O_RDONLY` on every OS Node runs on.
const O_RDONLY: i32 = 0;

/// Opens `path` read-only and reads it whole; never split, as std reads
/// through the fd's offset.
pub fn read_path(
  path: &CStr,
  flags: i32,
  _split: bool,
  cancel: &AtomicBool,
  buf: &mut Vec<u8>,
) -> Result<ReadFacts, ReadError> {
  if flags != O_RDONLY {
    return Err(ReadError::FsAnswers);
  }
  let file = open_as_fs(path.to_bytes()).ok_or(ReadError::FsAnswers)?;
  let stop = Stop {
    max: max_bytes(),
    cancel,
  };
  read_file(&file, MAX_STRING_LENGTH, stop, buf, |_| ReadError::FsAnswers)
}

/// Opens and reads `path` only if it is a regular file (see
/// `read::How::regular_only`); anything else is `ReadError::NotRegular`, not
/// opened.
pub fn read_regular_path(
  path: &CStr,
  flags: i32,
  cancel: &AtomicBool,
  buf: &mut Vec<u8>,
) -> Result<ReadFacts, ReadError> {
  if flags != O_RDONLY {
    return Err(ReadError::FsAnswers);
  }
  if !is_regular_file(path.to_bytes()).ok_or(ReadError::FsAnswers)? {
    return Err(ReadError::NotRegular);
  }
  read_path(path, flags, false, cancel, buf)
}

/// Whether `path` is a regular file, found without opening it (an open of a
/// FIFO would wait for its writer); `None` if it cannot be looked up.
#[cfg(unix)]
fn is_regular_file(path: &[u8]) -> Option<bool> {
  use std::os::unix::ffi::OsStrExt;
  Some(std::fs::metadata(std::ffi::OsStr::from_bytes(path)).ok()?.is_file())
}

/// Whether `path` is a regular file. Windows has no FIFO an open would wait
/// for: the path is opened as fs opens it (a device or a pipe is not a file).
#[cfg(windows)]
fn is_regular_file(path: &[u8]) -> Option<bool> {
  Some(open_as_fs(path)?.metadata().ok()?.is_file())
}

/// Reads a caller's fd from its offset to EOF. Once bytes may have been
/// consumed, fs could not read them again, so errors carry their errno.
#[cfg(unix)]
pub fn read_fd(fd: i32, cancel: &AtomicBool, buf: &mut Vec<u8>) -> Result<ReadFacts, ReadError> {
  use std::mem::ManuallyDrop;
  use std::os::unix::io::FromRawFd;

  let os_error = |e: io::Error| ReadError::Os {
    errno: e.raw_os_error().unwrap_or(libc::EIO),
    syscall: super::Syscall::Read,
  };
  // A closed or negative fd fails as the Linux reader's fstat does (EBADF).
  // SAFETY: F_GETFD only reads the fd table entry; any integer is allowed.
  if unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0 {
    return Err(os_error(io::Error::last_os_error()));
  }
  // SAFETY: `fd` is open (checked above) and stays the caller's: ManuallyDrop
  // never closes it, and `file` does not outlive this call.
  let file = ManuallyDrop::new(unsafe { File::from_raw_fd(fd) });
  let stop = Stop {
    max: max_bytes(),
    cancel,
  };
  read_file(&file, usize::MAX, stop, buf, os_error)
}

/// Node's fds on Windows are C runtime fds of Node's own CRT: fs reads them.
#[cfg(not(unix))]
pub fn read_fd(_fd: i32, _cancel: &AtomicBool, _buf: &mut Vec<u8>) -> Result<ReadFacts, ReadError> {
  Err(ReadError::FsAnswers)
}

/// Reads `file` to EOF into `buf`, with room for its size and one byte more;
/// a regular file of `limit` bytes or more is not read. Read in chunks of at
/// most `READ_CHUNK_BYTES`, with the cancel flag checked between them; once
/// the room is used up (a file of unknown size, or one that grew), the buffer
/// grows up to `stop.max` bytes, where the read stops (`ReadError::TooLong`).
fn read_file(
  file: &File,
  limit: usize,
  stop: Stop,
  buf: &mut Vec<u8>,
  error: impl Fn(io::Error) -> ReadError,
) -> Result<ReadFacts, ReadError> {
  let meta = file.metadata().map_err(&error)?;
  let size = usize::try_from(meta.len()).unwrap_or(usize::MAX);
  if meta.is_file() && size >= limit {
    return Err(ReadError::TooLarge);
  }
  empty_with_room(buf, room_for(known_size(meta.is_file(), size)));
  let max = stop.max;
  let mut reader = file;
  loop {
    if cancelled(stop.cancel) {
      return Err(ReadError::Cancelled);
    }
    if buf.len() == buf.capacity() {
      if buf.len() >= max {
        return Err(too_long(buf));
      }
      grow_towards(buf, max);
    }
    let room = (buf.capacity() - buf.len()).min(tuned!(READ_CHUNK_BYTES));
    if meta.is_file() {
      // std reads into the spare capacity without zeroing it and retries EINTR;
      // `take` keeps it within the room, so it never grows the buffer itself.
      let n = reader.by_ref().take(room as u64).read_to_end(buf).map_err(&error)?;
      if n < room {
        return Ok(ReadFacts::default()); // EOF
      }
    } else if read_once(&mut reader, buf, room).map_err(&error)? == 0 {
      return Ok(ReadFacts::default()); // EOF
    }
  }
}

/// One read of at most `room` bytes onto the end of `buf` (within its
/// capacity), retried on EINTR; returns its length, 0 at EOF. A pipe or a
/// device gives what it has: each read returns to the cancel check, where
/// `read_to_end` would wait on for more.
fn read_once(reader: &mut impl Read, buf: &mut Vec<u8>, room: usize) -> io::Result<usize> {
  let start = buf.len();
  buf.resize(start + room, 0);
  let result = loop {
    match reader.read(&mut buf[start..]) {
      Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
      result => break result,
    }
  };
  buf.truncate(start + *result.as_ref().unwrap_or(&0));
  result
}

/// Opens `path` read-only as fs's open does: raw bytes on Unix.
#[cfg(unix)]
fn open_as_fs(path: &[u8]) -> Option<File> {
  use std::os::unix::ffi::OsStrExt;
  File::open(std::ffi::OsStr::from_bytes(path)).ok()
}

/// Opens `path` read-only as libuv's `uv_fs_open` does for fs: the UTF-8 path
/// as UTF-16, handed to `CreateFileW` as it is, with libuv's access, sharing
/// and flags. `std::fs` would not do: it makes relative and long paths
/// absolute with `GetFullPathNameW` (Win32 normalisation, which strips
/// trailing dots and spaces), where fs gives the OS the path the JS layer made
/// (`path.toNamespacedPath`: `\\?\C:\…`, which the OS takes verbatim). A path
/// that is not UTF-8 is left to fs.
#[cfg(windows)]
fn open_as_fs(path: &[u8]) -> Option<File> {
  use std::ffi::c_void;
  use std::os::windows::io::FromRawHandle;

  const FILE_GENERIC_READ: u32 = 0x0012_0089;
  const FILE_SHARE_READ_WRITE_DELETE: u32 = 0x1 | 0x2 | 0x4;
  const OPEN_EXISTING: u32 = 3;
  const FILE_ATTRIBUTE_NORMAL: u32 = 0x80;
  const FILE_FLAG_BACKUP_SEMANTICS: u32 = 0x0200_0000;
  const INVALID_HANDLE_VALUE: *mut c_void = -1isize as *mut c_void;
  #[link(name = "kernel32")]
  extern "system" {
    fn CreateFileW(
      name: *const u16,
      access: u32,
      share: u32,
      security: *mut c_void,
      disposition: u32,
      flags: u32,
      template: *mut c_void,
    ) -> *mut c_void;
  }

  let wide: Vec<u16> = std::str::from_utf8(path).ok()?.encode_utf16().chain([0]).collect();
  // SAFETY: `wide` is NUL-terminated and outlives the call; the other
  // pointers are null, which CreateFileW allows for them.
  let handle = unsafe {
    CreateFileW(
      wide.as_ptr(),
      FILE_GENERIC_READ,
      FILE_SHARE_READ_WRITE_DELETE,
      std::ptr::null_mut(),
      OPEN_EXISTING,
      FILE_ATTRIBUTE_NORMAL | FILE_FLAG_BACKUP_SEMANTICS,
      std::ptr::null_mut(),
    )
  };
  if handle == INVALID_HANDLE_VALUE || handle.is_null() {
    return None;
  }
  // SAFETY: a handle CreateFileW just opened, owned by nothing else: the
  // File closes it when dropped.
  Some(unsafe { File::from_raw_handle(handle) })
}

#[cfg(test)]
mod tests {
  use crate::read::{read_fd, read_path, ReadError};

  #[test]
  fn reads_whole_files_and_leaves_failures_and_other_flags_to_fs() {
    let dir = std::env::temp_dir().join(format!("rfu8-portable-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("a.txt");
    std::fs::write(&p, "héllo").unwrap();
    let path = p.to_str().unwrap().as_bytes();
    assert_eq!(read_path(path, 0).unwrap(), "héllo".as_bytes());
    let missing = dir.join("missing");
    assert_eq!(
      read_path(missing.to_str().unwrap().as_bytes(), 0),
      Err(ReadError::FsAnswers)
    );
    assert_eq!(
      read_path(dir.to_str().unwrap().as_bytes(), 0),
      Err(ReadError::FsAnswers)
    );
    assert_eq!(read_path(path, 2), Err(ReadError::FsAnswers));
    assert_eq!(read_path(b"a\0b", 0), Err(ReadError::FsAnswers));
    let mut buf = Vec::new();
    let never = std::sync::atomic::AtomicBool::new(false);
    let file = std::fs::File::open(&p).unwrap();
    let limited = |limit, buf: &mut Vec<u8>| {
      let stop = super::Stop {
        max: super::max_bytes(),
        cancel: &never,
      };
      super::read_file(&file, limit, stop, buf, |_| ReadError::FsAnswers)
    };
    assert_eq!(limited(6, &mut buf), Err(ReadError::TooLarge));
    assert_eq!(limited(7, &mut buf).map(|_| buf.len()), Ok(6));
    // A bad fd, of which nothing was read: fs answers.
    #[cfg(unix)]
    assert_eq!(read_fd(-1), Err(ReadError::FsAnswers));
    std::fs::remove_dir_all(&dir).unwrap();
  }

  #[cfg(unix)]
  #[test]
  fn reads_of_unknown_length_stop_at_the_limit_and_free_their_buffer() {
    use super::{read_file, Stop};
    use crate::limits::READ_CHUNK_BYTES;
    use std::fs::File;
    use std::io::Write;
    use std::os::unix::io::FromRawFd;
    use std::sync::atomic::AtomicBool;
    let never = AtomicBool::new(false);
    let max = 3 * READ_CHUNK_BYTES + 5;
    let stop = Stop { max, cancel: &never };
    let fail = |_| ReadError::FsAnswers;
    let zero = File::open("/dev/zero").unwrap();
    let mut buf = Vec::new();
    assert_eq!(
      read_file(&zero, usize::MAX, stop, &mut buf, fail),
      Err(ReadError::TooLong)
    );
    assert_eq!(buf.capacity(), 0);
    for (len, too_long) in [(max - 1, false), (max, true)] {
      let mut fds = [0; 2];
      // SAFETY: `fds` has room for the two fds pipe(2) writes.
      assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
      // SAFETY: both fds were just made by pipe(2) and are owned only here.
      let (reader, mut writer) = unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) };
      let feeder = std::thread::spawn(move || writer.write_all(&vec![b'x'; len]));
      let mut buf = Vec::new();
      let read = read_file(&reader, usize::MAX, stop, &mut buf, fail);
      assert_eq!(read.is_err(), too_long, "{len} bytes");
      if too_long {
        assert_eq!(read, Err(ReadError::TooLong));
      } else {
        assert!(buf.len() == len && buf.capacity() <= max);
      }
      drop(reader);
      let _ = feeder.join().unwrap(); // EPIPE once the reader stopped
    }
    let cancel = AtomicBool::new(true);
    let stop = Stop { max, cancel: &cancel };
    assert_eq!(
      read_file(&zero, usize::MAX, stop, &mut buf, fail),
      Err(ReadError::Cancelled)
    );
  }

  #[cfg(unix)]
  #[test]
  fn a_pipe_read_stops_at_the_first_data_after_its_cancel() {
    use super::{read_file, Stop};
    use std::fs::File;
    use std::io::Write;
    use std::os::unix::io::FromRawFd;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two fds pipe(2) writes.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: both fds were just made by pipe(2) and are owned only here.
    let (reader, mut writer) = unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) };
    let cancel = Arc::new(AtomicBool::new(false));
    let feeder = {
      let cancel = Arc::clone(&cancel);
      std::thread::spawn(move || {
        writer.write_all(b"x").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(50));
        cancel.store(true, Ordering::Relaxed);
        writer.write_all(b"y").unwrap();
        // The writer stays open a while: a read that waits for EOF sees it only then.
        std::thread::sleep(std::time::Duration::from_millis(1500));
      })
    };
    let stop = Stop {
      max: usize::MAX,
      cancel: &cancel,
    };
    let started = std::time::Instant::now();
    let mut buf = Vec::new();
    assert_eq!(
      read_file(&reader, usize::MAX, stop, &mut buf, |_| ReadError::FsAnswers),
      Err(ReadError::Cancelled)
    );
    assert!(
      started.elapsed() < std::time::Duration::from_millis(1000),
      "it waited for EOF"
    );
    feeder.join().unwrap();
  }

  #[cfg(unix)]
  #[test]
  fn reads_a_callers_fd_from_its_offset_and_leaves_it_open() {
    use std::io::{Seek, SeekFrom};
    use std::os::unix::io::AsRawFd;
    let p = std::env::temp_dir().join(format!("rfu8-portable-fd-{}", std::process::id()));
    std::fs::write(&p, "0123456789").unwrap();
    let mut file = std::fs::File::open(&p).unwrap();
    file.seek(SeekFrom::Start(4)).unwrap();
    assert_eq!(read_fd(file.as_raw_fd()).unwrap(), b"456789");
    file.seek(SeekFrom::Start(0)).unwrap();
    assert_eq!(read_fd(file.as_raw_fd()).unwrap(), b"0123456789");
    std::fs::remove_file(&p).unwrap();
  }
}
