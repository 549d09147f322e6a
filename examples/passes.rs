//! Times the single passes of the pipeline on a file, in isolation:
//! `cargo run --release --example passes -- <file>` (a development aid).
use std::time::Instant;

fn time<T>(label: &str, reps: u32, mut f: impl FnMut() -> T) {
  let mut best = f64::MAX;
  for _ in 0..reps {
    let t = Instant::now();
    std::hint::black_box(f());
    best = best.min(t.elapsed().as_secs_f64());
  }
  println!("{label:<28} {:>9.1} µs", best * 1e6);
}

fn main() {
  let path = std::env::args().nth(1).expect("usage: passes <file>");
  let bytes = std::fs::read(&path).unwrap();
  let n = 50;
  // Split as decoding these bytes from memory would be.
  let split = readfile_utf8::parallel::split_conversion(bytes.len(), false);
  println!(
    "class {:?}, try_latin1 {:?}, valid {}",
    readfile_utf8::classify::classify(&bytes),
    readfile_utf8::simd::try_latin1(&bytes, split).map(|v| v.len()),
    std::str::from_utf8(&bytes).is_ok()
  );
  time("std is_ascii", n, || bytes.is_ascii());
  time("simdutf validate_ascii", n, || simdutf::validate_ascii(&bytes));
  time("simdutf8 validate", n, || simdutf8::basic::from_utf8(&bytes).is_ok());
  time("simdutf validate_utf8", n, || simdutf::validate_utf8(&bytes));
  time("classify", n, || readfile_utf8::classify::classify(&bytes));
  time("decode (whole transcode)", n, || {
    readfile_utf8::transcode::decode(bytes.clone())
  });
  time("simd try_latin1", n, || readfile_utf8::simd::try_latin1(&bytes, split));
  time("simdutf latin1 valid conv", n, || {
    let mut out = vec![0u8; bytes.len()];
    unsafe { simdutf::convert_valid_utf8_to_latin1(bytes.as_ptr(), bytes.len(), out.as_mut_ptr()) }
  });
  time("simdutf utf16_length", n, || simdutf::utf16_length_from_utf8(&bytes));
  time("simd append_utf16_up_to_error", n, || {
    let mut out = Vec::new();
    readfile_utf8::simd::append_utf16_up_to_error(&bytes, &mut out)
  });
  time("simdutf conv_with_errors", n, || {
    let mut out = vec![0u16; bytes.len()];
    unsafe { simdutf::convert_utf8_to_utf16le_with_errors(bytes.as_ptr(), bytes.len(), out.as_mut_ptr()) }.count
  });
  time("simdutf conv validating", n, || {
    let mut out = vec![0u16; bytes.len()];
    unsafe { simdutf::convert_utf8_to_utf16le(bytes.as_ptr(), bytes.len(), out.as_mut_ptr()) }
  });
  time("simdutf conv_valid", n, || {
    let mut out = vec![0u16; bytes.len()];
    unsafe { simdutf::convert_valid_utf8_to_utf16le(bytes.as_ptr(), bytes.len(), out.as_mut_ptr()) }
  });
  time("thread::scope spawn+join", n, || {
    std::thread::scope(|s| s.spawn(|| 1).join().unwrap())
  });
  time("clone (memcpy+alloc)", n, || bytes.clone());
  time("read_path", n, || {
    readfile_utf8::read::read_path(path.as_bytes(), 0).unwrap()
  });
  let mut scratch = Vec::new();
  time("read_path_into (reused)", n * 20, || {
    readfile_utf8::read::read_path_into(path.as_bytes(), 0, &mut scratch)
  });
  let c = std::ffi::CString::new(path.clone()).unwrap();
  // SAFETY: a valid C string; the fd is closed right away.
  time("open+close only", n * 20, || unsafe {
    libc::close(libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC))
  });
}
