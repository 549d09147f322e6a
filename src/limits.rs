//! Every size and time threshold of the pipeline, in the order the data meets
//! them, each with why it is where it is. The figures behind them are in the
//! commit history and in `benchmark/RESULTS.md`, not here; `npm run bench --
//! --suite calibrate` measures where each lies on the machine at hand.
//!
//! Where a threshold is used, it is read through `tuned!`: the constant
//! itself, but in a bench build (`--features bench`), where the calibrate
//! suite sets it by name in `READFILE_UTF8_TUNE` ("NAME=value,…", read once),
//! the value given there.

use std::time::Duration;

/// A threshold of this module, by name (`tuned!(SPLIT_READ_MIN_BYTES)`), or a
/// field of one (`tuned!(from.bytes, "EXTERNAL_FROM.bytes")`): see the
/// module's documentation.
macro_rules! tuned {
  ($name:ident) => {
    $crate::limits::Tunable::tuned($crate::limits::$name, stringify!($name))
  };
  ($value:expr, $name:literal) => {
    $crate::limits::Tunable::tuned($value, $name)
  };
}
pub(crate) use tuned;

/// A threshold's type: its value, or in a bench build the calibrate suite's.
pub(crate) trait Tunable: Copy {
  /// `self`, or the value the calibrate suite set for `name`.
  fn tuned(self, name: &str) -> Self;
}

macro_rules! tunable_integer {
  ($($t:ty),*) => {$(
    impl Tunable for $t {
      #[inline(always)]
      fn tuned(self, name: &str) -> Self {
        #[cfg(feature = "bench")]
        if let Some(&set) = overrides().get(name) {
          return set as $t;
        }
        let _ = name;
        self
      }
    }
  )*};
}
tunable_integer!(usize, u32, u64);

impl Tunable for Duration {
  /// In milliseconds, for the calibrate suite.
  #[inline(always)]
  fn tuned(self, name: &str) -> Self {
    Duration::from_millis((self.as_millis() as u64).tuned(name))
  }
}

/// The calibrate suite's values (`READFILE_UTF8_TUNE`), parsed once.
#[cfg(feature = "bench")]
fn overrides() -> &'static std::collections::HashMap<String, u64> {
  static PARSED: std::sync::OnceLock<std::collections::HashMap<String, u64>> = std::sync::OnceLock::new();
  PARSED.get_or_init(|| parse_overrides(&std::env::var("READFILE_UTF8_TUNE").unwrap_or_default()))
}

/// "NAME=value,NAME=value" as a map; pairs that do not parse are left out.
#[cfg(feature = "bench")]
fn parse_overrides(text: &str) -> std::collections::HashMap<String, u64> {
  text
    .split(',')
    .filter_map(|pair| {
      let (name, value) = pair.split_once('=')?;
      Some((name.trim().to_owned(), value.trim().parse().ok()?))
    })
    .collect()
}

#[cfg(all(test, feature = "bench"))]
mod tests {
  #[test]
  fn the_calibrate_suite_sets_thresholds_by_name() {
    let set = super::parse_overrides("SPLIT_READ_MIN_BYTES=1024, EXTERNAL_FROM.bytes = 0,BAD,NOPE=x");
    assert_eq!(set.len(), 2);
    assert_eq!(set["SPLIT_READ_MIN_BYTES"], 1024);
    assert_eq!(set["EXTERNAL_FROM.bytes"], 0);
  }
}

// ── arguments ─────────────────────────────────────────────────────────────

/// Paths up to this many UTF-8 bytes (minus the NUL) are NUL-terminated on the
/// stack, longer ones on the heap: a heap copy per call is a visible part of a
/// small file's read.
pub(crate) const STACK_PATH_BYTES: usize = 1024;

// ── read ──────────────────────────────────────────────────────────────────

/// Files from this size on are read as two halves by two threads (where the
/// reader can), and their conversion is split the same way: each core then
/// converts the half still in its own cache. Below it, waking the second
/// thread costs more than the split saves, even for text that becomes UTF-16
/// (the costliest conversion): the waker pays for the wake-up of an idle core,
/// which in a VM is an exit to the hypervisor, and the helper's core is shared
/// with V8's GC threads. The size holds where wake-ups are dear, not only where
/// they are cheap: wide text wins from it; Latin-1 text, cheaper to convert,
/// breaks even there and wins from a little larger. ASCII text, which needs
/// no conversion, wins from it too: the copy out of the page cache is most of
/// its cost, and each thread copies half.
pub(crate) const SPLIT_READ_MIN_BYTES: usize = 768 << 10;
/// A page: the first read of a file of unknown size (procfs and pipes mostly
/// hold little, and serve a page at a time).
pub(crate) const PAGE_BYTES: usize = 4096;

