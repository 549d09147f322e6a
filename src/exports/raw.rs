//! `readPath(path: string, flags: number): string | number`, the hot call, and
//! `decodeUtf8(bytes, start?, end?)`, as plain Node-API callbacks. With the
//! `bench` feature also `readPathLength(path, flags): number`, the read step
//! alone, which the benchmark's floor suite times.
//!
//! A `#[napi]` function pays per call for napi-rs's generic machinery: a
//! borrow scope opened and closed around the call, and the path argument
//! measured (one pass over the string), allocated and copied into a `String`.
//! Here the path is written straight into a stack buffer (a heap one only for
//! a path that does not fit): for small files that fixed cost is a visible
//! part of the call.

use std::ffi::{c_char, CStr};
use std::ptr;

use napi::bindgen_prelude::{Object, ToNapiValue};
use napi::{sys, Env, JsValue};

use super::args;
use crate::js_string::Reply;
use crate::outcome::FS_ANSWERS;
use crate::pipeline;
use crate::plan::Caller;
use crate::read::{self, How, Source};

/// Reads the file at `path` opened with numeric fs `flags`: the string, or a
/// failure code (see `js_string::Outcome`). Throws a TypeError on bad arguments
/// (index.js never passes any).
unsafe extern "C" fn read_path(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
  with_path_and_flags(env, info, c"readPath", |path, flags| {
    let reply = match path {
      Some(path) => pipeline::read_to_string(
        env,
        |buf| read::read(Source::Path(path, flags), How::SYNC, buf),
        Caller::Sync,
      ),
      None => Reply::Failure(FS_ANSWERS), // a NUL inside: fs's to reject
    };
    // SAFETY: `env` is this call's env.
    unsafe { Reply::to_napi_value(env, reply) }
  })
}

/// `readPathLength(path, flags)`: the read step of `readPath` alone (same
/// syscalls, same buffers, no string made), returning the byte count; a failed
/// read throws an Error carrying the failure code. Only in the bench build.
#[cfg(feature = "bench")]
unsafe extern "C" fn read_path_length(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
  with_path_and_flags(env, info, c"readPathLength", |path, flags| {
    let path = path.ok_or_else(|| napi::Error::from_reason(format!("read failed (code {FS_ANSWERS})")))?;
    let length = pipeline::read_only(|buf| read::read(Source::Path(path, flags), How::SYNC, buf))
      .map_err(|code| napi::Error::from_reason(format!("read failed (code {code})")))?;
    let mut value = ptr::null_mut();
    // SAFETY: `env` is this call's env; `value` receives the new number.
    let status = unsafe { sys::napi_create_double(env, length as f64, &mut value) };
    napi::check_status!(status).map(|()| value)
  })
}

/// `decodeUtf8(bytes: Uint8Array, start?: number, end?: number)`: see
/// `pipeline::decode_to_string`. Called for inputs of every size, so its fixed cost
/// (which the 64 B to 16 KiB decodes feel) is kept to one `napi_get_cb_info`,
/// one `napi_get_typedarray_info` and, for a sub-range, two integer reads.
/// lib/decode.js passes a Uint8Array and clamped integer offsets, or none
/// for the whole array; anything else throws a TypeError.
unsafe extern "C" fn decode_utf8(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
  let Some((argc, argv)) = arguments::<3>(env, info).filter(|&(argc, _)| argc >= 1) else {
    return throw_type_error(env, c"decodeUtf8", "bytes, start?, end?", "a Uint8Array expected");
  };
  // SAFETY: argv[0] is a live value of this call, and `bytes` is used only
  // within it.
  let Some(bytes) = (unsafe { args::uint8_array_bytes(env, argv[0]) }) else {
    return throw_type_error(env, c"decodeUtf8", "bytes, start?, end?", "a Uint8Array expected");
  };
  let (mut start, mut end) = (0i64, bytes.len() as i64);
  if argc >= 3 {
    // SAFETY: argv[1] and argv[2] are live values of this call.
    let ok = unsafe {
      sys::napi_get_value_int64(env, argv[1], &mut start) == sys::Status::napi_ok
        && sys::napi_get_value_int64(env, argv[2], &mut end) == sys::Status::napi_ok
    };
    if !ok {
      return throw_type_error(
        env,
        c"decodeUtf8",
        "bytes, start?, end?",
        "start and end must be numbers",
      );
    }
  }
  match std::panic::catch_unwind(|| pipeline::decode_to_string(env, bytes, start, end)) {
    // SAFETY: `env` is this call's env.
    Ok(reply) => match unsafe { Reply::to_napi_value(env, reply) } {
      Ok(value) => value,
      Err(e) => throw(env, &format!("readfile-utf8: decodeUtf8: {}", e.reason)),
    },
    Err(_) => throw(env, "readfile-utf8: internal error (panic) in decodeUtf8"),
  }
}

