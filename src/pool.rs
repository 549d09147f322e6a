//! Recycles the large buffers that external strings hand back when V8 collects
//! them, so that the next large string is written into memory that is already
//! mapped and cached. A fresh buffer costs a page fault per 4 KiB touched,
//! more than converting the text.
//!
//! One pool per process, shared by all threads and bounded in total bytes;
//! small buffers go straight to the allocator, and huge ones are kept only for
//! a moment (a reaper thread frees them after a second unused). It must be
//! shared: finalizers give buffers back on the JS thread that made the string,
//! while async reads take theirs on libuv's pool threads. With one pool per
//! thread the JS thread's pool filled up with buffers no async read could reuse
//! (up to 64 MiB per element type, held idle for good), and every async read
//! page-faulted a fresh buffer: 10^5 async reads of 1 MiB files at concurrency
//! 64 peaked at ~335 MiB RSS (~200 MiB shared).

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Buffers smaller than this are not pooled: malloc reuses small blocks well.
pub const POOL_MIN_BYTES: usize = 64 * 1024;
/// Most memory the pool keeps idle in buffers below `HUGE_MIN_BYTES` (per
/// element type), for as long as the process lives.
const POOL_MAX_BYTES: usize = 64 << 20;
/// A pooled buffer serves a request if its capacity is at most this many times
/// the request, so little memory is held idle behind a string.
const MAX_WASTE_FACTOR: usize = 2;

/// Buffers from this size on are kept apart, only for a moment (`HUGE_KEEP_FOR`),
/// but up to `HUGE_MAX_BYTES` of them. Reading large files in a row is where a
/// fresh buffer costs most, most of all on VMs whose kernel hands freed memory
/// back to the host, which must then supply it again.
const HUGE_MIN_BYTES: usize = 16 << 20;
/// Most memory kept idle in huge buffers, per element type: three UTF-16
/// buffers of 64 MiB files. In a loop of such reads V8 collected our strings
/// every few calls and their buffers came back together; with room for two,
/// one was dropped and a later call paid for fresh memory.
const HUGE_MAX_BYTES: usize = 512 << 20;
/// How long a huge buffer is kept unused before it is freed (within a quarter
/// of this more, by the reaper thread).
const HUGE_KEEP_FOR: Duration = Duration::from_secs(1);

/// The free buffers of one element type and size class, and their total size
/// in bytes.
pub struct Pool<T> {
  free: Vec<Idle<T>>,
  bytes: usize,
  max_bytes: usize,
}

/// A free buffer and since when it has been free.
struct Idle<T> {
  buf: Vec<T>,
  since: Instant,
}

impl<T> Pool<T> {
  const fn new(max_bytes: usize) -> Self {
    Pool {
      free: Vec::new(),
      bytes: 0,
      max_bytes,
    }
  }

  fn take(&mut self, capacity: usize) -> Option<Vec<T>> {
    // Best fit among the (few) free buffers.
    let (index, _) = self
      .free
      .iter()
      .enumerate()
      .filter(|(_, idle)| fits(idle.buf.capacity(), capacity))
      .min_by_key(|(_, idle)| idle.buf.capacity())?;
    let buf = self.free.swap_remove(index).buf;
    self.bytes -= bytes_of(&buf);
    Some(buf)
  }

  fn give(&mut self, mut buf: Vec<T>) {
    let size = bytes_of(&buf);
    // Make room by dropping the oldest buffers; a buffer larger than the whole
    // pool is simply freed.
    while self.bytes + size > self.max_bytes && !self.free.is_empty() {
      let old = self.free.remove(0);
      self.bytes -= bytes_of(&old.buf);
    }
    if self.bytes + size <= self.max_bytes {
      buf.clear();
      self.bytes += size;
      self.free.push(Idle {
        buf,
        since: Instant::now(),
      });
    }
  }

  /// Moves the buffers idle since before `cutoff` out of the pool (the caller
  /// frees them once the lock is released).
  fn expire(&mut self, cutoff: Instant, expired: &mut Vec<Vec<T>>) {
    let (old, kept) = std::mem::take(&mut self.free)
      .into_iter()
      .partition(|idle| idle.since < cutoff);
    self.free = kept;
    for idle in old {
      self.bytes -= bytes_of(&idle.buf);
      expired.push(idle.buf);
    }
  }
}