/// The chunk of a large read that is not split, checked for ASCII while still
/// in cache (which spares `classify` a pass over cold memory): a fraction of a
/// core's L2 cache. Also the most a read of unknown length takes in one
/// read(2): between two reads the cancel flag of an async read is checked, so
/// an aborted read stops soon.
pub(crate) const READ_CHUNK_BYTES: usize = 256 * 1024;

// ── transcode ─────────────────────────────────────────────────────────────

/// Inputs not read in halves (decodeUtf8's buffers, and text whose read was
/// not split) are converted on two threads from this size on, and decoded
/// with replacement from twice this size (its right half's units must then
/// move after the left's); below, the second core's cold reads of the other
/// half cost what the split saves.
pub const PARALLEL_MIN_BYTES: usize = 4 << 20;

/// Once there is more than one error per this many bytes decoded (and at
/// least `DENSE_MIN_ERRORS` errors), the SIMD route's per-error cost exceeds
/// the dense-error decoder's (`transcode::dense`), which then takes the rest.
pub(crate) const DENSE_ERROR_SPACING: usize = 64;
/// See `DENSE_ERROR_SPACING`.
pub(crate) const DENSE_MIN_ERRORS: usize = 16;

// ── JS string ─────────────────────────────────────────────────────────────

/// From how many bytes of string data a string is made external rather than
/// copied into V8's heap, and when a copy's read buffer goes first: per Node
/// major.
pub(crate) struct ExternalFrom {
  /// Strings of this many bytes of data or more are external.
  pub(crate) bytes: usize,
  /// ...and only while the JS heap holds fewer bytes than this in small
  /// objects outside its young generation: only a full GC frees an external
  /// string, V8 starts one for every 64 MiB of them, and its pause grows with
  /// the objects it marks, while a copy dies in a scavenge.
  pub(crate) heap_below: usize,
  /// In the lean memory mode, strings of this many code units or more are
  /// external, the rest copied: fs's own rule for this Node (a fact of
  /// Node's, not a threshold of ours), so that a loop of reads peaks where
  /// fs's does.
  pub(crate) lean_units: usize,
  /// In the lean mode, a sync call that copies converted text read from a
  /// file of this size or more frees its read buffer before V8's copy is
  /// made: the converted text and V8's copy then peak no higher than fs's
  /// Buffer and string do. Otherwise the buffer is kept for the next read,
  /// whose fresh pages would fault in: later on Node 26, whose copies keep
  /// less of our lead.
  pub(crate) read_freed_from: usize,
}

/// Node 20–24: a copy into V8's heap is cheap while it fits a regular page,
/// and slow from where it needs a large-object page of its own: external
/// strings win from that size on.
pub(crate) const EXTERNAL_FROM_BEFORE_26: ExternalFrom = ExternalFrom {
  bytes: crate::v8::MAX_REGULAR_OBJECT_BYTES,
  heap_below: 64 << 20,
  lean_units: usize::MAX,
  read_freed_from: 4 << 20,
};

/// Node 26 copies strings much faster: copies, which die in scavenges as
/// fs's do, win up to the size where V8's copy into fresh large-object pages
/// costs more than the full GCs that external strings bring on.
pub(crate) const EXTERNAL_FROM_26: ExternalFrom = ExternalFrom {
  bytes: 512 << 10,
  heap_below: 48 << 20,
  // Node's EXTERN_APEX (src/string_bytes.cc).
  lean_units: 0xFBEE9,
  read_freed_from: 8 << 20,
};

/// The JS layer tells the addon the heap's size once per this many calls
/// (lib/heap.js): asking V8 costs about a small file's read, and a heap grows
/// slowly next to a loop of reads.
pub(crate) const HEAP_CHECK_EVERY: u32 = 64;

/// From this many bytes on, text that a sync call finds invalid at its start
/// is left to V8's own UTF-8 decoder, fed the bytes as fs feeds it: our UTF-16
/// buffer beside V8's copy of it would be the largest part of the call's peak,
/// and from this size on our read alone keeps the call ahead of fs.
pub(crate) const V8_DECODES_INVALID_FROM: usize = 32 << 20;

// ── buffers ───────────────────────────────────────────────────────────────

/// Buffers smaller than this are not shared between threads: each thread keeps
/// a few for its next small string (glibc's own per-thread cache stops at about
/// 1 KiB, and a fresh buffer comes back cold).
pub(crate) const SHARED_MIN_BYTES: usize = 64 * 1024;

// An external string's buffer is given back by its finalizer, which Node 26
// may run on one of V8's GC threads: it must go to the shared pool, not to the
// small buffers of whichever thread that is.
const _: () = assert!(EXTERNAL_FROM_BEFORE_26.bytes >= SHARED_MIN_BYTES && EXTERNAL_FROM_26.bytes >= SHARED_MIN_BYTES);

