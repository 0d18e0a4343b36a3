//! The device's memory pool, which every buffer comes from (`cuMemAllocAsync` on drivers
//! that have it): freed memory is kept in it for the next allocation instead of going back
//! to the driver at each synchronization (CUDA's default release threshold, 0, maps and
//! unmaps the memory of a buffer made and dropped between two waits every time: 0.1-0.3 ms
//! for 128 MiB on an H200), and given back only when an allocation would otherwise fail;
//! peer access to it is opened for another GPU's copies.

use cudarc::driver::{result, sys};

use super::BACKEND;
use crate::error::Error;

/// `device`'s default memory pool.
fn default_pool(device: sys::CUdevice) -> Result<sys::CUmemoryPool, Error> {
    let mut pool = std::ptr::null_mut();
    // SAFETY: `pool` receives the device's default pool.
    unsafe { sys::cuDeviceGetDefaultMemPool(&mut pool, device) }
        .result()
        .map_err(|e| Error::api_call(BACKEND, "reading a GPU's memory pool", e))?;
    Ok(pool)
}

/// Keeps the memory freed into `device`'s pool there (release threshold: all of it).
pub(super) fn keep_freed(device: sys::CUdevice) -> Result<(), Error> {
    let pool = default_pool(device)?;
    let mut threshold = u64::MAX;
    // SAFETY: the attribute takes a u64, alive for the call.
    unsafe {
        sys::cuMemPoolSetAttribute(
            pool,
            sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            (&mut threshold as *mut u64).cast(),
        )
    }
    .result()
    .map_err(|e| Error::api_call(BACKEND, "keeping freed memory in the GPU's pool", e))
}

/// Gives the memory `device`'s pool keeps unused back to the driver (after the frees
/// queued before have run).
pub(super) fn give_back(device: sys::CUdevice) -> Result<(), Error> {
    let pool = default_pool(device)?;
    // SAFETY: a pool the driver gave; trimming keeps memory in use.
    unsafe { result::mem_pool::trim_to(pool, 0) }
        .map_err(|e| Error::api_call(BACKEND, "giving the GPU pool's unused memory back", e))
}

/// Lets GPU `ordinal` read and write the memory of `device`'s default memory pool.
pub(super) fn open_to(device: sys::CUdevice, ordinal: usize) -> Result<(), Error> {
    let pool = default_pool(device)?;
    let access = sys::CUmemAccessDesc {
        location: sys::CUmemLocation {
            type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
            id: ordinal as i32,
        },
        flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
    };
    // SAFETY: one descriptor, alive for the call.
    unsafe { sys::cuMemPoolSetAccess(pool, &access, 1) }
        .result()
        .map_err(|e| Error::api_call(BACKEND, "opening a memory pool to another GPU", e))
}
