//! readfile-utf8: `fs.readFileSync(path, 'utf8')`, faster, with the same result.
//!
//! The data's way through the crate, one direction, one module per step:
//!   `exports`   the JS entry points: take the arguments, call `pipeline`
//!   `pipeline`  one function per kind of call, running the steps below
//!   → `read`      the file's bytes into one buffer (`buffers`)
//!   → `classify`  ASCII / fits Latin-1 / other UTF-8 / invalid
//!   → `transcode` Latin-1 or UTF-16 code units (U+FFFD replacement as Node)
//!   → `js_string` a JS string, copied or external.
//!
//! Leaves the steps share: `limits` (every threshold), `v8` (what V8 fixes),
//! `buffers` (the one
//! buffer-reuse mechanism), `two_threads` (a job split over two cores),
//! `external_memory` (what V8's GC is told of external strings' buffers);
//! `pin` keeps the library loaded for the process's life (Workers unload addons).

mod buffers;
mod classify;
// napi-rs registers the exports only outside unit-test builds.
#[cfg_attr(test, allow(dead_code))]
mod exports;
mod external_memory;
mod js_string;
mod limits;
#[cfg_attr(test, allow(dead_code))]
mod pin;
mod pipeline;
mod read;
mod transcode;
mod two_threads;
mod v8;

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
  pub use crate::limits::{LOSSY_PARALLEL_MIN_BYTES, PARALLEL_MIN_BYTES};
  pub use crate::read::{read_fd, read_path, ReadError, ReadFacts, Syscall};
  pub use crate::transcode::testing::*;
  pub use crate::transcode::{decode, Decoded, Text};
  pub use crate::two_threads::page_aligned_middle;
}
