//! The one place buffers are reused: read buffers and code-unit buffers alike
//! are taken here and given back here (by the pipeline when a string was
//! copied, by a string's finalizer when V8 collects it). Writing into memory
//! that is already mapped and cached is what makes a loop of reads fast: a
//! fresh buffer costs a page fault per 4 KiB touched, more than converting.
//!
//! Two tiers behind one `take`/`give`:
//! - small buffers stay with their thread (`LOCAL_KEEP` per element type, more
//!   where `keep_locally` says so), for its next small string, without a lock;
//! - large ones go to one process-wide pool, shared because finalizers give
//!   buffers back on the JS thread while async reads take theirs on the pool's
//!   threads. It is bounded in bytes (`SHARED_MAX_BYTES`), and a reaper
//!   thread, running only while
//!   the pool holds something, frees every buffer idle for `KEEP_IDLE_FOR`: the
//!   memory a burst of reads used goes back to the system soon after it ends.
//!
//! Large blocks are mapped straight from the kernel (`mapped`), so that a
//! buffer freed is memory given back, whichever thread allocated it.

#[cfg(target_os = "linux")]
pub(crate) mod mapped;

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::limits::{facts, tuned, SHARED_MIN_BYTES};
#[cfg(test)]
use crate::limits::{KEEP_IDLE_FOR, LARGE_STEP_BYTES};

/// How many small buffers of each element type a thread keeps, unless told
/// otherwise (`keep_locally`): a read buffer and a conversion's output are in
/// use at the same time.
pub(crate) const LOCAL_KEEP: usize = 2;

/// Most memory the shared pool keeps idle, per element type: V8's step of
/// external memory, about what a full GC gives back at once in a loop of
/// reads. Bounds the memory a burst of large strings leaves behind until
/// `KEEP_IDLE_FOR` frees it, and what a caller holding every string pays
/// beyond fs.
const SHARED_MAX_BYTES: usize = facts::EXTERNAL_MEMORY_STEP;

/// Requests from this size on are rounded up to whole `LARGE_STEP_BYTES`
/// (in tests: the constant's value).
#[cfg(test)]
const ROUND_UP_FROM_BYTES: usize = 8 * LARGE_STEP_BYTES;

/// The free buffers of one element type, and their total size in bytes.
pub(crate) struct Pool<T> {
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

  /// Keeps `buf`, dropping the oldest buffers to make room; returns what is to
  /// be freed (by the caller, once the lock is released).
  fn give(&mut self, mut buf: Vec<T>) -> Vec<Vec<T>> {
    let size = bytes_of(&buf);
    let mut dropped = Vec::new();
    let max_bytes = self.max_bytes;
    while self.bytes + size > max_bytes && !self.free.is_empty() {
      let old = self.free.remove(0);
      self.bytes -= bytes_of(&old.buf);
      dropped.push(old.buf);
    }
    if self.bytes + size <= max_bytes {
      buf.clear();
      self.bytes += size;
      self.free.push(Idle {
        buf,
        since: Instant::now(),
      });
    } else {
      dropped.push(buf); // larger than the whole pool
    }
    dropped
  }

  /// Moves the buffers idle since before `cutoff` out of the pool (the caller
  /// frees them once the lock is released).
  fn expire(&mut self, cutoff: Instant, expired: &mut Vec<Vec<T>>) {
    self.move_out(|idle| idle.since < cutoff, expired);
  }

  /// Moves the idle buffers `which` picks out of the pool into `out`.
  fn move_out(&mut self, which: impl Fn(&Idle<T>) -> bool, out: &mut Vec<Vec<T>>) {
    let (picked, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut self.free).into_iter().partition(which);
    self.free = kept;
    for idle in picked {
      self.bytes -= bytes_of(&idle.buf);
      out.push(idle.buf);
    }
  }
}

fn bytes_of<T>(buf: &Vec<T>) -> usize {
  buf.capacity() * std::mem::size_of::<T>()
}

