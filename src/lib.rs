//! readfile-utf8: `fs.readFileSync(path, 'utf8')`, faster, with the same result.
//!
//! The data's way through the crate, one direction, one module per step:
//!   `exports`   the JS entry points: take the arguments, call `pipeline`
//!               (`exports::batch`: many files on reader threads)
//!   `pipeline`  one function per kind of call, running the steps below
//!   → `read`      the file's bytes into one buffer (`buffers`)
//!   → `classify`  ASCII / fits Latin-1 / other UTF-8 / invalid
//!   → `transcode` Latin-1 or UTF-16 code units (U+FFFD replacement as Node)
//!   → `plan`      how the string is made: the one decision
//!   → `js_string` the JS string, made as the plan says.
//!
//! What the steps hand each other is in `outcome`. Leaves they share:
//! `limits` (every number, from lib/limits.json), `heap` and
//! `external_memory` (facts the plan looks up: the JS heap's size, and what
//! V8's GC is told of external strings), `buffers` (the one buffer-reuse
//! mechanism), `two_threads` (a job split over two cores); `pin` keeps the
//! library loaded for the process's life (Workers unload addons).

mod buffers;
mod classify;
// napi-rs registers the exports only outside unit-test builds.
#[cfg_attr(test, allow(dead_code))]
mod exports;
mod external_memory;
#[cfg_attr(test, allow(dead_code))]
mod heap;
mod js_string;
mod limits;
mod outcome;
#[cfg_attr(test, allow(dead_code))]
mod pin;
mod pipeline;
mod plan;
mod read;
mod transcode;
mod two_threads;

/// This library's own large buffers are mapped and unmapped directly, so that
/// freeing one gives its memory back (see `buffers::mapped`).
#[cfg(target_os = "linux")]
#[global_allocator]
static ALLOCATOR: buffers::mapped::LargeMapped = buffers::mapped::LargeMapped;

/// What the integration tests (`tests/`) check directly: the pure-Rust steps,
/// without Node. Not an API.
#[doc(hidden)]
pub mod testing {
  pub use crate::classify::{classify, Class};
  pub use crate::outcome::{ReadError, ReadFacts, Syscall};
  pub use crate::read::{read_fd, read_path};

  /// In-memory input is converted on two threads from this size on.
  pub const PARALLEL_MIN_BYTES: usize = crate::limits::PARALLEL_MIN_BYTES;
  pub use crate::transcode::testing::*;
  pub use crate::transcode::{decode, Decoded, Text};
  pub use crate::two_threads::page_aligned_middle;
}
