//! The program's allocator: mimalloc, called the cheap way where it can be.
//!
//! Most of the work is building and dropping small values; glibc's allocator
//! took about 40% of the instructions, mimalloc takes far fewer. Its Rust
//! binding asks for every block through the aligned entry points, which cost
//! more than the plain ones; a plain block is always aligned to a word, which
//! is all that strings, vectors and JSON values need.

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

use libmimalloc_sys as mi;

/// What a plain `mi_malloc` block is aligned to, at least.
const PLAIN_ALIGN: usize = std::mem::size_of::<usize>();

/// The global allocator of the binary (`#[global_allocator]` in main.rs).
pub struct Allocator;

// SAFETY: every block comes from mimalloc and goes back to it; a block is
// asked for with its alignment unless a plain block already has it.
unsafe impl GlobalAlloc for Allocator {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        unsafe { new_block(layout, mi::mi_malloc, mi::mi_malloc_aligned) }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        unsafe { new_block(layout, mi::mi_zalloc, mi::mi_zalloc_aligned) }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        unsafe { mi::mi_free(ptr.cast::<c_void>()) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        unsafe {
            if layout.align() <= PLAIN_ALIGN {
                mi::mi_realloc(ptr.cast::<c_void>(), new_size).cast()
            } else {
                mi::mi_realloc_aligned(ptr.cast::<c_void>(), new_size, layout.align()).cast()
            }
        }
    }
}

/// Give the memory of blocks freed so far back to the system now, rather
/// than when the allocator next gets round to it. Harmless (and of no
/// effect) where mimalloc is not the program's allocator.
pub fn give_back_freed() {
    unsafe extern "C" {
        fn mi_collect(force: bool);
    }
    // SAFETY: mi_collect only walks and trims the allocator's own free lists
    // and may be called at any time from any thread.
    unsafe { mi_collect(true) }
}

/// A block of `layout` from `plain`, or from `aligned` when a plain block
/// would not be aligned enough.
#[inline]
unsafe fn new_block(
    layout: Layout,
    plain: unsafe extern "C" fn(usize) -> *mut c_void,
    aligned: unsafe extern "C" fn(usize, usize) -> *mut c_void,
) -> *mut u8 {
    unsafe {
        if layout.align() <= PLAIN_ALIGN {
            plain(layout.size()).cast()
        } else {
            aligned(layout.size(), layout.align()).cast()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_have_the_alignment_asked_for_and_keep_their_bytes() {
        for align in [1, 2, 4, 8, 16, 32, 64, 4096] {
            for size in [1, 7, 8, 24, 48, 100, 1000, 70_000] {
                let layout = Layout::from_size_align(size, align).expect("a layout");
                unsafe {
                    let block = Allocator.alloc(layout);
                    assert!(!block.is_null());
                    assert_eq!(block as usize % align, 0, "size {size}, align {align}");
                    block.write_bytes(0xA5, size);
                    let grown = Allocator.realloc(block, layout, size * 3);
                    assert_eq!(grown as usize % align, 0, "grown {size}, align {align}");
                    assert_eq!(*grown.add(size - 1), 0xA5);
                    Allocator.dealloc(
                        grown,
                        Layout::from_size_align(size * 3, align).expect("a layout"),
                    );
                    let zeroed = Allocator.alloc_zeroed(layout);
                    assert_eq!(zeroed as usize % align, 0);
                    assert!((0..size).all(|i| *zeroed.add(i) == 0));
                    Allocator.dealloc(zeroed, layout);
                }
            }
        }
    }
}
