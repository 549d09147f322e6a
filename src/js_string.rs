//! Step 4 of the pipeline: hand the code units to V8 as a JS string.
//!
//! This is the one place that gives memory to V8. Small strings are copied into
//! the V8 heap (`napi_create_string_latin1/utf16`) and our buffer is dropped here.
//! Larger ones become *external* strings
//! (`node_api_create_external_string_latin1/utf16`): V8 points at our buffer, which
//! is then owned by the string's finalizer and freed by it; `external_memory`
//! tells V8's GC of its bytes. Large text invalid from its start is left to
//! V8's own decoder (`decoded_by_v8`), as fs leaves it.

use std::cell::Cell;
use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use napi::bindgen_prelude::ToNapiValue;
use napi::sys;

use crate::buffers::{self, Reusable};
use crate::external_memory;
use crate::limits::{tuned, ExternalFrom, EXTERNAL_FROM_26, EXTERNAL_FROM_BEFORE_26};
use crate::read::ReadError;
use crate::transcode::Text;
use crate::v8::EXTERNAL_MEMORY_STEP;
use crate::v8::MAX_STRING_LENGTH;

/// The thresholds for this Node (see `limits`): chosen once, by major version.
pub(crate) fn external_from(env: sys::napi_env) -> &'static ExternalFrom {
  static CHOSEN: OnceLock<&'static ExternalFrom> = OnceLock::new();
  CHOSEN.get_or_init(|| match napi::Env::from_raw(env).get_node_version() {
    Ok(version) if version.major >= 26 => &EXTERNAL_FROM_26,
    _ => &EXTERNAL_FROM_BEFORE_26,
  })
}

thread_local! {
  /// What this JS thread's heap holds in small objects outside its young
  /// generation, as its JS layer last told it (`note_heap_bytes`), or `None`
  /// before it was first measured: every string is made on a JS thread, and
  /// each has its own heap (the main thread's, or a Worker's).
  static HEAP_BYTES: Cell<Option<usize>> = const { Cell::new(None) };
  /// The JS layer's function that measures this thread's heap
  /// (`set_heap_meter`), with the env it belongs to.
  static HEAP_METER: Cell<Option<(usize, sys::napi_ref)>> = const { Cell::new(None) };
}

/// Notes that figure for the calling JS thread (lib/heap.js).
pub(crate) fn note_heap_bytes(bytes: usize) {
  HEAP_BYTES.with(|heap| heap.set(Some(bytes)));
}

/// Keeps `meter`, lib/heap.js's function that returns what this thread's heap
/// holds (see `HEAP_BYTES`), to be called when a string first needs it.
pub(crate) fn set_heap_meter(env: sys::napi_env, meter: sys::napi_value) {
  let mut reference = ptr::null_mut();
  // SAFETY: `meter` is a live value of the current call on `env`; the
  // reference keeps it alive for as long as the env (never deleted: one per
  // loaded copy of the JS layer, which lives as long).
  if unsafe { sys::napi_create_reference(env, meter, 1, &mut reference) } == sys::Status::napi_ok {
    HEAP_METER.with(|kept| kept.set(Some((env as usize, reference))));
  }
}

/// What this thread's heap holds: as last noted, or measured now by the JS
/// layer's meter if it never was (0 if that fails: a heap not known to be
/// large).
fn heap_bytes(env: sys::napi_env) -> usize {
  if let Some(bytes) = HEAP_BYTES.with(Cell::get) {
    return bytes;
  }
  let measured = HEAP_METER
    .with(Cell::get)
    .filter(|(meter_env, _)| *meter_env == env as usize)
    .and_then(|(_, meter)| call_meter(env, meter))
    .unwrap_or(0);
  note_heap_bytes(measured);
  measured
}

/// The number the meter returns, or `None` if it threw or returned none.
fn call_meter(env: sys::napi_env, meter: sys::napi_ref) -> Option<usize> {
  let (mut function, mut global, mut result, mut bytes) = (ptr::null_mut(), ptr::null_mut(), ptr::null_mut(), 0f64);
  // SAFETY: `env` is the live env of the current call on this JS thread, which
  // `meter` was made on (checked by the caller); the out-pointers are locals.
  let called = unsafe {
    sys::napi_get_reference_value(env, meter, &mut function) == sys::Status::napi_ok
      && sys::napi_get_global(env, &mut global) == sys::Status::napi_ok
      && sys::napi_call_function(env, global, function, 0, ptr::null(), &mut result) == sys::Status::napi_ok
      && sys::napi_get_value_double(env, result, &mut bytes) == sys::Status::napi_ok
  };
  if !called {
    let mut thrown = ptr::null_mut();
    // SAFETY: as above; clears what the meter may have thrown, so the read goes on.
    unsafe { sys::napi_get_and_clear_last_exception(env, &mut thrown) };
    return None;
  }
  Some(bytes.max(0.0) as usize)
}

