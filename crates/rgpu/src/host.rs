//! On the host: the runtime (devices, buffers, launches; rgpu-runtime) and the cpu
//! backend's versions of the kernel-side types, re-exported under the same names the GPU
//! codegens see.

pub use rgpu_runtime::{
    args, eprint, eprintln, fence, print, println, program, testing, Atomic, AtomicScope,
    AtomicWord, Backend, Buffer, Collective, CopyPath, Device, DeviceChoice, DeviceFacts,
    DeviceInfo, DeviceOptions, DeviceScope, DeviceType, Error, Global, Group, Input, InputOutput,
    Instant, Item, KernelStats, LaneValue, Pod, ReduceOp, Reducible, Shared, Skipped, Stat,
    StatValue, SubgroupBits, SubgroupValue, Transfer, Word, WorkgroupScope, BACKEND_VAR,
    CPU_THREADS_VAR, DEVICE_VAR, NCCL_ID_VAR,
};

/// What the expansions of `#[rgpu::kernel]` use on the host.
#[allow(missing_docs)]
pub mod private {
    use std::vec::Vec;

    pub use rgpu_runtime::__private::cpu;
    pub use rgpu_runtime::__private::{
        check_lengths, launch, shape_count, Access, Arg, Artifact, BufferInfo, KernelInfo, Mode,
        Place,
    };

    /// `size` zero bytes: a params struct's serialization starts from these.
    pub fn zeroed(size: usize) -> Vec<u8> {
        std::vec![0; size]
    }

    /// Writes one field of a params struct at its offset (so no padding byte is read).
    pub fn put<T: bytemuck::Pod>(bytes: &mut [u8], offset: usize, value: &T) {
        let raw = bytemuck::bytes_of(value);
        bytes[offset..offset + raw.len()].copy_from_slice(raw);
    }

    /// A read-only host buffer shared by the cpu backend's invocations.
    #[derive(Clone, Copy)]
    pub struct SyncPtr<T>(*const T);

    // SAFETY: only reads through it, of `Pod` data that outlives the launch.
    unsafe impl<T: Sync> Sync for SyncPtr<T> {}
    // SAFETY: as above.
    unsafe impl<T: Sync> Send for SyncPtr<T> {}

    impl<T> SyncPtr<T> {
        pub fn new(ptr: *const T) -> Self {
            Self(ptr)
        }

        /// # Safety
        /// `index` is inside the buffer, which outlives the returned reference.
        pub unsafe fn get<'a>(&self, index: usize) -> &'a T {
            // SAFETY: the caller's contract.
            unsafe { &*self.0.add(index) }
        }
    }

    /// A read-write host buffer whose elements the cpu backend's invocations own one each.
    #[derive(Clone, Copy)]
    pub struct SyncPtrMut<T>(*mut T);

    // SAFETY: each element is reached by one invocation only (the item kernels' contract).
    unsafe impl<T: Send> Sync for SyncPtrMut<T> {}
    // SAFETY: as above.
    unsafe impl<T: Send> Send for SyncPtrMut<T> {}

    impl<T> SyncPtrMut<T> {
        pub fn new(ptr: *mut T) -> Self {
            Self(ptr)
        }

        /// # Safety
        /// `index` is inside the buffer, which outlives the returned reference, and no other
        /// reference to that element exists meanwhile.
        #[allow(clippy::mut_from_ref)]
        pub unsafe fn get_mut<'a>(&self, index: usize) -> &'a mut T {
            // SAFETY: the caller's contract.
            unsafe { &mut *self.0.add(index) }
        }
    }
}
