//! The simulated server's Lua allocator: small blocks (strings, tables, closures of up to
//! [`LARGEST`] bytes) from free lists by size, in front of `mlua`'s own allocator, which keeps
//! everything larger and everything allocated before the pool was put in place.
//!
//! Each script makes and drops a score of small objects, and the general-purpose allocator's
//! path for them (through `mlua`'s accounting and Rust's allocator to the C library's) costs
//! more than the Lua that made them. Lua gives the size of every block it frees or resizes, so
//! a free list per size needs no headers; a block is the pool's if it lies in one of its
//! chunks, which are kept until the engine (and so its Lua state) is gone.
#![allow(unsafe_code)]

use core::ffi::c_void;
use core::ptr;

use mlua::ffi;

/// The largest block the pool keeps, in bytes.
const LARGEST: usize = 256;
/// Block sizes are multiples of this (Lua's alignment).
const GRAIN: usize = 16;
/// The size of a chunk the pool carves blocks from.
const CHUNK: usize = 256 * 1024;

/// The pool. Its address is the allocator's user data, so it stays boxed.
#[derive(Debug)]
pub(crate) struct Pool {
    /// The allocator the state had, and its user data.
    next: (ffi::lua_Alloc, *mut c_void),
    /// The first free block of each size class (a free block holds the next).
    free: [*mut u8; LARGEST / GRAIN + 1],
    /// The chunks, and the unused rest of the last one.
    chunks: Vec<Box<[Grain]>>,
    bump: *mut u8,
    end: *mut u8,
}

/// A chunk's unit: aligned as Lua needs.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(16))]
struct Grain([u8; GRAIN]);

impl Pool {
    /// Puts a pool in front of `state`'s allocator; the pool must outlive the state.
    ///
    /// # Safety
    ///
    /// `state` is a Lua state that allocates nothing while this runs; the returned pool is
    /// dropped only after the state is closed.
    pub(crate) unsafe fn install(state: *mut ffi::lua_State) -> Box<Pool> {
        let mut user = ptr::null_mut();
        let next = unsafe { ffi::lua_getallocf(state, &raw mut user) };
        let mut pool = Box::new(Pool {
            next: (next, user),
            free: [ptr::null_mut(); LARGEST / GRAIN + 1],
            chunks: Vec::new(),
            bump: ptr::null_mut(),
            end: ptr::null_mut(),
        });
        let data: *mut Pool = &raw mut *pool;
        unsafe { ffi::lua_setallocf(state, allocate, data.cast()) };
        pool
    }

    /// Whether `block` was carved from one of the pool's chunks.
    fn owns(&self, block: *mut u8) -> bool {
        self.chunks.iter().any(|chunk| {
            let range = chunk.as_ptr_range();
            (range.start.cast::<u8>()..range.end.cast::<u8>()).contains(&block.cast_const())
        })
    }

    /// A block of size class `class`.
    fn take(&mut self, class: usize) -> *mut u8 {
        let head = self.free[class];
        if !head.is_null() {
            // SAFETY: a free block's first word holds the next free block; blocks are aligned
            // to a grain.
            #[allow(clippy::cast_ptr_alignment)]
            let next = unsafe { head.cast::<*mut u8>().read() };
            self.free[class] = next;
            return head;
        }
        let size = class * GRAIN;
        if (self.end as usize) - (self.bump as usize) < size {
            let mut chunk = vec![Grain([0; GRAIN]); CHUNK / GRAIN].into_boxed_slice();
            let range = chunk.as_mut_ptr_range();
            self.bump = range.start.cast();
            self.end = range.end.cast();
            self.chunks.push(chunk);
        }
        let block = self.bump;
        // SAFETY: within the chunk, which has `size` bytes left.
        self.bump = unsafe { self.bump.add(size) };
        block
    }

    /// Returns `block` of size class `class` to its free list.
    fn give(&mut self, block: *mut u8, class: usize) {
        // SAFETY: the block is the pool's, aligned to a grain, at least one grain long, and
        // free.
        #[allow(clippy::cast_ptr_alignment)]
        let link = block.cast::<*mut u8>();
        unsafe { link.write(self.free[class]) };
        self.free[class] = block;
    }
}

/// The size class of a block of `size` bytes, if the pool keeps such blocks.
fn class(size: usize) -> Option<usize> {
    (1..=LARGEST).contains(&size).then(|| size.div_ceil(GRAIN))
}

/// Lua's allocator function (`lua_Alloc`): frees when `nsize` is 0, else allocates or resizes.
unsafe extern "C" fn allocate(
    data: *mut c_void,
    block: *mut c_void,
    osize: usize,
    nsize: usize,
) -> *mut c_void {
    // SAFETY: the user data is the pool, alive while its state is (see `install`).
    let pool = unsafe { &mut *data.cast::<Pool>() };
    let block = block.cast::<u8>();
    let (next, user) = pool.next;
    let ours = !block.is_null() && pool.owns(block);
    let old = if block.is_null() { None } else { class(osize) };
    match (ours, old, class(nsize)) {
        // Resized within its class: stays.
        (true, Some(from), Some(to)) if from == to => block.cast(),
        (true, Some(from), to) => {
            let new = match to {
                Some(to) => pool.take(to),
                None if nsize == 0 => ptr::null_mut(),
                None => unsafe { next(user, ptr::null_mut(), 0, nsize) }.cast::<u8>(),
            };
            if !new.is_null() || nsize == 0 {
                if !new.is_null() {
                    // SAFETY: both blocks hold at least the smaller size.
                    unsafe { ptr::copy_nonoverlapping(block, new, osize.min(nsize)) };
                }
                pool.give(block, from);
            }
            new.cast()
        }
        // Not the pool's (or a new block): large blocks stay with the allocator below.
        (_, _, None) => unsafe { next(user, block.cast(), osize, nsize) },
        (_, _, Some(to)) => {
            let new = pool.take(to);
            if !block.is_null() {
                // SAFETY: the old block holds `osize` bytes, the new one at least `nsize`.
                unsafe { ptr::copy_nonoverlapping(block, new, osize.min(nsize)) };
                unsafe { next(user, block.cast(), osize, 0) };
            }
            new.cast()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::class;

    #[test]
    fn sizes_fall_in_classes_of_whole_grains() {
        assert_eq!(class(0), None);
        assert_eq!(class(1), Some(1));
        assert_eq!(class(16), Some(1));
        assert_eq!(class(17), Some(2));
        assert_eq!(class(256), Some(16));
        assert_eq!(class(257), None);
    }
}
