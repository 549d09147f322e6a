//! The syscalls of a read (openat, fstat, newfstatat, read, pread, close), made directly with
//! `syscall(2)` rather than through glibc's wrappers and `std::fs::File`.
//!
//! glibc's open, read, pread and close are pthread cancellation points that
//! toggle asynchronous cancellation around each kernel call, and std's
//! `File::open` copies the path again: for small files those layers are a
//! visible part of the read. Nothing here retries EINTR; `syscalls` does.

use std::ffi::{c_long, CStr};
use std::io;
use std::mem::MaybeUninit;
use std::os::unix::io::RawFd;

/// An fd we opened; dropping it closes it. Not std's `OwnedFd`, whose drop goes
/// through glibc's close. A close error is not reported: by then the file has
/// been read (Node ignores it too, in its synchronous read).
pub struct OwnedFd(RawFd);

impl OwnedFd {
  pub fn raw(&self) -> RawFd {
    self.0
  }
}

impl Drop for OwnedFd {
  fn drop(&mut self) {
    // SAFETY: close takes any integer; this fd is ours and closed only here.
    unsafe { libc::syscall(libc::SYS_close, self.0 as c_long) };
  }
}

/// openat(AT_FDCWD, path, flags | O_CLOEXEC, 0o666): `flags` are passed as fs
/// passes them (access mode and all), and new files get Node's mode.
pub fn open(path: &CStr, flags: i32) -> io::Result<OwnedFd> {
  // SAFETY: `path` is a NUL-terminated string that lives through the call.
  let fd = unsafe {
    libc::syscall(
      libc::SYS_openat,
      libc::AT_FDCWD as c_long,
      path.as_ptr(),
      (flags | libc::O_CLOEXEC) as c_long,
      0o666 as c_long,
    )
  };
  if fd < 0 {
    Err(io::Error::last_os_error())
  } else {
    Ok(OwnedFd(fd as RawFd))
  }
}

/// fstat(2) of `fd`.
pub fn fstat(fd: RawFd) -> io::Result<libc::stat> {
  let mut st = MaybeUninit::<libc::stat>::uninit();
  // SAFETY: fstat writes a full `struct stat` into `st` and reads nothing else;
  // any fd number is allowed (a bad one fails with EBADF).
  if unsafe { libc::syscall(libc::SYS_fstat, fd as c_long, st.as_mut_ptr()) } != 0 {
    return Err(io::Error::last_os_error());
  }
  // SAFETY: fstat returned 0, so it initialised `st`.
  Ok(unsafe { st.assume_init() })
}

/// stat(2) of `path` (newfstatat, following symlinks as open does).
pub fn stat(path: &CStr) -> io::Result<libc::stat> {
  let mut st = MaybeUninit::<libc::stat>::uninit();
  // SAFETY: `path` is NUL-terminated and lives through the call; newfstatat
  // writes a full `struct stat` into `st` and reads nothing else.
  let status = unsafe {
    libc::syscall(
      libc::SYS_newfstatat,
      libc::AT_FDCWD as c_long,
      path.as_ptr(),
      st.as_mut_ptr(),
      0 as c_long,
    )
  };
  if status != 0 {
    return Err(io::Error::last_os_error());
  }
  // SAFETY: newfstatat returned 0, so it initialised `st`.
  Ok(unsafe { st.assume_init() })
}

/// read(2) into `dst`: the byte count, or -1 with errno set.
pub fn read(fd: RawFd, dst: &mut [MaybeUninit<u8>]) -> isize {
  // SAFETY: `dst` is valid for writes of `dst.len()` bytes for the whole call.
  unsafe { libc::syscall(libc::SYS_read, fd as c_long, dst.as_mut_ptr(), dst.len()) as isize }
}

/// pread(2) into `dst` at `offset`: the byte count, or -1 with errno set.
pub fn pread(fd: RawFd, dst: &mut [MaybeUninit<u8>], offset: usize) -> isize {
  // SAFETY: `dst` is valid for writes of `dst.len()` bytes for the whole call.
  unsafe {
    libc::syscall(
      libc::SYS_pread64,
      fd as c_long,
      dst.as_mut_ptr(),
      dst.len(),
      offset as c_long,
    ) as isize
  }
}
