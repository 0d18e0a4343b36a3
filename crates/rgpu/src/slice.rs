//! Unchecked reads of a read-only buffer (`x: &[T]`), the same on every codegen.
//!
//! `x[i]` checks the index: on nvptx a compare and a branch to a trap per load, on rust-gpu a
//! branch out of the entry point (which also keeps spirv-opt and the Vulkan compilers from
//! moving the load). Where the kernel knows the index is in range (a loop bounded by
//! `x.len()`, an index computed from the launch), [`LoadUnchecked::load_unchecked`] reads
//! without the check: `unsafe { x.load_unchecked(i) }`.

/// `load_unchecked` for a read-only buffer parameter (`x: &[T]`).
pub trait LoadUnchecked<T: Copy> {
    /// Element `index`, without a bounds check on the GPU codegens (the cpu backend still
    /// checks, and an index past the end panics there).
    ///
    /// # Safety
    /// `index < len()`: past the end the GPU reads whatever memory is there, or faults.
    unsafe fn load_unchecked(&self, index: u32) -> T;
}

impl<T: Copy> LoadUnchecked<T> for [T] {
    #[inline(always)]
    unsafe fn load_unchecked(&self, index: u32) -> T {
        #[cfg(rgpu_codegen = "spirv")]
        {
            use spirv_std::arch::IndexUnchecked;
            // SAFETY: the caller's contract (index < len). spirv-std's `index_unchecked` is
            // one OpAccessChain; rust-gpu refuses `get_unchecked`.
            unsafe { *self.index_unchecked(index as usize) }
        }
        #[cfg(any(rgpu_codegen = "nvptx", rgpu_codegen = "nvvm"))]
        {
            // SAFETY: the caller's contract (index < len).
            unsafe { *self.get_unchecked(index as usize) }
        }
        #[cfg(rgpu_codegen = "host")]
        {
            self[index as usize]
        }
    }
}
