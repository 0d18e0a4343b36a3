//! Uploads and downloads through the two staging buffers (`memory::Direction`), both kept
//! mapped and reused.
//!
//! Up to `CHUNK` bytes, an upload is copied into the free part of the upload buffer and
//! its copy recorded into the open batch: nothing is submitted, and the copy runs in order
//! with the launches queued around it. A download of up to `CHUNK` bytes (all its buffers
//! together) records its copies into the batch, submits it and copies out of the readback
//! buffer. Larger transfers submit the batch first, then move the data in `CHUNK`-byte
//! pieces through the two halves of a staging buffer, each piece copied by a command buffer
//! with a fence of its own, so the host copy of one piece overlaps the GPU copy of the
//! other. Every function here returns with the GPU done with the staging memory it used
//! (or, for batched uploads, with the batch holding it).

use ash::vk;

use super::context::Context;
use super::memory::Direction;
use super::{begin_one_time, AshMemory, BACKEND};
use crate::common::copy::host_copy;
use crate::error::Error;

/// The most one batched transfer moves, and the size of a staging half for larger ones.
pub(super) const CHUNK: u64 = 8 << 20;
/// Staging offsets are aligned to this (a common `optimalBufferCopyOffsetAlignment`).
const ALIGN: u64 = 256;

/// Whether the open batch may use an upload's destination.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Target {
    /// Allocated for this upload: no recorded command touches it.
    New,
    /// A live buffer: the copy must come after the batch's commands that use it.
    Live,
}

/// Copies `data` into `memory` from byte `at` (the buffer holds at least `at + data.len()`
/// bytes), after the launches queued before: recorded into the batch when small, else now.
pub(super) fn copy_in(
    c: &mut Context,
    memory: &AshMemory,
    at: u64,
    data: &[u8],
    target: Target,
) -> Result<(), Error> {
    if data.is_empty() {
        return Ok(());
    }
    let len = data.len() as u64;
    if len > CHUNK {
        return copy_in_chunks(c, memory, at, data);
    }
    if c.batch.is_none() {
        // Nothing recorded reads the upload buffer (a failed call may have left a mark).
        c.upload_used = 0;
    }
    let capacity = c.upload_staging.as_ref().map_or(0, |s| s.allocation.size);
    let mut want = c.upload_used + len;
    if want > capacity {
        // The batch's copies read the part used so far: run them, then start over in a
        // buffer that holds this batch's uploads (up to two chunks) the next time.
        c.submit_batch()?;
        want = want.min(2 * CHUNK);
    }
    let offset = c.upload_used;
    let (staging, ptr) = c.staging(Direction::Upload, want.max(offset + len))?;
    // SAFETY: the mapping holds at least `offset + len` bytes; no recorded copy reads from
    // `offset` on (the batch's copies read below `upload_used`), and nothing else
    // references the mapping while the context is locked.
    let staged =
        unsafe { std::slice::from_raw_parts_mut(ptr.as_ptr().add(offset as usize), data.len()) };
    host_copy(staged, data);
    c.upload_used = (offset + len).next_multiple_of(ALIGN);
    let cb = c.batch()?;
    if target == Target::Live {
        c.barrier(
            vk::PipelineStageFlags::TRANSFER,
            vk::AccessFlags::TRANSFER_WRITE,
        );
    }
    let region = [vk::BufferCopy::default()
        .src_offset(offset)
        .dst_offset(at)
        .size(len)];
    // SAFETY: recording; both buffers are live (the destination until the batch ran:
    // dropped buffers wait for it) and large enough.
    unsafe {
        c.device
            .cmd_copy_buffer(cb, staging, memory.buffer, &region)
    };
    if let Some(batch) = c.batch.as_mut() {
        batch.transfer_writes = true;
    }
    Ok(())
}

