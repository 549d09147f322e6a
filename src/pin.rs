//! Keeps this library loaded until the process ends. Node unloads an addon
//! when a Worker that loaded it exits (its Environment closes the addons it
//! opened, unless it is the main thread's), while threads this library starts
//! for the whole process (the buffer pool's reaper, the two-thread helper,
//! batch readers) may still run its code: once unloaded, they fault. Pinned,
//! the unload does nothing.

use std::sync::Once;

/// Pins this library, once per process; a failure leaves it as it was.
pub(crate) fn pin_this_library() {
  static PINNED: Once = Once::new();
  PINNED.call_once(pin);
}

/// An address inside this library, to find it by.
fn anchor() -> *const u8 {
  pin_this_library as *const u8
}

#[cfg(windows)]
fn pin() {
  use std::ffi::c_void;
  const GET_MODULE_HANDLE_EX_FLAG_PIN: u32 = 0x1;
  const GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS: u32 = 0x4;
  #[link(name = "kernel32")]
  extern "system" {
    fn GetModuleHandleExW(flags: u32, module_name: *const u16, module: *mut *mut c_void) -> i32;
  }
  let mut module = std::ptr::null_mut();
  // SAFETY: with FROM_ADDRESS the name is an address inside the module to
  // find (a function of this library), only compared, never read; `module`
  // is a local the call writes. PIN keeps the module loaded until the
  // process ends, whatever FreeLibrary calls follow.
  unsafe {
    GetModuleHandleExW(
      GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_PIN,
      anchor().cast(),
      &mut module,
    )
  };
}

#[cfg(unix)]
fn pin() {
  // SAFETY: Dl_info is plain data (pointers and an address); all-zero is a valid value.
  let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
  // SAFETY: dladdr only looks the address up and writes `info`, a local.
  if unsafe { libc::dladdr(anchor().cast(), &mut info) } == 0 || info.dli_fname.is_null() {
    return;
  }
  // SAFETY: dli_fname is the loader's NUL-terminated path of this library,
  // valid while it is loaded (this code runs in it). NOLOAD opens nothing
  // new; NODELETE marks the library never to be unloaded; the handle, never
  // closed, holds one more reference besides.
  unsafe { libc::dlopen(info.dli_fname, libc::RTLD_NOW | libc::RTLD_NOLOAD | libc::RTLD_NODELETE) };
}