// Held only for a best-fit scan of a few entries; a poisoned lock (a panic while
// held, which Pool's methods do not do) just turns pooling off.
static BYTES: Mutex<Pool<u8>> = Mutex::new(Pool::new(SHARED_MAX_BYTES));
static UNITS: Mutex<Pool<u16>> = Mutex::new(Pool::new(SHARED_MAX_BYTES));

thread_local! {
  static LOCAL_BYTES: RefCell<Vec<Vec<u8>>> = const { RefCell::new(Vec::new()) };
  static LOCAL_UNITS: RefCell<Vec<Vec<u16>>> = const { RefCell::new(Vec::new()) };
  /// How many small buffers of each type this thread keeps.
  static LOCAL_KEEP_HERE: Cell<usize> = const { Cell::new(LOCAL_KEEP) };
}

/// Lets this thread keep `count` small buffers of each type rather than
/// `LOCAL_KEEP`: for a batch's readers, which are given the buffers the JS
/// thread has copied strings out of, and end with their batch.
pub(crate) fn keep_locally(count: usize) {
  LOCAL_KEEP_HERE.with(|keep| keep.set(count));
}

/// Whether `give` would keep `buf` with the thread that gives it back (a
/// small buffer, not an empty one).
pub(crate) fn is_kept_locally<T>(buf: &Vec<T>) -> bool {
  buf.capacity() > 0 && bytes_of(buf) < SHARED_MIN_BYTES
}

/// The element types whose buffers are reused: bytes and UTF-16 units.
pub(crate) trait Reusable: Sized + 'static {
  fn with_shared<R>(f: impl FnOnce(&mut Pool<Self>) -> R) -> Option<R>;
  /// Runs `f` on this thread's small buffers; `None` while the thread ends.
  fn with_local<R>(f: impl FnOnce(&mut Vec<Vec<Self>>) -> R) -> Option<R>;
}

impl Reusable for u8 {
  fn with_shared<R>(f: impl FnOnce(&mut Pool<u8>) -> R) -> Option<R> {
    BYTES.lock().ok().map(|mut p| f(&mut p))
  }
  fn with_local<R>(f: impl FnOnce(&mut Vec<Vec<u8>>) -> R) -> Option<R> {
    LOCAL_BYTES.try_with(|local| f(&mut local.borrow_mut())).ok()
  }
}

impl Reusable for u16 {
  fn with_shared<R>(f: impl FnOnce(&mut Pool<u16>) -> R) -> Option<R> {
    UNITS.lock().ok().map(|mut p| f(&mut p))
  }
  fn with_local<R>(f: impl FnOnce(&mut Vec<Vec<u16>>) -> R) -> Option<R> {
    LOCAL_UNITS.try_with(|local| f(&mut local.borrow_mut())).ok()
  }
}

/// Whether a free buffer of `have` elements may serve a request for `want`.
fn fits(have: usize, want: usize) -> bool {
  have >= want && have <= want.saturating_mul(tuned!(MAX_WASTE_FACTOR))
}

/// An empty buffer with room for at least `capacity` elements: a reused one
/// when one fits, otherwise a new one.
pub(crate) fn take<T: Reusable>(capacity: usize) -> Vec<T> {
  let bytes = capacity * std::mem::size_of::<T>();
  let reused = if bytes >= SHARED_MIN_BYTES {
    T::with_shared(|p| p.take(capacity)).flatten()
  } else {
    T::with_local(|local| {
      // Best fit: a batch's reader keeps dozens (`keep_locally`).
      let (index, _) = local
        .iter()
        .enumerate()
        .filter(|(_, buf)| fits(buf.capacity(), capacity))
        .min_by_key(|(_, buf)| buf.capacity())?;
      Some(local.swap_remove(index))
    })
    .flatten()
  };
  if let Some(buf) = reused {
    return buf;
  }
  // Rounded up so that it also fits the next request of about the same size:
  // the steps of one read ask for n and n + 1 elements of the same file.
  // From eight steps on: requests below are rounded to nothing that matters.
  let capacity = if bytes >= 8 * tuned!(LARGE_STEP_BYTES) {
    let step: usize = tuned!(LARGE_STEP_BYTES);
    (bytes + step).next_multiple_of(step) / std::mem::size_of::<T>()
  } else {
    capacity
  };
  Vec::with_capacity(capacity)
}