/// Up to `N` arguments of this call and how many were passed, or None if Node
/// could not give them.
fn arguments<const N: usize>(
  env: sys::napi_env,
  info: sys::napi_callback_info,
) -> Option<(usize, [sys::napi_value; N])> {
  let mut argc = N;
  let mut argv = [ptr::null_mut(); N];
  // SAFETY: `info` is this call's; argv has room for `argc` values.
  let status = unsafe {
    sys::napi_get_cb_info(
      env,
      info,
      &mut argc,
      argv.as_mut_ptr(),
      ptr::null_mut(),
      ptr::null_mut(),
    )
  };
  (status == sys::Status::napi_ok).then_some((argc, argv))
}

/// Takes the `(path: string, flags: number)` arguments of this call and runs
/// `body` on them (the path NUL-terminated, `None` if it has a NUL inside),
/// catching a panic; throws a TypeError naming `name` on bad arguments, and an
/// Error if `body` fails or panics.
fn with_path_and_flags(
  env: sys::napi_env,
  info: sys::napi_callback_info,
  name: &CStr,
  body: impl FnOnce(Option<&CStr>, i32) -> napi::Result<sys::napi_value> + std::panic::UnwindSafe,
) -> sys::napi_value {
  let Some((_, argv)) = arguments::<2>(env, info).filter(|&(argc, _)| argc >= 2) else {
    return throw_type_error(env, name, "path, flags", "two arguments expected");
  };
  let Some(flags) = args::int32_number(env, argv[1]) else {
    return throw_type_error(env, name, "path, flags", "flags must be a number");
  };
  let (mut stack, mut heap) = (args::path_room(), Vec::new());
  let Some(path) = args::string_utf8(env, argv[0], &mut stack, &mut heap) else {
    return throw_type_error(env, name, "path, flags", "path must be a string");
  };
  let path = CStr::from_bytes_with_nul(path).ok();
  match std::panic::catch_unwind(|| body(path, flags)) {
    Ok(Ok(value)) => value,
    Ok(Err(e)) => throw(env, &format!("readfile-utf8: {}: {}", name.to_string_lossy(), e.reason)),
    Err(_) => throw(
      env,
      &format!("readfile-utf8: internal error (panic) in {}", name.to_string_lossy()),
    ),
  }
}

fn throw_type_error(env: sys::napi_env, name: &CStr, params: &str, problem: &str) -> sys::napi_value {
  let message = format!("{}({params}): {problem}", name.to_string_lossy());
  throw_with(sys::napi_throw_type_error, env, &message)
}

fn throw(env: sys::napi_env, message: &str) -> sys::napi_value {
  throw_with(sys::napi_throw_error, env, message)
}

/// Throws `message` with `napi_throw_error` or `napi_throw_type_error`; returns
/// the null value a callback that threw returns.
fn throw_with(
  throw: unsafe fn(sys::napi_env, *const c_char, *const c_char) -> sys::napi_status,
  env: sys::napi_env,
  message: &str,
) -> sys::napi_value {
  let message = std::ffi::CString::new(message).unwrap_or_default();
  // SAFETY: `message` is NUL-terminated; a null code is allowed.
  unsafe { throw(env, ptr::null(), message.as_ptr()) };
  ptr::null_mut()
}

/// Adds the callbacks above to the module's exports.
pub(super) fn register(env: &Env, exports: &Object) -> napi::Result<()> {
  let functions: &[(&CStr, sys::napi_callback)] = &[
    (c"readPath", Some(read_path)),
    (c"decodeUtf8", Some(decode_utf8)),
    #[cfg(feature = "bench")]
    (c"readPathLength", Some(read_path_length)),
  ];
  for &(name, callback) in functions {
    let mut function = ptr::null_mut();
    // SAFETY: `name` is NUL-terminated (length -1: up to the NUL); `callback`
    // has the callback signature and needs no data pointer.
    let status =
      unsafe { sys::napi_create_function(env.raw(), name.as_ptr(), -1, callback, ptr::null_mut(), &mut function) };
    napi::check_status!(status)?;
    // SAFETY: `exports` is the module's live exports object, `function` a live value.
    napi::check_status!(unsafe { sys::napi_set_named_property(env.raw(), exports.raw(), name.as_ptr(), function) })?;
  }
  Ok(())
}
