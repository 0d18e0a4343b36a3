//! Uploads and downloads through the staging buffer (one function each, so faster paths,
//! such as mapped device memory, can replace them).

use ash::vk;

use super::context::Context;
use super::AshMemory;
use crate::error::Error;
use crate::vulkan::padded_bytes;

/// Copies `data` into the start of `memory` through the staging buffer, now. The open
/// batch must not use `memory` (submit it first otherwise).
pub(super) fn copy_in(c: &mut Context, memory: &AshMemory, data: &[u8]) -> Result<(), Error> {
    if data.is_empty() {
        return Ok(());
    }
    let size = padded_bytes(data.len());
    let (staging, ptr) = {
        let s = c.staging(size)?;
        (s.allocation.buffer, s.ptr)
    };
    // SAFETY: the staging memory is mapped, coherent, at least `size` bytes, and idle
    // (every use waits for its submission).
    unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), ptr.as_ptr(), data.len()) };
    let target = memory.buffer;
    c.transfer(|d, cb| {
        let region = [vk::BufferCopy::default().size(size)];
        // SAFETY: recording; both buffers are live and at least `size` bytes.
        unsafe { d.cmd_copy_buffer(cb, staging, target, &region) };
    })
}

/// Copies the start of each buffer into its `out`, after the open batch: records the
/// copies into it, submits it and waits.
pub(super) fn copy_out(
    c: &mut Context,
    reads: &mut [(&AshMemory, &mut [u8])],
) -> Result<(), Error> {
    let mut offsets = Vec::with_capacity(reads.len());
    let mut total = 0u64;
    for (_, out) in reads.iter() {
        offsets.push(total);
        total += padded_bytes(out.len());
    }
    let (staging, ptr) = {
        let s = c.staging(total)?;
        (s.allocation.buffer, s.ptr)
    };
    let cb = c.batch()?;
    c.barrier(
        vk::PipelineStageFlags::TRANSFER,
        vk::AccessFlags::TRANSFER_READ,
    );
    for ((memory, out), &offset) in reads.iter().zip(&offsets) {
        let region = [vk::BufferCopy::default()
            .dst_offset(offset)
            .size(padded_bytes(out.len()))];
        // SAFETY: recording; both buffers are live and large enough.
        unsafe {
            c.device
                .cmd_copy_buffer(cb, memory.buffer, staging, &region)
        };
    }
    let to_host = [vk::MemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
        .dst_access_mask(vk::AccessFlags::HOST_READ)];
    // SAFETY: recording.
    unsafe {
        c.device.cmd_pipeline_barrier(
            cb,
            vk::PipelineStageFlags::TRANSFER,
            vk::PipelineStageFlags::HOST,
            vk::DependencyFlags::empty(),
            &to_host,
            &[],
            &[],
        );
    }
    c.submit_batch()?;
    for ((_, out), &offset) in reads.iter_mut().zip(&offsets) {
        // SAFETY: the submission finished; the staging range holds `out.len()` bytes at
        // `offset`, inside the mapping.
        unsafe {
            std::ptr::copy_nonoverlapping(
                ptr.as_ptr().add(offset as usize),
                out.as_mut_ptr(),
                out.len(),
            );
        }
    }
    Ok(())
}
