//! The last step: JS strings, made as `plan` said. The one place that hands
//! memory to V8: code units are copied into V8's heap
//! (`napi_create_string_latin1/utf16`), or become an external string's data
//! (`node_api_create_external_string_latin1/utf16`), whose finalizer then owns
//! the buffer; or V8's own decoder makes the string from the bytes
//! (`napi_create_string_utf8`). Nothing here decides which.

use std::ffi::c_void;
use std::ptr;

use napi::bindgen_prelude::ToNapiValue;
use napi::sys;

use crate::buffers::{self, Reusable};
use crate::external_memory;
use crate::limits::facts::MAX_STRING_LENGTH;
use crate::outcome::{Text, STRING_TOO_LONG};

/// What a synchronous call returns: a JS value it already made on the JS
/// thread, or a failure code (see `outcome`).
pub(crate) enum Reply {
  /// A value already made.
  Made(sys::napi_value),
  /// A failure code, made a number on return.
  Failure(i32),
}

impl Reply {
  /// A value made, or `STRING_TOO_LONG` if V8 refused it.
  pub(crate) fn made(value: Option<sys::napi_value>) -> Reply {
    match value {
      Some(value) => Reply::Made(value),
      None => Reply::Failure(STRING_TOO_LONG),
    }
  }

  /// Whether this is a string (not a failure code).
  pub(crate) fn is_string(&self) -> bool {
    !matches!(self, Reply::Failure(_))
  }
}

impl ToNapiValue for Reply {
  unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> napi::Result<sys::napi_value> {
    match val {
      Reply::Made(value) => Ok(value),
      // SAFETY: `env` is the live env napi-rs passed to this conversion.
      Reply::Failure(code) => unsafe { i32::to_napi_value(env, code) },
    }
  }
}

/// The string V8's own UTF-8 decoder makes of `bytes`, which stay the caller's:
/// it replaces invalid sequences as fs does, being the decoder fs hands them to.
pub(crate) fn decoded_by_v8(env: sys::napi_env, bytes: &[u8]) -> Option<sys::napi_value> {
  let mut result = ptr::null_mut();
  // SAFETY: `bytes` is valid for `bytes.len()` bytes for the duration of the
  // call, which copies them.
  let status = unsafe { sys::napi_create_string_utf8(env, bytes.as_ptr().cast(), bytes.len() as isize, &mut result) };
  (status == sys::Status::napi_ok).then_some(result)
}

/// A string copied from `text`, whose buffer then goes back to `buffers` (or
/// into `spent` if given and small: a batch hands those to its readers).
pub(crate) fn copied(env: sys::napi_env, text: Text, spent: Option<&mut Vec<Text>>) -> Option<sys::napi_value> {
  let value = match &text {
    Text::Latin1(units) => copy(env, units),
    Text::Utf16(units) => copy(env, units),
  };
  match spent {
    Some(spent) if text.is_kept_locally() => spent.push(text),
    _ => text.give_back(),
  }
  value
}

/// An external string over `text`'s buffer, which its finalizer then owns.
pub(crate) fn external_text(env: sys::napi_env, text: Text) -> Option<sys::napi_value> {
  match text {
    Text::Latin1(units) => external(env, units),
    Text::Utf16(units) => external(env, units),
  }
}

/// A string copied from `data`, which stays the caller's; `None` if V8
/// refused it (longer than kMaxLength).
pub(crate) fn copy<T: CodeUnit>(env: sys::napi_env, data: &[T]) -> Option<sys::napi_value> {
  if data.len() > MAX_STRING_LENGTH {
    return None;
  }
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
pub(crate) trait CodeUnit: Reusable {
  const CREATE_COPY: CreateCopy<Self>;
  const CREATE_EXTERNAL: CreateExternal<Self>;
}
impl CodeUnit for u8 {
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
  /// Where its bytes were counted (see `external_memory::add`).
  tally: external_memory::Tally,
}

/// Hands `data` to V8 as an external string. The `Vec` is boxed in an `Owner`
/// whose pointer is the finalize hint: from a successful call on, only
/// `finalize::<T>` may free it; if the call fails (longer than kMaxLength),
/// V8 never saw it and we free it here.
pub(crate) fn external<T: CodeUnit>(env: sys::napi_env, data: Vec<T>) -> Option<sys::napi_value> {
  if data.len() > MAX_STRING_LENGTH {
    buffers::give(data);
    return None;
  }
  buffers::release_unused(&data);
  let len = data.len();
  let bytes = external_bytes(&data);
  // Counted before creating: if V8 ever ran the finalizer synchronously, its
  // −bytes would otherwise come before our +bytes.
  let tally = external_memory::add(env, bytes);
  let owner: *mut Owner<T> = Box::into_raw(Box::new(Owner { units: data, tally }));
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
  external_memory::subtract(env, bytes, tally);
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
/// needs the JS thread (a large buffer goes to the shared pool, a small one
/// to the finalizing thread's few).
unsafe extern "C" fn finalize<T: CodeUnit>(env: sys::node_api_basic_env, _data: *mut c_void, hint: *mut c_void) {
  // SAFETY: `hint` is the pointer `external::<T>` got from Box::into_raw; V8 calls
  // this finalizer exactly once, so the box is freed exactly once.
  let owner = unsafe { Box::from_raw(hint.cast::<Owner<T>>()) };
  // A null env means the environment is being torn down: just free the buffer.
  if !env.is_null() {
    external_memory::subtract(env.cast(), external_bytes(&owner.units), owner.tally);
    buffers::give(owner.units);
  }
}