fn bytes_of<T>(buf: &Vec<T>) -> usize {
  buf.capacity() * std::mem::size_of::<T>()
}

/// The pools of one element type: ordinary buffers, and huge ones kept briefly.
pub struct Tiers<T> {
  ordinary: Pool<T>,
  huge: Pool<T>,
}

impl<T> Tiers<T> {
  const fn new() -> Self {
    Tiers {
      ordinary: Pool::new(POOL_MAX_BYTES),
      huge: Pool::new(HUGE_MAX_BYTES),
    }
  }

  fn for_bytes(&mut self, bytes: usize) -> &mut Pool<T> {
    if bytes >= HUGE_MIN_BYTES {
      &mut self.huge
    } else {
      &mut self.ordinary
    }
  }
}

// Held only for a best-fit scan of a few entries; a poisoned lock (a panic while
// held, which Pool's methods do not do) just turns pooling off.
static BYTES: Mutex<Tiers<u8>> = Mutex::new(Tiers::new());
static UNITS: Mutex<Tiers<u16>> = Mutex::new(Tiers::new());

thread_local! {
  /// The last small buffer this thread gave back, per element type, for its
  /// next small string. glibc's per-thread cache stops at 1032 bytes, so every
  /// small text above that (the UTF-16 of a 1 KiB file is 2 KiB) otherwise
  /// takes malloc's and free's slow paths on each read, and the buffer comes
  /// back cold.
  static SPARE_BYTES: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
  static SPARE_UNITS: RefCell<Vec<u16>> = const { RefCell::new(Vec::new()) };
}

/// The element types whose buffers are pooled.
pub trait Pooled: Sized + 'static {
  fn with_pool<R>(f: impl FnOnce(&mut Tiers<Self>) -> R) -> Option<R>;
  /// Runs `f` on this thread's spare small buffer; `None` while the thread ends.
  fn with_spare<R>(f: impl FnOnce(&mut Vec<Self>) -> R) -> Option<R>;
}

impl Pooled for u8 {
  fn with_pool<R>(f: impl FnOnce(&mut Tiers<u8>) -> R) -> Option<R> {
    BYTES.lock().ok().map(|mut p| f(&mut p))
  }
  fn with_spare<R>(f: impl FnOnce(&mut Vec<u8>) -> R) -> Option<R> {
    SPARE_BYTES.try_with(|spare| f(&mut spare.borrow_mut())).ok()
  }
}

impl Pooled for u16 {
  fn with_pool<R>(f: impl FnOnce(&mut Tiers<u16>) -> R) -> Option<R> {
    UNITS.lock().ok().map(|mut p| f(&mut p))
  }
  fn with_spare<R>(f: impl FnOnce(&mut Vec<u16>) -> R) -> Option<R> {
    SPARE_UNITS.try_with(|spare| f(&mut spare.borrow_mut())).ok()
  }
}

/// Whether a free buffer of `have` elements may serve a request for `want`.
fn fits(have: usize, want: usize) -> bool {
  have >= want && have <= want.saturating_mul(MAX_WASTE_FACTOR)
}

/// Huge buffers are rounded up to whole steps of this size (see `take`).
///
/// New buffers do not ask for transparent huge pages (`MADV_HUGEPAGE`; they
/// did from 4 MiB until measured otherwise). A huge page is one fault per 2 MiB
/// instead of 512, but on a VM whose kernel hands free high-order memory back
/// to the host it is drawn from exactly that memory, which the host must then
/// supply again: loops of large reads were several times slower with them.
const HUGE_STEP: usize = 2 << 20;

/// An empty buffer with room for at least `capacity` elements: a recycled one
/// when the pool has one that fits, otherwise a new one.
pub fn take<T: Pooled>(capacity: usize) -> Vec<T> {
  let bytes = capacity * std::mem::size_of::<T>();
  if bytes >= POOL_MIN_BYTES {
    if let Some(buf) = T::with_pool(|p| p.for_bytes(bytes).take(capacity)).flatten() {
      return buf;
    }
  } else if let Some(buf) =
    T::with_spare(|spare| fits(spare.capacity(), capacity).then(|| std::mem::take(spare))).flatten()
  {
    return buf;
  }
  // A huge buffer gets 2 MiB more than asked, rounded to whole steps of 2 MiB
  // (address space only: pages never written cost nothing), so that it
  // fits the next request of about the same size: the steps of one read ask
  // for n and n + 1 elements of the same file (the Latin-1 attempt n bytes,
  // the read buffer n + 1). Measured when a UTF-16 attempt (n units) still
  // came before the lossy decoder (n + 1): every lossy decode of a 64 MiB file
  // missed the pool by that one unit and paid for 128 MiB of fresh memory.
  let capacity = if bytes >= HUGE_MIN_BYTES {
    (bytes + HUGE_STEP).next_multiple_of(HUGE_STEP) / std::mem::size_of::<T>()
  } else {
    capacity
  };
  Vec::with_capacity(capacity)
}

