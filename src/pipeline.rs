//! The pipeline end to end, once per kind of call: read → classify/transcode
//! (`transcode::decode`) → the plan for the string (`plan`, carried out here)
//! → JS string (`js_string`). The exports only take their arguments and call
//! one of these.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use napi::bindgen_prelude::ToNapiValue;
use napi::sys;

use crate::js_string::{self, Reply};
use crate::outcome::{failure_code, Decoded, Outcome, ReadError, ReadFacts, Text, STRING_TOO_LONG, TOO_LARGE};
use crate::plan::{self, Ask, Caller, Limits, Look, Plan, Runtime, Units};
use crate::{buffers, classify, external_memory, heap, limits, transcode};

/// The lean memory mode, for the whole process (memory is the process's):
/// off by default, since callers come for speed and the fast mode's memory
/// is bounded; theirs to ask for (`setMemoryMode('lean')`).
static LEAN: AtomicBool = AtomicBool::new(false);
/// The runtime is not Node (Bun, Deno): see `plan`.
static OTHER_RUNTIME: AtomicBool = AtomicBool::new(false);

/// Sets the memory mode (lean or not); returns whether it was lean.
pub(crate) fn set_lean(lean: bool) -> bool {
  LEAN.swap(lean, Ordering::Relaxed)
}

/// Says that the runtime is Bun or Deno, not Node (lib/native.js, at load).
pub(crate) fn set_other_runtime() {
  OTHER_RUNTIME.store(true, Ordering::Relaxed);
}

/// The plan's limits for the running Node, looked up once.
fn limits_here() -> &'static Limits {
  static HERE: OnceLock<Limits> = OnceLock::new();
  HERE.get_or_init(Limits::here)
}

/// What the plan knows of a string before it looks anything up.
fn ask(caller: Caller, bytes: usize) -> Ask {
  Ask {
    runtime: if OTHER_RUNTIME.load(Ordering::Relaxed) {
      Runtime::Other
    } else {
      Runtime::Node(limits::node_line())
    },
    lean: LEAN.load(Ordering::Relaxed),
    caller,
    bytes,
    read_buffer: None,
  }
}

/// The facts the plan may look up (`plan::Look`), for one string.
struct Facts<'a> {
  env: sys::napi_env,
  /// The bytes the string is made of, if the caller still has them.
  bytes: &'a [u8],
  read: ReadFacts,
  /// The string's bytes of data, which a stalled batch copies instead.
  data_bytes: usize,
}

impl Look for Facts<'_> {
  fn starts_invalid(&mut self) -> bool {
    transcode::starts_invalid(self.bytes)
  }
  fn ascii(&mut self) -> bool {
    classify::is_ascii_after(self.bytes, self.read.ascii_prefix)
  }
  fn heap_bytes(&mut self) -> usize {
    heap::bytes(self.env)
  }
  fn stalled(&mut self) -> bool {
    external_memory::copies_instead(self.env, self.data_bytes)
  }
}

fn units_of(text: &Text, replaced: bool) -> Units {
  Units {
    count: text.char_count(),
    data_bytes: text.data_bytes(),
    replaced,
  }
}

/// A read on the JS thread (a sync call, or a batch's entry the JS thread
/// reads in list order) into a reused buffer, made into a string by the plan,
/// or a failure code. A file of kMaxLength bytes or more, found by its size
/// (`ReadError::TooLarge`, which JS then judges) or by the reader as it reads
/// (`ReadError::TooLong`, stopped at `read::max_bytes`), is readFileSync's
/// ERR_STRING_TOO_LONG.
pub(crate) fn read_to_string(
  env: sys::napi_env,
  read: impl FnOnce(&mut Vec<u8>) -> Result<ReadFacts, ReadError>,
  caller: Caller,
) -> Reply {
  let mut buf = Vec::new();
  let reply = match read(&mut buf) {
    Err(e) => Reply::Failure(failure_code(e, TOO_LARGE)),
    Ok(facts) => Reply::made(string_of_read(env, &mut buf, facts, caller)),
  };
  buffers::give(buf);
  reply
}

/// The string of the bytes just read into `buf`. ASCII taken as external
/// data takes `buf` itself (left empty); a copy leaves it the caller's to
/// reuse, unless the plan frees it first.
fn string_of_read(env: sys::napi_env, buf: &mut Vec<u8>, facts: ReadFacts, caller: Caller) -> Option<sys::napi_value> {
  heap::count_string();
  let limits = limits_here();
  let ask = ask(caller, buf.len());
  let mut look = Facts {
    env,
    bytes: buf,
    read: facts,
    data_bytes: buf.len(),
  };
  if plan::before_transcoding(&ask, limits, &mut look) == Some(Plan::V8Decodes) {
    return js_string::decoded_by_v8(env, buf);
  }
  let (text, replaced) = match transcode::decode(buf, facts) {
    Decoded::Ascii => {
      let units = Units {
        count: buf.len(),
        data_bytes: buf.len(),
        replaced: false,
      };
      return match plan::after_transcoding(&ask, units, limits, &mut look) {
        Plan::External => js_string::external(env, std::mem::take(buf)),
        _ => js_string::copy(env, buf.as_slice()),
      };
    }
    Decoded::Text(text) => (text, false),
    Decoded::Replaced(units) => (Text::Utf16(units), true),
  };
  let ask = Ask {
    read_buffer: Some(buf.len()),
    ..ask
  };
  look.data_bytes = text.data_bytes();
  let plan = plan::after_transcoding(&ask, units_of(&text, replaced), limits, &mut look);
  if plan == Plan::FreeReadThenCopy {
    drop(std::mem::take(buf));
  }
  made(env, text, plan, None)
}