/// Returns a buffer no longer in use, to be reused or freed. Safe to call
/// while the thread is ending (the buffer is then just freed).
pub(crate) fn give<T: Reusable>(mut buf: Vec<T>) {
  if bytes_of(&buf) >= SHARED_MIN_BYTES {
    // If the pool's lock is poisoned, the closure is dropped unrun and `buf` with it.
    let dropped = T::with_shared(|p| p.give(buf));
    drop(dropped); // freed outside the lock
    start_reaper();
  } else if is_kept_locally(&buf) {
    buf.clear();
    // The oldest small buffer it replaces (if any) is freed after the
    // thread-local is released.
    let replaced = T::with_local(|local| {
      local.push(buf);
      let keep = LOCAL_KEEP_HERE.try_with(Cell::get).unwrap_or(LOCAL_KEEP);
      (local.len() > keep).then(|| local.remove(0))
    });
    if let Some(Some(old)) = replaced {
      freed_small(bytes_of(&old));
    }
  }
}

/// Bytes of small buffers freed since the C allocator was last asked to give
/// its free pages back (`trim_allocator`, by the reaper once frees pause).
static SMALL_FREED: AtomicUsize = AtomicUsize::new(0);

fn freed_small(bytes: usize) {
  SMALL_FREED.fetch_add(bytes, Ordering::Relaxed);
  start_reaper();
}

fn trim_due() -> bool {
  SMALL_FREED.load(Ordering::Relaxed) > 0
}

/// Asks the C allocator to give its free pages back to the system: glibc keeps
/// freed small blocks in RSS, and the small buffers of external strings are
/// freed by their finalizers thousands at a time, in the full GC that collects
/// them (a trim per such GC at most: a loop of copies frees none).
fn trim_allocator() {
  #[cfg(all(target_os = "linux", target_env = "gnu"))]
  // SAFETY: malloc_trim takes no pointer; it walks the allocator's own free
  // lists under the allocator's locks.
  unsafe {
    libc::malloc_trim(0);
  }
}

/// Gives back to the system the pages of `buf` past its length, which a
/// buffer reused from the pool may have written for a longer string before:
/// an external string holds its buffer whole for as long as it lives, and
/// should cost no more memory than its own units (Linux, whose large buffers
/// are our own mappings; elsewhere nothing).
pub(crate) fn release_unused<T>(buf: &Vec<T>) {
  #[cfg(target_os = "linux")]
  mapped::release_after(
    buf.as_ptr().cast(),
    std::mem::size_of_val(buf.as_slice()),
    bytes_of(buf),
  );
  #[cfg(not(target_os = "linux"))]
  let _ = buf;
}

/// Whether a reaper thread is running (or being started).
static REAPER: AtomicBool = AtomicBool::new(false);

/// Starts the thread that frees idle buffers, unless one is running. If no
/// thread can be started, idle buffers wait for a later `give` to try again
/// (still bounded by `SHARED_MAX_BYTES`).
fn start_reaper() {
  if REAPER.load(Ordering::Relaxed) || REAPER.swap(true, Ordering::SeqCst) {
    return;
  }
  let started = std::thread::Builder::new()
    .name("readfile-utf8-reaper".into())
    .spawn(reap);
  if started.is_err() {
    REAPER.store(false, Ordering::SeqCst);
  }
}

/// How long buffers are kept idle (`limits::KEEP_IDLE_FOR`).
fn keep_idle_for() -> Duration {
  tuned!(KEEP_IDLE_FOR)
}