/// `copy_in` for more than `CHUNK` bytes: submits the batch, then copies piece by piece.
fn copy_in_chunks(c: &mut Context, memory: &AshMemory, at: u64, data: &[u8]) -> Result<(), Error> {
    c.submit_batch()?;
    let (staging, ptr) = c.staging(Direction::Upload, 2 * CHUNK)?;
    let mut chunks = Chunks::new(c);
    for (i, piece) in data.chunks(CHUNK as usize).enumerate() {
        let half = i % 2;
        // The GPU copy that last read this half is done (the other one may still run).
        chunks.wait(half)?;
        let staged_at = half as u64 * CHUNK;
        // SAFETY: the mapping holds two halves of `CHUNK` bytes; the GPU no longer reads
        // this one, and nothing else references the mapping while the context is locked.
        let staged = unsafe {
            std::slice::from_raw_parts_mut(ptr.as_ptr().add(staged_at as usize), piece.len())
        };
        host_copy(staged, piece);
        let region = [vk::BufferCopy::default()
            .src_offset(staged_at)
            .dst_offset(at + i as u64 * CHUNK)
            .size(piece.len() as u64)];
        chunks.submit(half, |d, cb| {
            // SAFETY: recording; both buffers are live and large enough (the destination
            // holds `data.len()` bytes).
            unsafe {
                earlier_writes(d, cb, vk::AccessFlags::TRANSFER_WRITE);
                d.cmd_copy_buffer(cb, staging, memory.buffer, &region);
            }
        })?;
    }
    chunks.finish()
}

/// Copies each buffer's bytes from its offset into its `out`, after every queued launch.
pub(super) fn copy_out(
    c: &mut Context,
    reads: &mut [(&AshMemory, u64, &mut [u8])],
) -> Result<(), Error> {
    let mut offsets = Vec::with_capacity(reads.len());
    let mut total = 0u64;
    for (_, _, out) in reads.iter() {
        offsets.push(total);
        total += (out.len() as u64).next_multiple_of(ALIGN);
    }
    if total > CHUNK {
        return copy_out_chunks(c, reads);
    }
    if total == 0 {
        // Nothing to copy, but reads come after the queued launches.
        return c.submit_batch();
    }
    let (staging, ptr) = c.staging(Direction::Readback, total)?;
    let cb = c.batch()?;
    c.barrier(
        vk::PipelineStageFlags::TRANSFER,
        vk::AccessFlags::TRANSFER_READ,
    );
    for ((memory, at, out), &offset) in reads.iter().zip(&offsets) {
        if out.is_empty() {
            continue;
        }
        let region = [vk::BufferCopy::default()
            .src_offset(*at)
            .dst_offset(offset)
            .size(out.len() as u64)];
        // SAFETY: recording; both buffers are live and large enough.
        unsafe {
            c.device
                .cmd_copy_buffer(cb, memory.buffer, staging, &region)
        };
    }
    // SAFETY: recording.
    unsafe { to_host(&c.device, cb) };
    c.submit_batch()?;
    for ((_, _, out), &offset) in reads.iter_mut().zip(&offsets) {
        // SAFETY: the submission finished; the staging range holds `out.len()` bytes at
        // `offset`, inside the mapping, which nothing else references while the context is
        // locked.
        let staged =
            unsafe { std::slice::from_raw_parts(ptr.as_ptr().add(offset as usize), out.len()) };
        host_copy(out, staged);
    }
    Ok(())
}

/// `copy_out` for more than `CHUNK` bytes: submits the batch, then copies each buffer
/// piece by piece.
fn copy_out_chunks(
    c: &mut Context,
    reads: &mut [(&AshMemory, u64, &mut [u8])],
) -> Result<(), Error> {
    c.submit_batch()?;
    let (staging, ptr) = c.staging(Direction::Readback, 2 * CHUNK)?;
    let mut chunks = Chunks::new(c);
    for (memory, at, out) in reads.iter_mut() {
        let at = *at;
        let total = out.len();
        let pieces = total.div_ceil(CHUNK as usize);
        let piece_len = |i: usize| (total - i * CHUNK as usize).min(CHUNK as usize);
        // Queues the GPU copy of piece `i` into half `i % 2` (which the host has read).
        let submit = |chunks: &mut Chunks<'_>, i: usize| {
            let region = [vk::BufferCopy::default()
                .src_offset(at + i as u64 * CHUNK)
                .dst_offset((i % 2) as u64 * CHUNK)
                .size(piece_len(i) as u64)];
            chunks.submit(i % 2, |d, cb| {
                // SAFETY: recording; both buffers are live and large enough.
                unsafe {
                    earlier_writes(d, cb, vk::AccessFlags::TRANSFER_READ);
                    d.cmd_copy_buffer(cb, memory.buffer, staging, &region);
                    to_host(d, cb);
                }
            })
        };
        for i in 0..pieces.min(2) {
            submit(&mut chunks, i)?;
        }
        for (i, piece) in out.chunks_mut(CHUNK as usize).enumerate() {
            chunks.wait(i % 2)?;
            // SAFETY: that half's copy finished; it holds `piece.len()` bytes, inside the
            // mapping, which nothing else references while the context is locked.
            let staged = unsafe {
                std::slice::from_raw_parts(ptr.as_ptr().add((i % 2) * CHUNK as usize), piece.len())
            };
            host_copy(piece, staged);
            if i + 2 < pieces {
                submit(&mut chunks, i + 2)?;
            }
        }
    }
    chunks.finish()
}