/// Whether the process is in the lean memory mode (see `ExternalFrom::lean_units`):
/// one setting for every JS thread, as memory is the process's. Off by
/// default: callers come for speed, and the fast mode's memory is bounded
/// (`external_memory`, `SYNC_FS_RULE_FROM`); the lean mode is theirs to ask for.
static LEAN: AtomicBool = AtomicBool::new(false);

/// Sets the memory mode (lean or not); returns whether it was lean.
pub(crate) fn set_lean(lean: bool) -> bool {
  LEAN.swap(lean, Ordering::Relaxed)
}

fn is_lean() -> bool {
  LEAN.load(Ordering::Relaxed)
}

/// Whether every string is copied (`copy_all_strings`), whatever its size and mode.
static COPY_ALL: AtomicBool = AtomicBool::new(false);

/// From now on no string is external. For runtimes whose Node-API frees an
/// external string's buffer long after the string died: Deno runs finalizers
/// only once the event loop turns, Bun's collector does not count the
/// buffers, and a loop of reads or batches would pile them up.
pub(crate) fn copy_all_strings() {
  COPY_ALL.store(true, Ordering::Relaxed);
}

/// Whether the lean mode copies every string of `bytes` bytes of UTF-8 a sync
/// call makes, whatever they decode to (none has more code units than bytes).
pub(crate) fn lean_copies(env: sys::napi_env, bytes: usize) -> bool {
  is_lean() && bytes < external_from(env).lean_units
}

/// Who makes a string of code units that were converted (not ASCII as read).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Maker {
  /// The sync call that converted them on the JS thread (readFileUtf8,
  /// decodeUtf8): see `from_converted`.
  SyncCall,
  /// The JS-thread end of work done on other threads (async reads,
  /// batches), where making a large string stays O(1) while the heap is small.
  AfterWork,
}

/// A sync call's string of this many bytes or more follows fs's own rule in
/// every mode (`ExternalFrom::lean_units`): two of them start V8's marking,
/// and a loop of such external strings outruns it, while a copy dies in the
/// next scavenge. Half V8's step: derived, not fitted.
pub(crate) const SYNC_FS_RULE_FROM: usize = (EXTERNAL_MEMORY_STEP / 2) as usize;

/// The one copy-or-external decision: whether `bytes` bytes of string data of
/// `unit_bytes`-wide code units that `maker` makes become an external string
/// (never after `copy_all_strings`, nor in a large heap, see
/// `ExternalFrom::heap_below`, nor in a sync batch while V8 collects none, see
/// `external_memory::copies_instead`). In the lean mode a
/// sync call's are external only where fs's would be: the peaks of loops of
/// sync calls are what it is for, while async reads and batches peak lower
/// with external strings than fs's copies do.
fn is_external(env: sys::napi_env, bytes: usize, unit_bytes: usize, maker: Maker) -> bool {
  if COPY_ALL.load(Ordering::Relaxed) {
    return false;
  }
  let from = external_from(env);
  let large = if maker == Maker::SyncCall && (is_lean() || bytes >= SYNC_FS_RULE_FROM) {
    bytes / unit_bytes >= from.lean_units
  } else {
    bytes >= tuned!(from.bytes, "EXTERNAL_FROM.bytes")
  };
  large
    && heap_bytes(env) < tuned!(from.heap_below, "EXTERNAL_FROM.heap_below")
    && !external_memory::copies_instead(env, bytes)
}

/// What a native read returns to JS: the string's code units, or a failure
/// code (see `failure_code`). It is `Send`: async reads make it on a pool thread.
pub enum Outcome {
  /// The finished string's code units.
  Text(Text),
  /// A failure code (below).
  Failure(i32),
}

/// What a synchronous call returns: a JS value it already made on the JS thread
/// (e.g. a string copied straight from a scratch buffer), or an `Outcome`.
pub(crate) enum Reply {
  /// A value already made.
  Made(sys::napi_value),
  /// To be made on return.
  Outcome(Outcome),
}

impl ToNapiValue for Reply {
  unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
    match val {
      Reply::Made(value) => Ok(value),
      // SAFETY: `env` is the live env napi-rs passed to this conversion.
      Reply::Outcome(outcome) => unsafe { to_value(env, outcome) },
    }
  }
}

