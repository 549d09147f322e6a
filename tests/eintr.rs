//! Signals during a long read: open(2) (waiting for a FIFO's writer) and
//! read(2) interrupted with EINTR are retried, and the bytes come out whole.
//!
//! Node's own signal handlers are installed with SA_RESTART, so there the
//! kernel restarts an interrupted read by itself (the npm test sends signals
//! anyway). Here a handler is installed *without* SA_RESTART, so every signal
//! that lands on the reading thread while it is blocked makes the syscall fail
//! with EINTR, which read.rs must retry.

use std::ffi::CString;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use readfile_utf8::testing::{read_fd, read_path};

static HANDLED: AtomicUsize = AtomicUsize::new(0);

extern "C" fn on_signal(_: libc::c_int) {
  HANDLED.fetch_add(1, Ordering::Relaxed);
}

fn install_handler_without_restart() {
  // SAFETY: a zeroed sigaction is a valid "no flags, empty mask" value; the
  // handler only touches an atomic, which is async-signal-safe.
  unsafe {
    let mut action: libc::sigaction = std::mem::zeroed();
    action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
    action.sa_flags = 0; // no SA_RESTART: blocked syscalls fail with EINTR
    libc::sigemptyset(&mut action.sa_mask);
    assert_eq!(libc::sigaction(libc::SIGUSR1, &action, std::ptr::null_mut()), 0);
  }
}

/// Reads `expected` through a FIFO fed slowly by a writer thread, while a third
/// thread signals the reading thread every 200 µs. The writer opens the FIFO
/// only after `writer_waits`, so that a path read's open(2) blocks (and is
/// interrupted) until then. Returns what was read (or the read's error), how
/// many signals the reading thread handled during the read, and how many of
/// them came before the writer opened.
fn read_fifo_under_signals(
  name: &str,
  expected: &[u8],
  by_fd: bool,
  writer_waits: Duration,
) -> (Result<Vec<u8>, String>, usize, usize) {
  install_handler_without_restart();
  let dir = std::env::temp_dir().join(format!("rfu8-eintr-{}-{name}", std::process::id()));
  std::fs::create_dir_all(&dir).unwrap();
  let fifo = dir.join("fifo");
  let c_path = CString::new(fifo.as_os_str().as_bytes()).unwrap();
  // SAFETY: c_path is a valid NUL-terminated path.
  assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);

  let before = HANDLED.load(Ordering::Relaxed);
  let chunks: Vec<Vec<u8>> = expected.chunks(4096 + 3).map(<[u8]>::to_vec).collect();
  let writer_path = fifo.clone();
  let writer = std::thread::spawn(move || {
    std::thread::sleep(writer_waits);
    let signals_before_open = HANDLED.load(Ordering::Relaxed);
    // A writer that does not wait for a reader: if the reader gave up (an
    // open that was not retried), this fails after a while instead of hanging.
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut w = loop {
      match std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&writer_path)
      {
        Ok(w) => break w,
        Err(e) if e.raw_os_error() == Some(libc::ENXIO) && Instant::now() < deadline => {
          std::thread::sleep(Duration::from_millis(1))
        }
        Err(e) => panic!("no reader opened the FIFO within 10 s: {e}"),
      }
    };
    // SAFETY: F_SETFL on an fd this thread owns; blocking writes from here on.
    assert_eq!(unsafe { libc::fcntl(w.as_raw_fd(), libc::F_SETFL, 0) }, 0);
    for chunk in chunks {
      std::thread::sleep(Duration::from_millis(2));
      w.write_all(&chunk).unwrap();
    }
    signals_before_open
  });

  let reading = Arc::new(AtomicBool::new(true));
  let reader_path = fifo.clone();
  let reader = std::thread::spawn(move || {
    let bytes = if by_fd {
      let f = std::fs::File::open(&reader_path).unwrap();
      read_fd(f.as_raw_fd()).map_err(|e| format!("{e:?}"))
    } else {
      read_path(reader_path.as_os_str().as_bytes(), libc::O_RDONLY).map_err(|e| format!("{e:?}"))
    };
    (bytes, HANDLED.load(Ordering::Relaxed))
  });
  let target = std::os::unix::thread::JoinHandleExt::as_pthread_t(&reader);
  let flag = reading.clone();
  let signaller = std::thread::spawn(move || {
    while flag.load(Ordering::Relaxed) {
      // SAFETY: `target` is joinable (not yet joined) while `flag` is set.
      unsafe { libc::pthread_kill(target, libc::SIGUSR1) };
      std::thread::sleep(Duration::from_micros(200));
    }
  });
  let written = writer.join();
  // Stop signalling before the reader is joined: pthread_kill on a joined
  // thread's id is undefined behaviour.
  reading.store(false, Ordering::Relaxed);
  signaller.join().unwrap();
  let (bytes, handled_at_end) = reader.join().unwrap();
  std::fs::remove_dir_all(&dir).unwrap();
  let signals_before_open = written.unwrap_or_else(|e| std::panic::resume_unwind(e));
  (bytes, handled_at_end - before, signals_before_open - before)
}

fn text() -> Vec<u8> {
  "signals é 中 😀 and text\n".repeat(3000).into_bytes()
}

/// Reads a FIFO by path or by fd under signals and checks the result.
fn check_interrupted_read(name: &str, by_fd: bool) {
  let expected = text();
  let (bytes, signals, _) = read_fifo_under_signals(name, &expected, by_fd, Duration::ZERO);
  assert!(signals >= 20, "the read was interrupted often ({signals} signals)");
  assert_eq!(bytes.unwrap(), expected);
}

#[test]
fn a_path_read_interrupted_by_signals_is_retried_and_whole() {
  check_interrupted_read("path", false);
}

#[test]
fn an_fd_read_interrupted_by_signals_is_retried_and_whole() {
  check_interrupted_read("fd", true);
}

#[test]
fn an_open_interrupted_by_signals_while_it_waits_for_a_writer_is_retried() {
  let expected = text();
  let (bytes, _, before_open) = read_fifo_under_signals("open", &expected, false, Duration::from_millis(100));
  assert!(
    before_open >= 20,
    "the open was interrupted often while it waited ({before_open} signals)"
  );
  assert_eq!(bytes.unwrap(), expected);
}