/// `text` made as `plan` says (a copy's small buffer into `spent`, if given).
fn made(env: sys::napi_env, text: Text, plan: Plan, spent: Option<&mut Vec<Text>>) -> Option<sys::napi_value> {
  match plan {
    Plan::External => js_string::external_text(env, text),
    _ => js_string::copied(env, text, spent),
  }
}

/// A read off the JS thread (a pool's or a batch's thread): everything but
/// making the string, which the JS thread does from the returned code units
/// (`outcome_value`). `too_large` is the failure for a file of kMaxLength
/// bytes or more found by its size (`ReadError::TooLarge`); one found by
/// reading it is `ReadError::TooLong`, which the reader stops at.
pub(crate) fn read_to_outcome(
  read: impl FnOnce(&mut Vec<u8>) -> Result<ReadFacts, ReadError>,
  too_large: i32,
) -> Outcome {
  let mut buf = Vec::new();
  match read(&mut buf) {
    Err(e) => {
      buffers::give(buf);
      Outcome::Failure(failure_code(e, too_large))
    }
    Ok(facts) => {
      let decoded = transcode::decode(&buf, facts);
      let replaced = matches!(decoded, Decoded::Replaced(_));
      Outcome::Text {
        text: decoded.owning(buf),
        replaced,
      }
    }
  }
}

/// The JS value of a read made off the JS thread (on the JS thread): its
/// string, made by the plan for `caller`, or its failure code as a number. A
/// small buffer a string was copied out of goes into `spent` when given (a
/// batch hands those to its readers).
///
/// # Safety
/// `env` must be the live env of the current call or callback.
pub(crate) unsafe fn outcome_value(
  env: sys::napi_env,
  outcome: Outcome,
  caller: Caller,
  spent: Option<&mut Vec<Text>>,
) -> napi::Result<sys::napi_value> {
  let code = match outcome {
    Outcome::Failure(code) => code,
    Outcome::Text { text, replaced } => {
      heap::count_string();
      let mut look = Facts {
        env,
        bytes: &[],
        read: ReadFacts::default(),
        data_bytes: text.data_bytes(),
      };
      let plan = plan::after_transcoding(
        &ask(caller, text.data_bytes()),
        units_of(&text, replaced),
        limits_here(),
        &mut look,
      );
      match made(env, text, plan, spent) {
        Some(value) => return Ok(value),
        None => STRING_TOO_LONG,
      }
    }
  };
  // SAFETY: `env` is live (this function's contract).
  unsafe { i32::to_napi_value(env, code) }
}

/// `decodeUtf8`: the string for `input[start..end]`, `===` to
/// `buffer.toString('utf8', start, end)`. The JS layer has clamped
/// `0 <= start <= end <= input.len()`; we clamp again so that no input can
/// index out of bounds. The input stays the caller's: copied ASCII goes from
/// it straight into V8's copy constructor, external ASCII into a buffer of ours.
pub(crate) fn decode_to_string(env: sys::napi_env, input: &[u8], start: i64, end: i64) -> Reply {
  let end = (end.max(0) as usize).min(input.len());
  let start = (start.max(0) as usize).min(end);
  let bytes = &input[start..end];
  heap::count_string();
  let limits = limits_here();
  let ask = ask(Caller::Sync, bytes.len());
  let mut look = Facts {
    env,
    bytes,
    read: ReadFacts::default(),
    data_bytes: bytes.len(),
  };
  if plan::before_transcoding(&ask, limits, &mut look) == Some(Plan::V8Decodes) {
    return Reply::made(js_string::decoded_by_v8(env, bytes));
  }
  let (text, replaced) = match transcode::decode(bytes, ReadFacts::default()) {
    Decoded::Ascii => {
      let units = Units {
        count: bytes.len(),
        data_bytes: bytes.len(),
        replaced: false,
      };
      return Reply::made(match plan::after_transcoding(&ask, units, limits, &mut look) {
        Plan::External => {
          let mut own = buffers::take(bytes.len());
          own.extend_from_slice(bytes);
          js_string::external(env, own)
        }
        _ => js_string::copy(env, bytes),
      });
    }
    Decoded::Text(text) => (text, false),
    Decoded::Replaced(units) => (Text::Utf16(units), true),
  };
  look.data_bytes = text.data_bytes();
  let plan = plan::after_transcoding(&ask, units_of(&text, replaced), limits, &mut look);
  Reply::made(made(env, text, plan, None))
}

/// The read step alone (same syscalls and buffers, no string made): the byte
/// count, or the failure code. For the benchmark's floor suite only.
#[cfg(feature = "bench")]
pub(crate) fn read_only(read: impl FnOnce(&mut Vec<u8>) -> Result<ReadFacts, ReadError>) -> Result<usize, i32> {
  let mut buf = Vec::new();
  let result = read(&mut buf)
    .map(|_| buf.len())
    .map_err(|e| failure_code(e, TOO_LARGE));
  buffers::give(buf);
  result
}