/// Failure codes, returned to JS instead of a string (lib/errors.js reads them):
/// `errno * 8 + syscall` for an OS error fs cannot answer (a caller's fd that
/// failed after some of its bytes were read, see `read::read_fd_into`), or
/// one of these.
/// fs answers this call itself, with its own result or error (see
/// `ReadError::ForFs` and `ReadError::TooLarge`).
pub(crate) const FS_ANSWERS: i32 = -1;
/// V8 refuses the string (longer than kMaxLength), or the file has kMaxLength
/// bytes or more, which Node's readFileSync refuses (`ReadError::TooLong`:
/// a read of unknown length reached it).
pub(crate) const STRING_TOO_LONG: i32 = -2;
/// An async read stopped because its signal aborted (`ReadError::Cancelled`):
/// JS has already rejected with the AbortError.
pub(crate) const CANCELLED: i32 = -3;
/// A sync read by path found a regular file of kMaxLength bytes or more
/// (`ReadError::TooLarge`), not read: Node's UTF-8 path throws
/// ERR_STRING_TOO_LONG for it after reading it, its Buffer path may refuse it
/// by size, so JS says which.
pub(crate) const TOO_LARGE: i32 = -4;

impl From<ReadError> for Outcome {
  fn from(e: ReadError) -> Self {
    Outcome::Failure(failure_code(e))
  }
}

/// The failure code JS decodes into fs's error (lib/errors.js).
pub(crate) fn failure_code(e: ReadError) -> i32 {
  match e {
    ReadError::Os { errno, syscall } => errno * 8 + syscall as i32,
    ReadError::ForFs | ReadError::TooLarge => FS_ANSWERS,
    ReadError::TooLong => STRING_TOO_LONG,
    ReadError::Cancelled => CANCELLED,
  }
}

/// The JS value of `outcome`: the string, or the failure code as a number.
///
/// # Safety
/// `env` must be the live env of the current call or callback.
pub(crate) unsafe fn to_value(env: sys::napi_env, outcome: Outcome) -> napi::Result<sys::napi_value> {
  // SAFETY: forwarded (this function's contract).
  unsafe { to_value_sparing(env, outcome, None) }
}

/// `to_value`, but a small buffer V8 copied a string out of goes into `spent`
/// (when given) rather than back to this thread's buffers: a batch hands them
/// to the threads that read its next files.
///
/// # Safety
/// `env` must be the live env of the current call or callback.
pub(crate) unsafe fn to_value_sparing(
  env: sys::napi_env,
  outcome: Outcome,
  spent: Option<&mut Vec<Text>>,
) -> napi::Result<sys::napi_value> {
  let code = match outcome {
    Outcome::Failure(code) => code,
    Outcome::Text(text) => match create_string(env, text, spent, Some(Maker::AfterWork), || ()) {
      Some(value) => return Ok(value),
      None => STRING_TOO_LONG,
    },
  };
  // SAFETY: `env` is live (this function's contract).
  unsafe { i32::to_napi_value(env, code) }
}

/// Creates the JS string, copied (after `before_copy`) unless `maker` is
/// given and `is_external` says so; `None` if V8 refused it (too long).
/// Every buffer is either dropped before returning or owned by a registered
/// finalizer.
fn create_string(
  env: sys::napi_env,
  text: Text,
  spent: Option<&mut Vec<Text>>,
  maker: Option<Maker>,
  before_copy: impl FnOnce(),
) -> Option<sys::napi_value> {
  if text.char_count() > MAX_STRING_LENGTH {
    return None; // `text` dropped here: nothing leaks.
  }
  match text {
    Text::Latin1(data) => create(env, data, spent, maker, before_copy),
    Text::Utf16(data) => create(env, data, spent, maker, before_copy),
  }
}

/// Copies a small string into V8's heap, then gives the buffer back to the pool
/// for the next conversion (or to `spent`, see `to_value_sparing`); hands a
/// large one to V8 as an external string.
fn create<T: CodeUnit>(
  env: sys::napi_env,
  data: Vec<T>,
  spent: Option<&mut Vec<Text>>,
  maker: Option<Maker>,
  before_copy: impl FnOnce(),
) -> Option<sys::napi_value> {
  let unit_bytes = std::mem::size_of::<T>();
  if maker.is_some_and(|maker| is_external(env, data.len() * unit_bytes, unit_bytes, maker)) {
    return external(env, data);
  }
  before_copy();
  let value = copy(env, &data);
  match spent {
    Some(spent) if buffers::is_kept_locally(&data) => spent.push(T::text(data)),
    _ => buffers::give(data),
  }
  value
}