/// The reaper: frees the buffers idle for longer than `KEEP_IDLE_FOR`, and
/// trims the allocator once small frees are due and have paused for a tick;
/// ends when neither is left.
fn reap() {
  let mut freed_before = SMALL_FREED.load(Ordering::Relaxed);
  loop {
    // Buffers are freed within a quarter of the idle time after it.
    std::thread::sleep(keep_idle_for() / 4);
    let freed = SMALL_FREED.load(Ordering::Relaxed);
    if freed > 0 && freed == freed_before {
      SMALL_FREED.fetch_sub(freed, Ordering::Relaxed);
      trim_allocator();
    }
    freed_before = SMALL_FREED.load(Ordering::Relaxed);
    if expire_idle() > 0 || trim_due() {
      continue;
    }
    REAPER.store(false, Ordering::SeqCst);
    // A buffer given back between the count and the store above saw a running
    // reaper and started none: carry on for it, unless a new reaper did.
    if (expire_idle() == 0 && !trim_due()) || REAPER.swap(true, Ordering::SeqCst) {
      return;
    }
  }
}

/// Frees the buffers idle for longer than `KEEP_IDLE_FOR`; returns how many
/// are still pooled.
fn expire_idle() -> usize {
  fn expire<T: Reusable>(cutoff: Instant) -> usize {
    let mut expired = Vec::new();
    let left = T::with_shared(|p| {
      p.expire(cutoff, &mut expired);
      p.free.len()
    });
    drop(expired); // freed outside the lock
    left.unwrap_or(0)
  }
  let Some(cutoff) = Instant::now().checked_sub(keep_idle_for()) else {
    return 1; // the clock is younger than KEEP_IDLE_FOR: nothing can be old yet
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
    let mut pool = Pool::<u16>::new(SHARED_MAX_BYTES);
    let big = Vec::<u16>::with_capacity(100_000);
    let ptr = big.as_ptr();
    drop(pool.give(big));
    let again = pool.take(90_000).expect("a fitting buffer is reused");
    assert_eq!(again.as_ptr(), ptr);
    assert!(again.is_empty());
    assert!(pool.take(100_000).is_none(), "a buffer in use is not handed out twice");
    drop(pool.give(again));
    // Far too large a buffer for the request is not used.
    assert!(pool.take(10_000).is_none());
    let mut bytes = Pool::<u8>::new(8 << 20);
    for _ in 0..20 {
      drop(bytes.give(Vec::<u8>::with_capacity(1 << 20)));
    }
    assert!(bytes.bytes <= 8 << 20);
  }

  #[test]
  fn buffers_given_back_on_one_thread_are_taken_on_another() {
    // As finalizers (JS thread, or V8's GC threads) and async reads (libuv pool threads) do. Large
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
    assert!(UNITS.lock().unwrap().bytes <= SHARED_MAX_BYTES);
  }

  #[test]
  fn a_thread_told_to_keep_more_small_buffers_reuses_them_all_best_fit_first() {
    std::thread::spawn(|| {
      keep_locally(8);
      let bufs: Vec<Vec<u8>> = (1..=8).map(|i| take::<u8>(i * 1000)).collect();
      let ptrs: Vec<usize> = bufs.iter().map(|b| b.as_ptr() as usize).collect();
      bufs.into_iter().for_each(give);
      assert_eq!(LOCAL_BYTES.with_borrow(|local| local.len()), 8);
      let in_use: Vec<Vec<u8>> = (1..=8).map(|i| take::<u8>(i * 1000)).collect();
      let mut again: Vec<usize> = in_use.iter().map(|b| b.as_ptr() as usize).collect();
      again.sort_unstable();
      let mut kept = ptrs;
      kept.sort_unstable();
      assert_eq!(again, kept, "every request is served by a kept buffer");
      drop(in_use);
      let (wide, close) = (take::<u8>(3000), take::<u8>(1600));
      give(wide);
      give(close);
      let best = take::<u8>(1500);
      assert_eq!(best.capacity(), 1600, "the closest fit, not the first");
      let counts = std::thread::spawn(|| {
        let bufs: Vec<Vec<u8>> = (0..4).map(|_| take::<u8>(1000)).collect();
        bufs.into_iter().for_each(give);
        LOCAL_BYTES.with_borrow(|local| local.len())
      });
      assert_eq!(counts.join().unwrap(), LOCAL_KEEP, "other threads keep the default");
    })
    .join()
    .unwrap();
  }

  #[test]
  fn small_buffers_given_back_serve_the_next_small_requests_on_their_thread() {
    // A thread of its own: small buffers are per thread, and test threads are shared.
    std::thread::spawn(|| {
      let first = take::<u16>(1500);
      let ptr = first.as_ptr();
      give(first);
      let second = take::<u16>(1400);
      assert_eq!(second.as_ptr(), ptr, "a kept buffer serves a request it fits");
      assert!(second.is_empty());
      let fresh = take::<u16>(1400);
      assert_ne!(fresh.as_ptr(), ptr, "a buffer in use is not handed out twice");
      give(fresh);
      give(second);
      let fresh = take::<u16>(100);
      assert_ne!(fresh.as_ptr(), ptr, "far too large a buffer is not used");
      let third = take::<u16>(100);
      let fourth = take::<u16>(100);
      give(third);
      give(fourth);
      give(fresh);
      assert!(
        LOCAL_UNITS.with_borrow(|local| local.len()) <= LOCAL_KEEP,
        "a thread keeps a few only"
      );
      let other = std::thread::spawn(|| {
        let theirs = take::<u16>(1400);
        theirs.as_ptr() as usize
      })
      .join()
      .unwrap();
      assert_ne!(other, ptr as usize, "another thread has its own small buffers");
    })
    .join()
    .unwrap();
  }

  #[test]
  fn a_large_buffer_fits_the_next_request_one_unit_longer() {
    // As two steps of one read may ask (n, then n + 1 elements).
    // u16 and an odd size no other test uses.
    const UNITS_WANTED: usize = (ROUND_UP_FROM_BYTES + 777_777) / 2;
    let first = take::<u16>(UNITS_WANTED);
    let ptr = first.as_ptr() as usize;
    give(first);
    let second = take::<u16>(UNITS_WANTED + 1);
    assert_eq!(second.as_ptr() as usize, ptr, "the same buffer serves n + 1");
    give(second);
  }

  #[test]
  fn idle_buffers_expire_and_fresh_ones_stay() {
    let mut pool = Pool::<u8>::new(SHARED_MAX_BYTES);
    drop(pool.give(Vec::with_capacity(SHARED_MIN_BYTES)));
    let cutoff = Instant::now();
    drop(pool.give(Vec::with_capacity(SHARED_MIN_BYTES + 1)));
    let mut expired = Vec::new();
    pool.expire(cutoff, &mut expired);
    assert_eq!(expired.len(), 1, "the buffer given before the cutoff expires");
    assert_eq!(expired[0].capacity(), SHARED_MIN_BYTES);
    assert_eq!(pool.free.len(), 1);
    assert_eq!(pool.bytes, SHARED_MIN_BYTES + 1, "the pool's byte count follows");
  }

  #[test]
  fn the_reaper_frees_idle_buffers_and_ends() {
    // An odd size no other test asks for; u8, which the other cross-thread test
    // does not use.
    give(Vec::<u8>::with_capacity(ROUND_UP_FROM_BYTES + 12_345));
    let pooled = || {
      BYTES
        .lock()
        .unwrap()
        .free
        .iter()
        .any(|idle| idle.buf.capacity() == ROUND_UP_FROM_BYTES + 12_345)
    };
    assert!(pooled(), "kept for a moment");
    let deadline = Instant::now() + KEEP_IDLE_FOR * 4;
    while (pooled() || REAPER.load(Ordering::SeqCst)) && Instant::now() < deadline {
      std::thread::sleep(KEEP_IDLE_FOR / 10);
    }
    assert!(!pooled(), "freed after KEEP_IDLE_FOR");
  }
}