/// Returns a buffer no longer in use. It is kept for reuse if it is large and
/// the pool has room, otherwise freed. Safe to call while the thread is ending
/// (the buffer is then just freed).
pub fn give<T: Pooled>(mut buf: Vec<T>) {
  let bytes = bytes_of(&buf);
  if bytes >= POOL_MIN_BYTES {
    // If the pool's lock is poisoned, the closure is dropped unrun and `buf` with it.
    T::with_pool(|p| p.for_bytes(bytes).give(buf));
    if bytes >= HUGE_MIN_BYTES {
      start_reaper();
    }
  } else if buf.capacity() > 0 {
    // The spare it replaces (if any) is freed after the thread-local is released.
    buf.clear();
    drop(T::with_spare(|spare| std::mem::replace(spare, buf)));
  }
}

/// Whether a reaper thread is running (or being started).
static REAPER: AtomicBool = AtomicBool::new(false);

/// Starts the thread that frees idle huge buffers, unless one is running. If no
/// thread can be started, idle huge buffers wait for a later `give` to try
/// again (still bounded by `HUGE_MAX_BYTES`).
fn start_reaper() {
  if REAPER.swap(true, Ordering::SeqCst) {
    return;
  }
  let started = std::thread::Builder::new()
    .name("readfile-utf8-pool".into())
    .spawn(reap);
  if started.is_err() {
    REAPER.store(false, Ordering::SeqCst);
  }
}

/// The reaper: every quarter of `HUGE_KEEP_FOR`, frees the huge buffers idle
/// for longer than that; ends when none is left.
fn reap() {
  loop {
    std::thread::sleep(HUGE_KEEP_FOR / 4);
    if expire_huge() > 0 {
      continue;
    }
    REAPER.store(false, Ordering::SeqCst);
    // A buffer given back between the count and the store above saw a running
    // reaper and started none: carry on for it, unless a new reaper did.
    if expire_huge() == 0 || REAPER.swap(true, Ordering::SeqCst) {
      return;
    }
  }
}

/// Frees the huge buffers idle for longer than `HUGE_KEEP_FOR`; returns how
/// many huge buffers are still pooled.
fn expire_huge() -> usize {
  fn expire<T: Pooled>(cutoff: Instant) -> usize {
    let mut expired = Vec::new();
    let left = T::with_pool(|p| {
      p.huge.expire(cutoff, &mut expired);
      p.huge.free.len()
    });
    drop(expired); // freed outside the lock
    left.unwrap_or(0)
  }
  let Some(cutoff) = Instant::now().checked_sub(HUGE_KEEP_FOR) else {
    return 1; // the clock is younger than HUGE_KEEP_FOR: nothing can be old yet
  };
  expire::<u8>(cutoff) + expire::<u16>(cutoff)
}

#[cfg(test)]
mod tests {
  use super::*;

  // A pool of its own: the process-wide pools are shared with tests running
  // concurrently, which could take a buffer between a give and a take.
  #[test]
  fn recycles_fitting_buffers_and_stays_bounded() {
    let mut pool = Pool::<u16>::new(POOL_MAX_BYTES);
    let big = Vec::<u16>::with_capacity(100_000);
    let ptr = big.as_ptr();
    pool.give(big);
    let again = pool.take(90_000).expect("a fitting buffer is reused");
    assert_eq!(again.as_ptr(), ptr);
    assert!(again.is_empty());
    assert!(pool.take(100_000).is_none(), "a buffer in use is not handed out twice");
    pool.give(again);
    // Far too large a buffer for the request is not used.
    assert!(pool.take(10_000).is_none());
    let mut bytes = Pool::<u8>::new(POOL_MAX_BYTES);
    for _ in 0..200 {
      bytes.give(Vec::<u8>::with_capacity(1 << 20));
    }
    assert!(bytes.bytes <= POOL_MAX_BYTES);
  }