/// The string of the code units `maker` converted (see `Maker`); `replaced`:
/// the text had invalid sequences, replaced. In the lean mode a sync call
/// copies such text whatever its size, as fs's is (V8's decoder makes it);
/// otherwise it is made as valid text is, external when large: a copy of a
/// large string lands on fresh pages of V8's large-object space each time,
/// where our buffer comes back warm from the pool. `read`: the buffer the
/// text was read into, if the caller is done with it: freed before a copy if
/// huge (`SYNC_FS_RULE_FROM`), or in the lean mode if large
/// (`ExternalFrom::read_freed_from`).
pub(crate) fn from_converted(
  env: sys::napi_env,
  text: Text,
  replaced: bool,
  maker: Maker,
  read: Option<&mut Vec<u8>>,
) -> Reply {
  let lean = maker == Maker::SyncCall && is_lean();
  let maker = (!(lean && replaced)).then_some(maker);
  // Called only before a copy: converted text, read buffer and V8's copy at
  // once would peak far above fs's Buffer and string.
  let free_read = || {
    if let Some(read) = read.filter(|read| {
      read.len() >= SYNC_FS_RULE_FROM
        || lean && read.len() >= tuned!(external_from(env).read_freed_from, "EXTERNAL_FROM.read_freed_from")
    }) {
      drop(std::mem::take(read));
    }
  };
  made(create_string(env, text, None, maker, free_read))
}

/// The string of ASCII bytes just read into `buf`: a large one takes the
/// buffer itself as an external string's data (`buf` is left empty), a small
/// one is copied into V8's heap and `buf` stays the caller's to reuse.
pub(crate) fn from_read_ascii(env: sys::napi_env, buf: &mut Vec<u8>) -> Reply {
  if buf.len() <= MAX_STRING_LENGTH && is_external(env, buf.len(), 1, Maker::SyncCall) {
    return made(external(env, std::mem::take(buf)));
  }
  made(copy(env, buf.as_slice()))
}

/// The string of ASCII bytes the caller keeps (decodeUtf8's input): copied
/// into V8's heap, or into a buffer of ours that becomes an external string.
pub(crate) fn from_callers_ascii(env: sys::napi_env, data: &[u8]) -> Reply {
  if data.len() <= MAX_STRING_LENGTH && is_external(env, data.len(), 1, Maker::SyncCall) {
    let mut own = buffers::take(data.len());
    own.extend_from_slice(data);
    return made(external(env, own));
  }
  made(copy(env, data))
}

/// The string V8's own UTF-8 decoder makes of `bytes`, which stay the caller's:
/// it replaces invalid sequences as fs does, being the decoder fs hands them to.
pub(crate) fn decoded_by_v8(env: sys::napi_env, bytes: &[u8]) -> Reply {
  let mut result = ptr::null_mut();
  // SAFETY: `bytes` is valid for `bytes.len()` bytes for the duration of the
  // call, which copies them.
  let status = unsafe { sys::napi_create_string_utf8(env, bytes.as_ptr().cast(), bytes.len() as isize, &mut result) };
  made((status == sys::Status::napi_ok).then_some(result))
}

/// A value made, or `STRING_TOO_LONG` if V8 refused it.
fn made(value: Option<sys::napi_value>) -> Reply {
  match value {
    Some(value) => Reply::Made(value),
    None => Reply::Outcome(Outcome::Failure(STRING_TOO_LONG)),
  }
}

/// A string copied from `data`, which stays the caller's.
fn copy<T: CodeUnit>(env: sys::napi_env, data: &[T]) -> Option<sys::napi_value> {
  let mut result = ptr::null_mut();
  // SAFETY: `data` is valid for `data.len()` units for the duration of the call,
  // which copies them; the constructor matches T.
  let status = unsafe { T::CREATE_COPY(env, data.as_ptr(), data.len() as isize, &mut result) };
  (status == sys::Status::napi_ok).then_some(result)
}

/// The signature shared by `napi_create_string_latin1` and `_utf16`.
type CreateCopy<T> = unsafe fn(sys::napi_env, *const T, isize, *mut sys::napi_value) -> sys::napi_status;

/// The signature shared by `node_api_create_external_string_latin1` and `_utf16`.
type CreateExternal<T> = unsafe fn(
  sys::napi_env,
  *const T,
  isize,
  sys::node_api_basic_finalize,
  *mut c_void,
  *mut sys::napi_value,
  *mut bool,
) -> sys::napi_status;