/// Makes the writes of earlier submissions (launches, fills, copies) visible to a transfer
/// `access` that follows.
///
/// # Safety
/// `cb` is recording.
unsafe fn earlier_writes(d: &ash::Device, cb: vk::CommandBuffer, access: vk::AccessFlags) {
    let barrier = [vk::MemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::TRANSFER_WRITE)
        .dst_access_mask(access)];
    // SAFETY: the caller guarantees `cb` is recording.
    unsafe {
        d.cmd_pipeline_barrier(
            cb,
            vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::TRANSFER,
            vk::PipelineStageFlags::TRANSFER,
            vk::DependencyFlags::empty(),
            &barrier,
            &[],
            &[],
        )
    };
}

/// Makes copies into a staging buffer visible to the host (after the fence).
///
/// # Safety
/// `cb` is recording.
unsafe fn to_host(d: &ash::Device, cb: vk::CommandBuffer) {
    let barrier = [vk::MemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
        .dst_access_mask(vk::AccessFlags::HOST_READ)];
    // SAFETY: the caller guarantees `cb` is recording.
    unsafe {
        d.cmd_pipeline_barrier(
            cb,
            vk::PipelineStageFlags::TRANSFER,
            vk::PipelineStageFlags::HOST,
            vk::DependencyFlags::empty(),
            &barrier,
            &[],
            &[],
        )
    };
}

/// The two chunk command buffers, each submitted with its own fence. Whatever is still in
/// flight is waited for when this is dropped, so the GPU is done with the staging memory
/// however a transfer ends.
struct Chunks<'a> {
    c: &'a Context,
    in_flight: [bool; 2],
}

impl<'a> Chunks<'a> {
    /// Both command buffers are idle: every `Chunks` waits for its submissions.
    fn new(c: &'a Context) -> Self {
        Self {
            c,
            in_flight: [false; 2],
        }
    }

    /// Records `record` into command buffer `k` (idle) and submits it with fence `k`,
    /// without waiting.
    fn submit(
        &mut self,
        k: usize,
        record: impl FnOnce(&ash::Device, vk::CommandBuffer),
    ) -> Result<(), Error> {
        let (d, cb) = (&self.c.device, self.c.chunk_commands[k]);
        // SAFETY: command buffer `k` is idle (never submitted, or its fence was waited for
        // by `wait`); its fence is unsignalled (reset after each wait).
        unsafe {
            begin_one_time(d, cb)?;
            record(d, cb);
            d.end_command_buffer(cb)
                .map_err(|e| Error::api_call(BACKEND, "vkEndCommandBuffer", e))?;
            let cbs = [cb];
            let submit = [vk::SubmitInfo::default().command_buffers(&cbs)];
            d.queue_submit(self.c.queue, &submit, self.c.chunk_fences[k])
                .map_err(|e| self.c.failed("vkQueueSubmit", e))?;
        }
        self.in_flight[k] = true;
        Ok(())
    }

    /// Waits for command buffer `k`'s submission, if any.
    fn wait(&mut self, k: usize) -> Result<(), Error> {
        if !std::mem::take(&mut self.in_flight[k]) {
            return Ok(());
        }
        self.c.wait_fence(self.c.chunk_fences[k])
    }

    /// Waits for both.
    fn finish(mut self) -> Result<(), Error> {
        let first = self.wait(0);
        let second = self.wait(1);
        first.and(second)
    }
}

impl Drop for Chunks<'_> {
    fn drop(&mut self) {
        // After an error: the error being returned is the one to report.
        let _ = self.wait(0);
        let _ = self.wait(1);
    }
}
