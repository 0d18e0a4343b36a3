//! Uploads and downloads through page-locked ("pinned") staging memory owned by the device.
//!
//! A copy from pageable memory makes the driver stage it through its own small pinned
//! buffer, one piece at a time (measured before this on an H100: 2 x 64 MiB in about
//! 15 ms, some 9 GB/s, far under PCIe). Here the device keeps `SLOTS` pinned slots of up
//! to `CHUNK` bytes (allocated on first use, grown to the largest transfer up to `CHUNK`,
//! then reused) and moves data through them in chunks, so that the host copy of one chunk
//! (into a slot for uploads, out of one for downloads; split over a few threads, see
//! `crate::common::copy`) overlaps the DMA of the next. Each slot has an event, recorded after the
//! DMA that last used it; the host touches a slot only after that event.
//!
//! Every copy is on the device's one stream, so transfers stay ordered with the launches
//! around them. An upload returns once its data is in the slots (the caller may free or
//! change its slice at once) and leaves the last DMAs queued; a download returns once its
//! last chunk arrived, which is after every launch queued before it.

use std::ptr::NonNull;
use std::sync::Arc;

use cudarc::driver::{result, sys, CudaContext, CudaEvent, CudaStream, DriverError};

use crate::common::copy::host_copy;

/// Bytes per chunk (and the most a slot holds). Measured on an H100 (64 MiB, median of 20):
/// 2 MiB chunks 4.9 ms per upload, 4 MiB 3.4, 8 MiB 2.3, 16 MiB 1.9-2.3 ms (and 1.9 ms
/// per read_into against 2.0): fewer, larger chunks, 32 MiB of pinned memory in all.
const CHUNK: usize = 16 << 20;
/// Slots the chunks rotate through: a DMA into/out of one while the host copies another.
const SLOTS: usize = 2;
/// The smallest slot allocated (small transfers do not need more).
const MIN_SLOT: usize = 64 << 10;

const ALLOCATING: &str = "allocating pinned staging memory (cuMemHostAlloc)";
const WAITING: &str = "waiting for a staging copy (cuEventSynchronize)";
const RECORDING: &str = "recording a staging event (cuEventRecord)";

/// Page-locked host memory from `cuMemHostAlloc` (cached, not write-combined: downloads
/// read it back on the host), zeroed at allocation.
struct Pinned {
    ptr: NonNull<u8>,
    bytes: usize,
    ctx: Arc<CudaContext>,
}

// SAFETY: the allocation is owned by this value alone (no aliases outside it) and is plain
// host memory usable from any thread; the device's mutex orders the accesses.
unsafe impl Send for Pinned {}

impl Pinned {
    fn new(ctx: &Arc<CudaContext>, bytes: usize) -> Result<Self, DriverError> {
        ctx.bind_to_thread()?;
        // SAFETY: allocates `bytes` of host memory in the current context (bound above);
        // flags 0: neither portable, mapped nor write-combined.
        let raw = unsafe { result::malloc_host(bytes, 0) }?;
        let Some(ptr) = NonNull::new(raw.cast::<u8>()) else {
            return Err(DriverError(sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY));
        };
        // SAFETY: `ptr` is `bytes` of writable host memory, used by nothing else yet.
        unsafe { std::ptr::write_bytes(ptr.as_ptr(), 0, bytes) };
        Ok(Self {
            ptr,
            bytes,
            ctx: Arc::clone(ctx),
        })
    }

    /// The memory, while no DMA uses it (the caller synchronised the slot's event).
    fn bytes(&self) -> &[u8] {
        // SAFETY: `bytes` initialised bytes (zeroed at allocation), owned by `self`;
        // callers hold it only while no DMA writes it (see `Slot`).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.bytes) }
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as `bytes`; `&mut self` makes the slice unique on the host.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.bytes) }
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        // Nobody is left to report an error to.
        let _ = self.ctx.bind_to_thread();
        // SAFETY: allocated by cuMemHostAlloc and freed once, here; `Slot` waits for the
        // last DMA using it before this runs.
        let _ = unsafe { result::free_host(self.ptr.as_ptr().cast()) };
    }
}

/// One staging slot and the event recorded after the last DMA that used it.
struct Slot {
    memory: Pinned,
    done: CudaEvent,
}

impl Drop for Slot {
    fn drop(&mut self) {
        // Before `memory` is freed (fields drop after this): no DMA may still use it.
        let _ = self.done.synchronize();
    }
}