/// The code-unit types a string can be made of, with their Node-API constructors.
trait CodeUnit: Reusable {
  const CREATE_COPY: CreateCopy<Self>;
  const CREATE_EXTERNAL: CreateExternal<Self>;
  fn text(units: Vec<Self>) -> Text;
}
impl CodeUnit for u8 {
  fn text(units: Vec<u8>) -> Text {
    Text::Latin1(units)
  }
  const CREATE_COPY: CreateCopy<u8> = |env, data, len, result| {
    // SAFETY: forwarded as is; `copy` upholds the contract (see there).
    unsafe { sys::napi_create_string_latin1(env, data.cast(), len, result) }
  };
  const CREATE_EXTERNAL: CreateExternal<u8> = |env, data, len, finalize, hint, result, copied| {
    // SAFETY: forwarded as is; `external` upholds the contract (see there).
    unsafe { sys::node_api_create_external_string_latin1(env, data.cast(), len, finalize, hint, result, copied) }
  };
}
impl CodeUnit for u16 {
  fn text(units: Vec<u16>) -> Text {
    Text::Utf16(units)
  }
  const CREATE_COPY: CreateCopy<u16> = |env, data, len, result| {
    // SAFETY: forwarded as is; `copy` upholds the contract (see there).
    unsafe { sys::napi_create_string_utf16(env, data, len, result) }
  };
  const CREATE_EXTERNAL: CreateExternal<u16> = |env, data, len, finalize, hint, result, copied| {
    // SAFETY: forwarded as is; `external` upholds the contract (see there).
    unsafe { sys::node_api_create_external_string_utf16(env, data, len, finalize, hint, result, copied) }
  };
}

/// A buffer handed to V8 as an external string's data, owned by its finalizer.
struct Owner<T> {
  units: Vec<T>,
  /// Where its bytes were reported to V8 (see `external_memory::add`).
  window: u64,
}

/// Hands `data` to V8 as an external string. The `Vec` is boxed in an `Owner`
/// whose pointer is the finalize hint: from a successful call on, only
/// `finalize::<T>` may free it; if the call fails, V8 never saw it and we free
/// it here.
fn external<T: CodeUnit>(env: sys::napi_env, data: Vec<T>) -> Option<sys::napi_value> {
  buffers::release_unused(&data);
  let len = data.len();
  let bytes = external_bytes(&data);
  // Account before creating: if V8 ever ran the finalizer synchronously (copied),
  // its −bytes would otherwise come before our +bytes.
  let window = external_memory::add(env, bytes);
  let owner: *mut Owner<T> = Box::into_raw(Box::new(Owner { units: data, window }));
  // SAFETY: `owner` came from Box::into_raw just above and has not been freed.
  let units = unsafe { (*owner).units.as_ptr() };
  let mut result = ptr::null_mut();
  let mut copied = false;
  // SAFETY: `units` points at `len` immutable code units owned by `*owner`, which
  // stays alive until `finalize::<T>` frees it; the constructor matches T.
  let status = unsafe {
    T::CREATE_EXTERNAL(
      env,
      units,
      len as isize,
      Some(finalize::<T>),
      owner.cast(),
      &mut result,
      &mut copied,
    )
  };
  if status == sys::Status::napi_ok {
    return Some(result);
  }
  // V8 refused (e.g. longer than kMaxLength) and did not call the finalizer.
  external_memory::subtract(env, bytes, window);
  // SAFETY: the failed call did not take ownership, so `owner` is still ours alone.
  buffers::give(unsafe { Box::from_raw(owner) }.units);
  None
}

/// What V8 is told an external string holds: its code units, as it counts a
/// string of its own. The buffer's spare room (sized for one unit per input
/// byte) is mostly never written, and counting it would start full GCs several
/// times as often for text of few units per byte (CJK) as fs's strings do.
fn external_bytes<T>(data: &[T]) -> i64 {
  std::mem::size_of_val(data) as i64
}

/// Runs when V8 collects the string, or at env teardown with a null env. Node 26
/// runs it on V8's GC threads as well as the JS thread: it does nothing that
/// needs the JS thread (the buffer, always large, goes to the shared pool).
unsafe extern "C" fn finalize<T: CodeUnit>(env: sys::node_api_basic_env, _data: *mut c_void, hint: *mut c_void) {
  // SAFETY: `hint` is the pointer `external::<T>` got from Box::into_raw; V8 calls
  // this finalizer exactly once, so the box is freed exactly once.
  let owner = unsafe { Box::from_raw(hint.cast::<Owner<T>>()) };
  // A null env means the environment is being torn down: just free the buffer.
  if !env.is_null() {
    external_memory::subtract(env.cast(), external_bytes(&owner.units), owner.window);
    buffers::give(owner.units);
  }
}
