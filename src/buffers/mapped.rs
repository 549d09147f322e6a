//! The allocator of this library's own memory (Rust code only: Node and V8 keep
//! theirs): large blocks are mapped straight from the kernel and unmapped when
//! freed, everything else goes to the system allocator.
//!
//! glibc serves a block below its mmap threshold from an arena, and it raises
//! that threshold to the size of every mapped block freed: after the first
//! large string, large buffers came from the arenas of libuv's threads, and
//! freeing them left the arenas' pages resident. Mapped directly, a freed
//! buffer is memory the process no longer holds.

use std::alloc::{GlobalAlloc, Layout, System};
use std::ptr;

use crate::limits::facts::PAGE_BYTES;
use crate::limits::SHARED_MIN_BYTES;

/// Blocks of this size or more (the ones `buffers` shares) are mapped.
const MAP_FROM_BYTES: usize = SHARED_MIN_BYTES;

/// Where in its first page a mapped block starts, which is also the most
/// alignment it has. V8 copies a large string into memory that starts near a
/// page's start: a source at the same offset in its pages makes the copy's
/// loads wait on its stores to the address 4 KiB apart (4K aliasing), which
/// slows the copy markedly; half a page apart, they never meet.
const BLOCK_OFFSET: usize = PAGE_BYTES / 2;

/// See the module's documentation.
pub(crate) struct LargeMapped;

fn mapped(size: usize, align: usize) -> bool {
  size >= MAP_FROM_BYTES && align <= BLOCK_OFFSET
}

/// A block of `size` bytes, `BLOCK_OFFSET` bytes into a fresh mapping.
fn map(size: usize) -> *mut u8 {
  // SAFETY: an anonymous private mapping; no existing memory is touched.
  let p = unsafe {
    libc::mmap(
      ptr::null_mut(),
      size + BLOCK_OFFSET,
      libc::PROT_READ | libc::PROT_WRITE,
      libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
      -1,
      0,
    )
  };
  block(p)
}

/// The block in a mapping that mmap or mremap returned (null if it failed).
fn block(mapping: *mut libc::c_void) -> *mut u8 {
  if mapping == libc::MAP_FAILED {
    ptr::null_mut()
  } else {
    mapping.cast::<u8>().wrapping_add(BLOCK_OFFSET)
  }
}

/// The mapping that `block` placed the block at `ptr` in.
fn mapping(ptr: *mut u8) -> *mut libc::c_void {
  ptr.wrapping_sub(BLOCK_OFFSET).cast()
}

/// Gives the pages of a mapped block past its first `used` bytes back to the
/// kernel (they read as zeros if touched again); the block stays the caller's,
/// whole. For a block that is not mapped (`capacity` below `MAP_FROM_BYTES`),
/// nothing.
pub(crate) fn release_after(block: *const u8, used: usize, capacity: usize) {
  if capacity < MAP_FROM_BYTES {
    return;
  }
  let page = PAGE_BYTES;
  let start = (block as usize + used).next_multiple_of(page);
  let end = (block as usize + capacity) & !(page - 1);
  if end > start {
    // SAFETY: [start, end) is whole pages inside this block's private
    // anonymous mapping (`map`), which its owner does not read past `used`:
    // MADV_DONTNEED only drops those pages, which refault as zeros.
    unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTNEED) };
  }
}

