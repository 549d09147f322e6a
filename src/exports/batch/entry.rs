//! One entry of a batch: what its readers may read ahead of the JS thread
//! (`Ahead`), how each file is read (`Reading`), and the single read's
//! pipeline as a batch's threads run it.

use std::sync::atomic::AtomicBool;

use napi::sys;

use crate::js_string::Reply;
use crate::outcome::{Outcome, ReadError, ReadFacts, Text};
use crate::pipeline;
use crate::plan::Caller;
use crate::read::{self, How, Source};

/// Which entries a batch's readers may read before the JS thread needs them.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Ahead {
  /// None: the flags can create, truncate or append, so entries are opened
  /// one by one in list order, as a loop opens them.
  Nothing,
  /// Regular files only, found by a stat before any open: a sync batch that
  /// throws at its first failure must not have opened a FIFO or a device
  /// past it (nor wait for one), which a loop would never have reached.
  RegularFiles,
  /// Every entry: each is read whatever the others give (errors returned in
  /// place, or an async batch).
  Everything,
}

impl Ahead {
  /// From lib/batch.js's number: 0, 1 or 2 as above.
  pub(super) fn from_js(ahead: u32) -> Self {
    match ahead {
      0 => Ahead::Nothing,
      1 => Ahead::RegularFiles,
      _ => Ahead::Everything,
    }
  }
}

/// How a batch reads each of its files.
#[derive(Clone, Copy)]
pub(super) struct Reading {
  /// fs-style numeric open flags.
  flags: i32,
  /// Each file is converted on the thread that read it (`ReadFacts::alone`):
  /// the batch runs on several threads, which fill the cores, or was asked
  /// for one.
  alone: bool,
}

impl Reading {
  /// For a batch on `threads` threads, asked for `concurrency`.
  pub(super) fn new(flags: i32, threads: usize, concurrency: u32) -> Self {
    Reading {
      flags,
      alone: threads > 1 || concurrency <= 1,
    }
  }

  fn facts(self, facts: ReadFacts) -> ReadFacts {
    ReadFacts {
      alone: self.alone || facts.alone,
      ..facts
    }
  }
}

/// The read step of one entry in list order: the file at `path`, on the
/// calling thread alone (the other cores are busy with the other files),
/// stopped between chunks once `cancel` is set; one of kMaxLength bytes or
/// more is not read (`ReadError::TooLarge`).
pub(super) fn read_file<'a>(
  path: &'a [u8],
  reading: Reading,
  how: How<'a>,
) -> impl FnOnce(&mut Vec<u8>) -> Result<ReadFacts, ReadError> + 'a {
  move |buf| {
    read::with_terminated(path, |path| read::read(Source::Path(path, reading.flags), how, buf))
      .map(|f| reading.facts(f))
  }
}

/// What a reader made of an entry.
pub(super) enum Done {
  /// Read (the code units, or the failure code the single read returns).
  Read(Outcome),
  /// Not opened: not a regular file, read ahead of its turn
  /// (`Ahead::RegularFiles`); the JS thread reads it in list order.
  InOrder,
}

/// Reads and decodes the file at `path` off the JS thread: its code units, or
/// the failure code the single read would return (`too_large` for a file of
/// kMaxLength bytes or more). Ahead of the JS thread with
/// `Ahead::RegularFiles`, anything but a regular file is left `InOrder`.
pub(super) fn read_one(path: &[u8], reading: Reading, ahead: Ahead, cancel: &AtomicBool, too_large: i32) -> Done {
  let how = How {
    regular_only: ahead == Ahead::RegularFiles,
    ..How::beside_others(cancel)
  };
  let mut regular = true;
  let read = read_file(path, reading, how);
  let outcome = pipeline::read_to_outcome(
    |buf| {
      let read = read(buf);
      regular = read != Err(ReadError::NotRegular);
      read
    },
    too_large,
  );
  if regular {
    Done::Read(outcome)
  } else {
    Done::InOrder
  }
}

/// Reads and decodes the file at `path` on the JS thread and makes its value
/// at once, from this thread's reused buffers as a single read does: for the
/// entry a sync batch needs next, which then never waits in the ring. Its
/// string is made as the readers' are, so every entry of a batch is alike.
pub(super) fn read_value_now(env: sys::napi_env, path: &[u8], reading: Reading) -> Reply {
  let how = How::beside_others(&read::NEVER_CANCELLED);
  pipeline::read_to_string(env, read_file(path, reading, how), Caller::Batch)
}

/// The JS value of a result (on the JS thread): the string, copied or external
/// by the single read's rules, or the failure code as a number. A small
/// buffer a string was copied out of goes to `spent`, for the readers.
pub(super) fn js_value(env: sys::napi_env, outcome: Outcome, spent: &mut Vec<Text>) -> napi::Result<sys::napi_value> {
  // SAFETY: `env` is the live env of the current call, on its JS thread.
  unsafe { pipeline::outcome_value(env, outcome, Caller::Batch, Some(spent)) }
}