/// A failed driver call, and which step of the transfer made it.
pub(super) type Failed = (&'static str, DriverError);

fn step<T>(what: &'static str, r: Result<T, DriverError>) -> Result<T, Failed> {
    r.map_err(|e| (what, e))
}

/// The device's staging slots (none until the first transfer).
#[derive(Default)]
pub(super) struct Staging {
    slots: Vec<Slot>,
}

impl Staging {
    /// Slots of at least `min(bytes, CHUNK)` bytes (grown by reallocating, to a power of
    /// two); returns the chunk size to use.
    fn reserve(&mut self, ctx: &Arc<CudaContext>, bytes: usize) -> Result<usize, DriverError> {
        let want = bytes.clamp(MIN_SLOT, CHUNK).next_power_of_two();
        let have = self.slots.first().map_or(0, |s| s.memory.bytes);
        if have >= want {
            return Ok(have.min(CHUNK));
        }
        // Waits for the DMAs still using the old slots (`Slot::drop`) before freeing them.
        self.slots.clear();
        let mut slots = Vec::with_capacity(SLOTS);
        for _ in 0..SLOTS {
            let memory = Pinned::new(ctx, want)?;
            // Timing disabled: the cheapest event to record and wait for.
            let done = ctx.new_event(Some(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING))?;
            slots.push(Slot { memory, done });
        }
        // All or none: a failure above leaves no slots (and the next call tries again).
        self.slots = slots;
        Ok(want)
    }

    /// Copies `data` to device memory at `dst` (which holds at least `data.len()` bytes)
    /// on `stream`, chunk by chunk through the slots. Returns when the data is in the
    /// slots; the last DMAs may still run.
    pub(super) fn copy_in(
        &mut self,
        stream: &CudaStream,
        dst: sys::CUdeviceptr,
        data: &[u8],
    ) -> Result<(), Failed> {
        self.chunks_in(stream, dst, data)
            .inspect_err(|_| settle(stream))
    }

    /// Copies `out.len()` bytes of device memory at `src` into `out`, after the work
    /// queued on `stream` before, chunk by chunk through the slots.
    pub(super) fn copy_out(
        &mut self,
        stream: &CudaStream,
        src: sys::CUdeviceptr,
        out: &mut [u8],
    ) -> Result<(), Failed> {
        self.chunks_out(stream, src, out)
            .inspect_err(|_| settle(stream))
    }

    fn chunks_in(
        &mut self,
        stream: &CudaStream,
        dst: sys::CUdeviceptr,
        data: &[u8],
    ) -> Result<(), Failed> {
        if data.is_empty() {
            return Ok(());
        }
        let ctx = stream.context();
        let chunk = step(ALLOCATING, self.reserve(ctx, data.len()))?;
        step("binding the CUDA context", ctx.bind_to_thread())?;
        for (i, piece) in data.chunks(chunk).enumerate() {
            let slot = &mut self.slots[i % SLOTS];
            // The DMA that last read this slot (chunk i - SLOTS, or an earlier transfer's)
            // is done; the one of chunk i - 1 may still run meanwhile.
            step(WAITING, slot.done.synchronize())?;
            let staged = &mut slot.memory.bytes_mut()[..piece.len()];
            host_copy(staged, piece);
            let offset = (i * chunk) as u64;
            // SAFETY: `dst + offset` starts `piece.len()` bytes of the destination (the
            // caller's size guarantee); the source is pinned memory of this context that
            // stays valid and unwritten until `done`, recorded next, has passed.
            let queued =
                unsafe { result::memcpy_htod_async(dst + offset, &*staged, stream.cu_stream()) };
            step("cuMemcpyHtoDAsync", queued)?;
            step(RECORDING, slot.done.record(stream))?;
        }
        Ok(())
    }

    fn chunks_out(
        &mut self,
        stream: &CudaStream,
        src: sys::CUdeviceptr,
        out: &mut [u8],
    ) -> Result<(), Failed> {
        if out.is_empty() {
            return Ok(());
        }
        let ctx = stream.context();
        let chunk = step(ALLOCATING, self.reserve(ctx, out.len()))?;
        step("binding the CUDA context", ctx.bind_to_thread())?;
        let chunks = out.len().div_ceil(chunk);
        let total = out.len();
        // Queues the DMA of chunk `i` into slot `i % SLOTS`, whose earlier contents the
        // host has copied out already (or never needed).
        let enqueue = |slots: &mut [Slot], i: usize| -> Result<(), Failed> {
            let start = i * chunk;
            let len = chunk.min(total - start);
            let slot = &mut slots[i % SLOTS];
            let staged = &mut slot.memory.bytes_mut()[..len];
            // SAFETY: `src + start` starts `len` readable device bytes (the caller's size
            // guarantee); the destination is pinned memory of this context that the host
            // reads only after `done`, recorded next, has passed.
            let queued = unsafe {
                result::memcpy_dtoh_async(staged, src + start as u64, stream.cu_stream())
            };
            step("cuMemcpyDtoHAsync", queued)?;
            step(RECORDING, slot.done.record(stream))
        };
        for i in 0..chunks.min(SLOTS) {
            enqueue(&mut self.slots, i)?;
        }
        for (i, piece) in out.chunks_mut(chunk).enumerate() {
            let slot = &self.slots[i % SLOTS];
            step(WAITING, slot.done.synchronize())?;
            host_copy(piece, &slot.memory.bytes()[..piece.len()]);
            // The slot is free again: start the DMA of the chunk after the ones in flight.
            if i + SLOTS < chunks {
                enqueue(&mut self.slots, i + SLOTS)?;
            }
        }
        Ok(())
    }
}

/// After a failed transfer, a DMA may have been queued without its slot's event: wait for
/// the stream, so the slots are idle whatever the events say (its error, if any, is the
/// one already being reported, or a later call's).
fn settle(stream: &CudaStream) {
    let _ = stream.synchronize();
}