// SAFETY: every block is either mapped here and unmapped here (the same
// `mapped` test on the same size and alignment decides both), or allocated and
// freed by `System`; mapped blocks are aligned to `BLOCK_OFFSET` (enough for
// `mapped`) and zeroed, as `alloc_zeroed` requires.
unsafe impl GlobalAlloc for LargeMapped {
  unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
    if mapped(layout.size(), layout.align()) {
      return map(layout.size());
    }
    // SAFETY: forwarded with the caller's layout, which meets `alloc`'s contract.
    unsafe { System.alloc(layout) }
  }

  unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
    if mapped(layout.size(), layout.align()) {
      return map(layout.size()); // anonymous mappings are zero-filled
    }
    // SAFETY: forwarded with the caller's layout.
    unsafe { System.alloc_zeroed(layout) }
  }

  unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
    if mapped(layout.size(), layout.align()) {
      // SAFETY: `ptr` was placed by `map` for this size (same layout) and is
      // not used again by the caller.
      unsafe { libc::munmap(mapping(ptr), layout.size() + BLOCK_OFFSET) };
      return;
    }
    // SAFETY: `ptr` came from `System` with this layout.
    unsafe { System.dealloc(ptr, layout) }
  }

  unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
    let align = layout.align();
    match (mapped(layout.size(), align), mapped(new_size, align)) {
      (false, false) => {
        // SAFETY: `ptr` came from `System` with `layout`; the caller meets realloc's contract.
        unsafe { System.realloc(ptr, layout, new_size) }
      }
      (true, true) => {
        // SAFETY: `ptr` was placed by `map` for `layout.size()` bytes; mremap
        // moves or resizes the mapping whole, keeping its contents and the
        // block's offset in it.
        block(unsafe {
          libc::mremap(
            mapping(ptr),
            layout.size() + BLOCK_OFFSET,
            new_size + BLOCK_OFFSET,
            libc::MREMAP_MAYMOVE,
          )
        })
      }
      _ => {
        // Crossing the threshold: a new block of the other kind, the contents copied.
        // SAFETY: `new_size` is non-zero and `align` a valid alignment (from `layout`).
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, align) };
        // SAFETY: a fresh block of `new_layout`.
        let new = unsafe { self.alloc(new_layout) };
        if !new.is_null() {
          // SAFETY: both blocks are valid for the smaller size and do not overlap;
          // `ptr` is freed with the layout it was allocated with.
          unsafe {
            ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
            self.dealloc(ptr, layout);
          }
        }
        new
      }
    }
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn the_pages_past_what_is_used_are_given_back_and_the_rest_kept() {
    let a = LargeMapped;
    let size = MAP_FROM_BYTES * 8;
    let layout = Layout::from_size_align(size, 8).unwrap();
    // SAFETY: a block used within its size and freed once with its layout.
    unsafe {
      let p = a.alloc(layout);
      p.write_bytes(7, size);
      let used = MAP_FROM_BYTES + 123;
      release_after(p, used, size);
      assert!((0..used).all(|i| *p.add(i) == 7), "the used bytes are kept");
      // The pages that hold the last used byte and the block's last byte are
      // kept whole; every whole page between them reads as zeros again.
      let first_released = (p as usize + used).next_multiple_of(4096) - p as usize;
      let past_released = ((p as usize + size) & !4095) - p as usize;
      assert!(past_released - first_released >= size - used - 2 * 4096);
      assert!((first_released..past_released).all(|i| *p.add(i) == 0));
      assert!((past_released..size).all(|i| *p.add(i) == 7));
      a.dealloc(p, layout);
      // Unmapped blocks are left alone.
      let small = Layout::from_size_align(1000, 8).unwrap();
      let q = a.alloc(small);
      q.write_bytes(5, 1000);
      release_after(q, 10, 1000);
      assert_eq!(*q.add(999), 5);
      a.dealloc(q, small);
    }
  }

  #[test]
  fn blocks_cross_the_threshold_both_ways_with_their_contents() {
    let a = LargeMapped;
    let small = Layout::from_size_align(1000, 8).unwrap();
    // SAFETY: each block is used within its size and freed once with its layout.
    unsafe {
      let p = a.alloc(small);
      p.write_bytes(7, 1000);
      let big = a.realloc(p, small, MAP_FROM_BYTES * 3);
      assert_eq!(*big.add(999), 7);
      assert_eq!(big as usize % 4096, BLOCK_OFFSET);
      big.add(MAP_FROM_BYTES * 3 - 1).write(9);
      let big_layout = Layout::from_size_align(MAP_FROM_BYTES * 3, 8).unwrap();
      let bigger = a.realloc(big, big_layout, MAP_FROM_BYTES * 40);
      assert_eq!((*bigger, *bigger.add(MAP_FROM_BYTES * 3 - 1)), (7, 9));
      assert_eq!(bigger as usize % 4096, BLOCK_OFFSET);
      let bigger_layout = Layout::from_size_align(MAP_FROM_BYTES * 40, 8).unwrap();
      let back = a.realloc(bigger, bigger_layout, 500);
      assert_eq!(*back.add(499), 7);
      a.dealloc(back, Layout::from_size_align(500, 8).unwrap());
      let zeroed = a.alloc_zeroed(big_layout);
      assert_eq!(*zeroed.add(MAP_FROM_BYTES), 0);
      a.dealloc(zeroed, big_layout);
    }
  }
}
