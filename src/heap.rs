//! What the calling JS thread's heap holds in small objects outside its young
//! generation (a `plan` fact: large strings are external only while it is
//! small). Node-API cannot tell it, so lib/heap.js gives the addon a function
//! that measures it (`set_meter`), which the addon calls when a string first
//! needs the figure, and again once `HEAP_CHECK_EVERY` strings were made since:
//! until a string is large enough to ask, node:v8 (which costs a process
//! memory of its own) is never loaded. The figure only flows this one way.
//!
//! Every string is made on a JS thread, and each has its own heap (the main
//! thread's, or a Worker's): the figure and the meter are per thread.

use std::cell::Cell;
use std::ptr;

use napi::sys;

use crate::limits::tuned;

thread_local! {
  /// The last figure measured on this thread, and the strings made since.
  static FIGURE: Cell<Figure> = const { Cell::new(Figure { bytes: None, strings_since: 0 }) };
  /// lib/heap.js's meter for this thread, with the env it belongs to.
  static METER: Cell<Option<(usize, sys::napi_ref)>> = const { Cell::new(None) };
}

#[derive(Clone, Copy)]
struct Figure {
  /// `None` before the first measure.
  bytes: Option<usize>,
  strings_since: u32,
}

/// Keeps `meter`, lib/heap.js's function that returns what this thread's heap
/// holds, to be called when a string first needs it.
pub(crate) fn set_meter(env: sys::napi_env, meter: sys::napi_value) {
  let mut reference = ptr::null_mut();
  // SAFETY: `meter` is a live value of the current call on `env`; the
  // reference keeps it alive for as long as the env (never deleted: one per
  // loaded copy of the JS layer, which lives as long).
  if unsafe { sys::napi_create_reference(env, meter, 1, &mut reference) } == sys::Status::napi_ok {
    METER.with(|kept| kept.set(Some((env as usize, reference))));
  }
}

/// Counts a string made on this thread (the figure's age).
pub(crate) fn count_string() {
  FIGURE.with(|f| {
    let mut figure = f.get();
    figure.strings_since = figure.strings_since.saturating_add(1);
    f.set(figure);
  });
}

/// This thread's figure: the last one measured, or measured now by the meter
/// if there is none yet or it is `HEAP_CHECK_EVERY` strings old (0 if the
/// meter is missing or fails: a heap not known to be large).
pub(crate) fn bytes(env: sys::napi_env) -> usize {
  let figure = FIGURE.with(Cell::get);
  if let Some(bytes) = figure
    .bytes
    .filter(|_| (figure.strings_since as usize) < tuned!(HEAP_CHECK_EVERY))
  {
    return bytes;
  }
  let measured = METER
    .with(Cell::get)
    .filter(|(meter_env, _)| *meter_env == env as usize)
    .and_then(|(_, meter)| call_meter(env, meter))
    .unwrap_or(0);
  FIGURE.with(|f| {
    f.set(Figure {
      bytes: Some(measured),
      strings_since: 0,
    })
  });
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
