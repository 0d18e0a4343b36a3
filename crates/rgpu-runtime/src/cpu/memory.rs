//! `HostMemory`: the bytes of a cpu `Buffer`, aligned for its element type.

use std::alloc::{self, Layout};
use std::ptr::NonNull;

use crate::backend::Backend;
use crate::error::Error;

/// Zero-initialised heap memory of `len` bytes (at least 4 underneath, so an empty buffer
/// still has an address), aligned to at least 16 bytes.
pub(crate) struct HostMemory {
    ptr: NonNull<u8>,
    layout: Layout,
    len: usize,
}

// SAFETY: `HostMemory` owns its allocation like a `Vec<u8>` does; `&self` gives only shared
// reads and `&mut self` the only writes.
unsafe impl Send for HostMemory {}
// SAFETY: as above: no interior mutability through `&self`.
unsafe impl Sync for HostMemory {}

impl HostMemory {
    /// `len` zero bytes, aligned to `align` (and to 16).
    pub(crate) fn zeroed(len: usize, align: usize) -> Result<Self, Error> {
        let out_of_memory = |reason: &str| Error::out_of_memory(Backend::Cpu, len as u64, reason);
        let layout = Layout::from_size_align(len.max(4), align.max(16))
            .map_err(|_| out_of_memory("larger than the address space"))?;
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(ptr).ok_or_else(|| out_of_memory("the allocator refused"))?;
        Ok(Self { ptr, layout, len })
    }

    /// A copy of `data`, aligned to `align` (and to 16).
    pub(crate) fn copy_of(data: &[u8], align: usize) -> Result<Self, Error> {
        let mut memory = Self::zeroed(data.len(), align)?;
        memory.bytes_mut().copy_from_slice(data);
        Ok(memory)
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        // SAFETY: the allocation holds at least `len` initialised (zeroed) bytes and lives
        // as long as `self`; `&self` excludes writers.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    pub(crate) fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `bytes`, and `&mut self` makes this the only reference.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for HostMemory {
    fn drop(&mut self) {
        // SAFETY: allocated in `zeroed` with exactly this layout, freed once.
        unsafe { alloc::dealloc(self.ptr.as_ptr(), self.layout) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_memory_has_an_address_and_no_bytes() {
        let m = HostMemory::zeroed(0, 4).unwrap();
        assert!(m.bytes().is_empty());
        let m = HostMemory::copy_of(&[1, 2, 3], 1).unwrap();
        assert_eq!(m.bytes(), [1, 2, 3]);
        assert_eq!(m.bytes().as_ptr() as usize % 16, 0);
        assert!(matches!(
            HostMemory::zeroed(usize::MAX - 8, 4),
            Err(Error::OutOfMemory { .. })
        ));
    }
}
