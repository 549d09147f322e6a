//! Recycles the large buffers that external strings hand back when V8 collects
//! them, so that the next large string is written into memory that is already
//! mapped and cached. A fresh buffer costs a page fault per 4 KiB touched
//! (~1 ms per 4 MiB on the machines we measured on), more than converting the text.
//!
//! One pool per process, shared by all threads and bounded in total bytes;
//! small buffers go straight to the allocator. It must be shared: finalizers
//! give buffers back on the JS thread that made the string, while async reads
//! take theirs on libuv's pool threads. With one pool per thread the JS thread's
//! pool filled up with buffers no async read could reuse (up to 64 MiB per
//! element type, held idle for good), and every async read page-faulted a fresh
//! buffer: 10^5 async reads of 1 MiB files at concurrency 64 peaked at ~335 MiB
//! RSS (~200 MiB shared).

use std::sync::Mutex;

/// Buffers smaller than this are not pooled: malloc reuses small blocks well.
pub const POOL_MIN_BYTES: usize = 64 * 1024;
/// Most memory the pool keeps idle (per element type).
const POOL_MAX_BYTES: usize = 64 << 20;
/// A pooled buffer serves a request if its capacity is at most this many times
/// the request, so little memory is held idle behind a string.
const MAX_WASTE_FACTOR: usize = 2;

/// The free buffers of one element type, and their total size in bytes.
pub struct Pool<T> {
  free: Vec<Vec<T>>,
  bytes: usize,
}

impl<T> Pool<T> {
  const fn new() -> Self {
    Pool {
      free: Vec::new(),
      bytes: 0,
    }
  }

  fn take(&mut self, capacity: usize) -> Option<Vec<T>> {
    // Best fit among the (few) free buffers.
    let (index, _) = self
      .free
      .iter()
      .enumerate()
      .filter(|(_, v)| v.capacity() >= capacity && v.capacity() <= capacity.saturating_mul(MAX_WASTE_FACTOR))
      .min_by_key(|(_, v)| v.capacity())?;
    let buf = self.free.swap_remove(index);
    self.bytes -= bytes_of(&buf);
    Some(buf)
  }

  fn give(&mut self, mut buf: Vec<T>) {
    let size = bytes_of(&buf);
    // Make room by dropping the oldest buffers; a buffer larger than the whole
    // pool is simply freed.
    while self.bytes + size > POOL_MAX_BYTES && !self.free.is_empty() {
      let old = self.free.remove(0);
      self.bytes -= bytes_of(&old);
    }
    if self.bytes + size <= POOL_MAX_BYTES {
      buf.clear();
      self.bytes += size;
      self.free.push(buf);
    }
  }
}

fn bytes_of<T>(buf: &Vec<T>) -> usize {
  buf.capacity() * std::mem::size_of::<T>()
}

// Held only for a best-fit scan of a few entries; a poisoned lock (a panic while
// held, which Pool's methods do not do) just turns pooling off.
static BYTES: Mutex<Pool<u8>> = Mutex::new(Pool::new());
static UNITS: Mutex<Pool<u16>> = Mutex::new(Pool::new());

/// The element types whose buffers are pooled.
pub trait Pooled: Sized + 'static {
  fn with_pool<R>(f: impl FnOnce(&mut Pool<Self>) -> R) -> Option<R>;
}

impl Pooled for u8 {
  fn with_pool<R>(f: impl FnOnce(&mut Pool<u8>) -> R) -> Option<R> {
    BYTES.lock().ok().map(|mut p| f(&mut p))
  }
}

impl Pooled for u16 {
  fn with_pool<R>(f: impl FnOnce(&mut Pool<u16>) -> R) -> Option<R> {
    UNITS.lock().ok().map(|mut p| f(&mut p))
  }
}

/// New buffers from this size on ask the kernel for transparent huge pages: one
/// fault per 2 MiB instead of one per 4 KiB (64 MiB fresh: ~37 ms → ~11 ms measured).
const HUGE_PAGES_MIN_BYTES: usize = 4 << 20;
const HUGE_PAGE: usize = 2 << 20;

/// An empty buffer with room for at least `capacity` elements: a recycled one
/// when the pool has one that fits, otherwise a new one.
pub fn take<T: Pooled>(capacity: usize) -> Vec<T> {
  let bytes = capacity * std::mem::size_of::<T>();
  if bytes >= POOL_MIN_BYTES {
    if let Some(buf) = T::with_pool(|p| p.take(capacity)).flatten() {
      return buf;
    }
  }
  let buf: Vec<T> = Vec::with_capacity(capacity);
  if bytes >= HUGE_PAGES_MIN_BYTES {
    advise_huge_pages(buf.as_ptr().cast(), bytes);
  }
  buf
}

/// Asks for huge pages on the 2 MiB-aligned part of a new, untouched allocation.
/// Only advice: where THP is off or the call fails, nothing changes.
fn advise_huge_pages(start: *const u8, len: usize) {
  let first = (start as usize).next_multiple_of(HUGE_PAGE);
  let end = (start as usize + len) / HUGE_PAGE * HUGE_PAGE;
  if end > first {
    // SAFETY: [first, end) lies inside an allocation we own; MADV_HUGEPAGE only
    // changes how the kernel backs those pages, never their contents.
    unsafe { libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE) };
  }
}

/// Returns a buffer no longer in use. It is kept for reuse if it is large and
/// the pool has room, otherwise freed. Safe to call while the thread is ending
/// (the buffer is then just freed).
pub fn give<T: Pooled>(buf: Vec<T>) {
  if bytes_of(&buf) >= POOL_MIN_BYTES {
    // If the pool's lock is poisoned, the closure is dropped unrun and `buf` with it.
    T::with_pool(|p| p.give(buf));
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  // A pool of its own: the process-wide pools are shared with tests running
  // concurrently, which could take a buffer between a give and a take.
  #[test]
  fn recycles_fitting_buffers_and_stays_bounded() {
    let mut pool = Pool::<u16>::new();
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
    let mut bytes = Pool::<u8>::new();
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
    assert!(UNITS.lock().unwrap().bytes <= POOL_MAX_BYTES);
  }
}