  #[test]
  fn buffers_given_back_on_one_thread_are_taken_on_another() {
    // As finalizers (JS thread) and async reads (libuv pool threads) do. Large
    // and oddly sized, so no other test asks for a buffer that fits it.
    const UNITS_WANTED: usize = 15_000_017;
    let given = Vec::<u16>::with_capacity(UNITS_WANTED);
    let ptr = given.as_ptr() as usize;
    std::thread::spawn(move || give(given)).join().unwrap();
    let taken = std::thread::spawn(|| {
      let v = take::<u16>(UNITS_WANTED);
      let p = v.as_ptr() as usize;
      give(v);
      p
    })
    .join()
    .unwrap();
    assert_eq!(taken, ptr, "the buffer was recycled across threads");
    assert!(UNITS.lock().unwrap().huge.bytes <= HUGE_MAX_BYTES);
  }

  #[test]
  fn a_small_buffer_given_back_serves_the_next_small_request_on_its_thread() {
    // A thread of its own: the spare is per thread, and test threads are shared.
    std::thread::spawn(|| {
      let first = take::<u16>(1500);
      let ptr = first.as_ptr();
      give(first);
      let second = take::<u16>(1400);
      assert_eq!(second.as_ptr(), ptr, "the spare serves a request it fits");
      assert!(second.is_empty());
      let fresh = take::<u16>(1400);
      assert_ne!(fresh.as_ptr(), ptr, "a buffer in use is not handed out twice");
      give(second);
      let fresh = take::<u16>(100);
      assert_ne!(fresh.as_ptr(), ptr, "far too large a spare is not used");
      let other = std::thread::spawn(|| {
        let theirs = take::<u16>(1400);
        theirs.as_ptr() as usize
      })
      .join()
      .unwrap();
      assert_ne!(other, ptr as usize, "another thread has its own spare");
    })
    .join()
    .unwrap();
  }

  #[test]
  fn a_huge_buffer_fits_the_next_request_one_unit_longer() {
    // As two steps of one read may ask (n, then n + 1 elements).
    // u16 and an odd size no other test uses.
    const UNITS_WANTED: usize = (HUGE_MIN_BYTES + 777_777) / 2;
    let first = take::<u16>(UNITS_WANTED);
    let ptr = first.as_ptr() as usize;
    give(first);
    let second = take::<u16>(UNITS_WANTED + 1);
    assert_eq!(second.as_ptr() as usize, ptr, "the same buffer serves n + 1");
    give(second);
  }

  #[test]
  fn idle_buffers_expire_and_fresh_ones_stay() {
    let mut pool = Pool::<u8>::new(HUGE_MAX_BYTES);
    pool.give(Vec::with_capacity(HUGE_MIN_BYTES));
    let cutoff = Instant::now();
    pool.give(Vec::with_capacity(HUGE_MIN_BYTES + 1));
    let mut expired = Vec::new();
    pool.expire(cutoff, &mut expired);
    assert_eq!(expired.len(), 1, "the buffer given before the cutoff expires");
    assert_eq!(expired[0].capacity(), HUGE_MIN_BYTES);
    assert_eq!(pool.free.len(), 1);
    assert_eq!(pool.bytes, HUGE_MIN_BYTES + 1, "the pool's byte count follows");
  }

  #[test]
  fn the_reaper_frees_idle_huge_buffers_and_ends() {
    // An odd size no other test asks for; u8, which the other cross-thread test
    // does not use.
    give(Vec::<u8>::with_capacity(HUGE_MIN_BYTES + 12_345));
    let pooled = || {
      BYTES
        .lock()
        .unwrap()
        .huge
        .free
        .iter()
        .any(|idle| idle.buf.capacity() == HUGE_MIN_BYTES + 12_345)
    };
    assert!(pooled(), "kept for a moment");
    let deadline = Instant::now() + HUGE_KEEP_FOR * 4;
    while (pooled() || REAPER.load(Ordering::SeqCst)) && Instant::now() < deadline {
      std::thread::sleep(HUGE_KEEP_FOR / 10);
    }
    assert!(!pooled(), "freed after HUGE_KEEP_FOR");
  }
}
