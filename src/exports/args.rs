//! The arguments the entry points take from JS: a path string as its UTF-8
//! bytes, a Uint8Array's bytes, and a batch's list of paths. lib/ passes only
//! well-formed arguments; anything else is refused here without a crash.

use std::ffi::c_char;
use std::mem::MaybeUninit;
use std::ptr;

use napi::bindgen_prelude::Array;
use napi::{sys, JsValue};

use crate::limits::facts::PATH_MAX_BYTES;

/// Room for a path on the stack: paths of `PATH_MAX_BYTES` or more cannot be
/// opened, and longer strings go to the heap.
pub(crate) type PathRoom = [MaybeUninit<u8>; PATH_MAX_BYTES];

/// Stack room for `string_utf8`.
pub(crate) fn path_room() -> PathRoom {
  [MaybeUninit::uninit(); PATH_MAX_BYTES]
}

/// The UTF-8 bytes of JS string `value` and the NUL after them, written by
/// Node straight into `stack` if they fit, else into `heap`; `None` if
/// `value` is not a string. The one way a JS path becomes bytes: a `CStr` as
/// it is (the hot call), or bytes for `read::with_terminated` later.
pub(crate) fn string_utf8<'a>(
  env: sys::napi_env,
  value: sys::napi_value,
  stack: &'a mut PathRoom,
  heap: &'a mut Vec<u8>,
) -> Option<&'a [u8]> {
  let mut len = 0;
  // SAFETY: `stack` is writable for its length; Node writes at most len - 1
  // bytes and a NUL.
  let status =
    unsafe { sys::napi_get_value_string_utf8(env, value, stack.as_mut_ptr().cast::<c_char>(), stack.len(), &mut len) };
  if status != sys::Status::napi_ok {
    return None;
  }
  // Node stops before a character that does not fit (up to 4 bytes) and before
  // the NUL, so a string with room to spare was written whole.
  if len + 4 < stack.len() {
    // SAFETY: Node initialised the first `len` bytes and the NUL after them.
    return Some(unsafe { std::slice::from_raw_parts(stack.as_ptr().cast::<u8>(), len + 1) });
  }
  // It may have been cut short: ask for the full length, then copy it whole.
  // SAFETY: a null buffer asks only for the length.
  unsafe { sys::napi_get_value_string_utf8(env, value, ptr::null_mut(), 0, &mut len) };
  heap.resize(len + 1, 0);
  // SAFETY: `heap` is writable for len + 1 bytes.
  unsafe { sys::napi_get_value_string_utf8(env, value, heap.as_mut_ptr().cast::<c_char>(), heap.len(), &mut len) };
  Some(&heap[..=len])
}

/// `value` as an int32 if it is a number, else `None`. The type is asked
/// first: Deno's `napi_get_value_int32` gives 0 for a string, which would make
/// a path read fd 0 (stdin).
pub(crate) fn int32_number(env: sys::napi_env, value: sys::napi_value) -> Option<i32> {
  let mut kind = sys::ValueType::napi_undefined;
  // SAFETY: `value` is a live value of the current call; the out-pointer is a local.
  if unsafe { sys::napi_typeof(env, value, &mut kind) } != sys::Status::napi_ok || kind != sys::ValueType::napi_number {
    return None;
  }
  let mut number = 0;
  // SAFETY: as above; `value` is a number.
  (unsafe { sys::napi_get_value_int32(env, value, &mut number) } == sys::Status::napi_ok).then_some(number)
}

/// The bytes of `value` if it is a Uint8Array (a Buffer is one), else `None`.
///
/// # Safety
/// `value` must be a live value of the current synchronous call, and the slice
/// must not be used after it returns: only then does the value keep the memory
/// alive and unmoved.
pub(crate) unsafe fn uint8_array_bytes<'a>(env: sys::napi_env, value: sys::napi_value) -> Option<&'a [u8]> {
  let mut kind = sys::TypedarrayType::int8_array;
  let mut length = 0;
  let mut data = ptr::null_mut();
  // SAFETY: `value` is live (this function's contract); the out-pointers are locals.
  let status = unsafe {
    sys::napi_get_typedarray_info(
      env,
      value,
      &mut kind,
      &mut length,
      &mut data,
      ptr::null_mut(),
      ptr::null_mut(),
    )
  };
  if status != sys::Status::napi_ok || kind != sys::TypedarrayType::uint8_array {
    return None;
  }
  if length == 0 || data.is_null() {
    return Some(&[]);
  }
  // SAFETY: Node gives the view's first byte and its length; the memory stays
  // alive and unmoved while the caller uses it (this function's contract).
  Some(unsafe { std::slice::from_raw_parts(data.cast::<u8>(), length) })
}

/// The paths of a batch: the bytes of each, or none where JS reads that entry
/// itself (fds and the argument forms only fs should answer).
pub(crate) struct Paths {
  bytes: Vec<u8>,
  /// `(start, end)` in `bytes`; `NOT_NATIVE` as start for an entry JS reads.
  spans: Vec<(usize, usize)>,
}

const NOT_NATIVE: usize = usize::MAX;

impl Paths {
  /// No paths yet.
  pub(crate) fn new() -> Self {
    Paths {
      bytes: Vec::new(),
      spans: Vec::new(),
    }
  }

  /// Adds a path's bytes, or an entry JS reads itself (`None`).
  pub(crate) fn push(&mut self, path: Option<&[u8]>) {
    match path {
      Some(path) => {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(path);
        self.spans.push((start, self.bytes.len()));
      }
      None => self.spans.push((NOT_NATIVE, 0)),
    }
  }

  /// Entry `index`'s path, or `None` for an entry JS reads.
  pub(crate) fn get(&self, index: usize) -> Option<&[u8]> {
    let (start, end) = self.spans[index];
    (start != NOT_NATIVE).then(|| &self.bytes[start..end])
  }

  pub(crate) fn len(&self) -> usize {
    self.spans.len()
  }
}

/// The paths of JS array `list`: each a string (its UTF-8 bytes), a
/// Uint8Array (its bytes), or anything else (an entry JS reads).
pub(crate) fn collect_paths(env: sys::napi_env, list: &Array) -> napi::Result<Paths> {
  let mut paths = Paths::new();
  let (mut stack, mut heap) = (path_room(), Vec::new());
  for i in 0..list.len() {
    let mut value = ptr::null_mut();
    // SAFETY: `env` is this call's env and `list` one of its live arguments.
    napi::check_status!(unsafe { sys::napi_get_element(env, list.raw(), i, &mut value) })?;
    if let Some(terminated) = string_utf8(env, value, &mut stack, &mut heap) {
      paths.push(Some(&terminated[..terminated.len() - 1]));
    } else {
      // SAFETY: `value` is a live value of this call (the list holds it), and
      // the bytes are copied before it returns.
      paths.push(unsafe { uint8_array_bytes(env, value) });
    }
  }
  Ok(paths)
}