/// How many small buffers of each element type a thread keeps, unless told
/// otherwise (`buffers::keep_locally`): a read buffer and a conversion's output
/// are in use at the same time.
pub(crate) const LOCAL_KEEP: usize = 2;

/// Most memory the shared pool keeps idle, per element type: V8's step of
/// external memory (`v8::EXTERNAL_MEMORY_STEP`), about what a full GC gives
/// back at once in a loop of reads. Bounds the memory a burst of large strings
/// leaves behind until `KEEP_IDLE_FOR` frees it, and what a caller holding
/// every string pays beyond fs; half of it costs loops of reads fresh pages.
pub(crate) const SHARED_MAX_BYTES: usize = crate::v8::EXTERNAL_MEMORY_STEP as usize;

/// A pooled buffer serves a request if its capacity is at most this many times
/// the request, so little memory is held idle behind a string.
pub(crate) const MAX_WASTE_FACTOR: usize = 2;

/// How long a shared buffer is kept unused before it is freed (by a thread
/// that runs only while the pool holds something): a loop of reads reuses it,
/// and memory goes back to the system soon after the work stops.
pub(crate) const KEEP_IDLE_FOR: Duration = Duration::from_millis(500);

/// Buffers from this size on are rounded up to whole steps of it, so that one
/// fits the next request of about the same size (a read asks for n + 1 bytes,
/// its Latin-1 output for n). Address space only: pages never written cost
/// nothing.
pub(crate) const LARGE_STEP_BYTES: usize = 2 << 20;

// ── batches (readFilesUtf8) ───────────────────────────────────────────────

/// At most this many results wait for the JS thread (finished, or being read
/// ahead of the next one it needs).
pub(crate) const BATCH_WINDOW: usize = 1024;
/// Readers start no new file while the results waiting for the JS thread
/// hold this many bytes or more: a list of huge files streams through. The
/// JS thread itself reads on only while the results it took out of the ring
/// and has not made into strings yet hold less than a quarter of it.
pub(crate) const BATCH_PENDING_MAX_BYTES: usize = 32 << 20;
/// Small buffers the JS thread copied strings out of, held for the batch's
/// readers' next files (and half as many kept by the readers between them):
/// enough that most files find one that fits, however many readers there are.
pub(crate) const BATCH_SPARES: usize = 128;
/// Most threads a batch starts; more cannot help a disk or the page cache.
pub(crate) const BATCH_MAX_THREADS: u32 = 256;

/// Every threshold above by name, as this process uses it (tuned), with
/// `from` this Node's `ExternalFrom`: what the calibrate suite compares its
/// crossovers with (bench builds only).
#[cfg(feature = "bench")]
pub(crate) fn all(from: &ExternalFrom) -> Vec<(&'static str, u64)> {
  let named = [
    ("STACK_PATH_BYTES", STACK_PATH_BYTES as u64),
    ("SPLIT_READ_MIN_BYTES", SPLIT_READ_MIN_BYTES as u64),
    ("PAGE_BYTES", PAGE_BYTES as u64),
    ("READ_CHUNK_BYTES", READ_CHUNK_BYTES as u64),
    ("PARALLEL_MIN_BYTES", PARALLEL_MIN_BYTES as u64),
    ("DENSE_ERROR_SPACING", DENSE_ERROR_SPACING as u64),
    ("DENSE_MIN_ERRORS", DENSE_MIN_ERRORS as u64),
    ("EXTERNAL_FROM.bytes", from.bytes as u64),
    ("EXTERNAL_FROM.heap_below", from.heap_below as u64),
    ("EXTERNAL_FROM.lean_units", from.lean_units as u64),
    ("EXTERNAL_FROM.read_freed_from", from.read_freed_from as u64),
    ("HEAP_CHECK_EVERY", HEAP_CHECK_EVERY as u64),
    ("V8_DECODES_INVALID_FROM", V8_DECODES_INVALID_FROM as u64),
    ("SHARED_MIN_BYTES", SHARED_MIN_BYTES as u64),
    ("LOCAL_KEEP", LOCAL_KEEP as u64),
    ("SHARED_MAX_BYTES", SHARED_MAX_BYTES as u64),
    ("MAX_WASTE_FACTOR", MAX_WASTE_FACTOR as u64),
    ("KEEP_IDLE_FOR", KEEP_IDLE_FOR.as_millis() as u64),
    ("LARGE_STEP_BYTES", LARGE_STEP_BYTES as u64),
    ("BATCH_WINDOW", BATCH_WINDOW as u64),
    ("BATCH_PENDING_MAX_BYTES", BATCH_PENDING_MAX_BYTES as u64),
    ("BATCH_SPARES", BATCH_SPARES as u64),
    ("BATCH_MAX_THREADS", BATCH_MAX_THREADS as u64),
  ];
  named
    .into_iter()
    .map(|(name, value)| (name, value.tuned(name)))
    .collect()
}
