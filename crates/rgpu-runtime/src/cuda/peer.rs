//! Copies between two CUDA devices without rgpu staging them through host memory:
//! `cuMemcpyPeerAsync`, with peer access enabled where the two GPUs allow it (NVLink or
//! PCIe); where they do not, the driver stages the copy itself. Both devices opened on one
//! GPU share its primary context: the copy stays inside its memory.

use std::sync::{Arc, Mutex};

use bytemuck::Pod;
use cudarc::driver::{result, sys, CudaContext, CudaEvent, DevicePtr, DevicePtrMut};

use super::{cuda, memory, memory_mut, pool, CudaDevice, CudaMemory, BACKEND};
use crate::api::{Api, CopyPath};
use crate::buffer::Buffer;
use crate::device::Device;
use crate::error::Error;

/// The peer contexts each context has enabled access to (`cuCtxEnablePeerAccess` says
/// "already enabled" the second time, and costs a driver call).
static ENABLED: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());

fn context(device: &CudaDevice) -> &Arc<CudaContext> {
    device.stream.context()
}

/// How a copy from `from` to `to` goes.
pub(super) fn path(to: &CudaDevice, from: &CudaDevice) -> CopyPath {
    let (to_ctx, from_ctx) = (context(to), context(from));
    if to_ctx.cu_ctx() == from_ctx.cu_ctx() {
        return CopyPath::SameDevice;
    }
    let mut can = 0;
    // SAFETY: two device handles the driver gave; `can` outlives the call.
    let asked =
        unsafe { sys::cuDeviceCanAccessPeer(&mut can, to_ctx.cu_device(), from_ctx.cu_device()) };
    if asked == sys::CUresult::CUDA_SUCCESS && can == 1 {
        CopyPath::Peer
    } else {
        CopyPath::DriverStaged
    }
}

/// Lets `to`'s context read `from`'s memory directly (once per pair).
fn enable_peer_access(to: &Arc<CudaContext>, from: &Arc<CudaContext>) -> Result<(), Error> {
    let key = (to.cu_ctx() as usize, from.cu_ctx() as usize);
    let mut enabled = ENABLED.lock().unwrap_or_else(|e| e.into_inner());
    if enabled.contains(&key) {
        return Ok(());
    }
    to.bind_to_thread()
        .map_err(|e| Error::api_call(BACKEND, "making the context current", e))?;
    // SAFETY: `from`'s context is alive (its device holds it); `to`'s is current.
    let r = unsafe { sys::cuCtxEnablePeerAccess(from.cu_ctx(), 0) };
    match r {
        sys::CUresult::CUDA_SUCCESS | sys::CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED => {
            // Buffers come from each device's memory pool (`cuMemAllocAsync`), which peer
            // access does not cover: each pool is opened to the other GPU too (without it the
            // driver copies pool memory at a tenth of the link's speed).
            if to.has_async_alloc() {
                pool::open_to(from.cu_device(), to.ordinal())?;
                pool::open_to(to.cu_device(), from.ordinal())?;
            }
            enabled.push(key);
            Ok(())
        }
        e => Err(Error::api_call(
            BACKEND,
            "enabling peer access",
            result::DriverError(e),
        )),
    }
}

/// A copy on `to` of `src` (memory of `from`: its whole allocation), after the launches
/// queued on `from`; returns once the copy is done, so `src` may be freed or changed after.
pub(super) fn copy(
    to: &CudaDevice,
    from: &CudaDevice,
    src: &CudaMemory,
) -> Result<CudaMemory, Error> {
    // Not zeroed first: the copy writes every byte.
    let mut dst = to.allocate(src.slice.len(), false)?;
    copy_into(to, from, src, &mut dst)?;
    Ok(dst)
}

/// Copies `src` (memory of `from`) into `dst` (memory of `to`, as large: the callers' buffers
/// are of one length) after the launches queued on both; returns once it is done. (Waiting
/// on the host measured faster for one copy than ordering it by events, which costs a
/// round trip between the GPUs per copy: on 2 x H200 1.20-1.23x `cudaMemcpyPeerAsync` at
/// 16 MiB against 1.03-1.11x, 3.6-3.8x at 1 MiB against 2.3-2.7x; an all-to-all's parts,
/// queued together, take one round of events: [`all_to_all`].)
pub(super) fn copy_into(
    to: &CudaDevice,
    from: &CudaDevice,
    src: &CudaMemory,
    dst: &mut CudaMemory,
) -> Result<(), Error> {
    from.sync()?;
    let bytes = src.slice.len().min(dst.slice.len());
    {
        let (d, _written) = dst.slice.device_ptr_mut(&to.stream);
        let (s, _read) = src.slice.device_ptr(&from.stream);
        let what = "copying from another CUDA device (cuMemcpyPeerAsync)";
        copy_on(to, from, d, s, bytes, what)?;
    }
    to.sync()
}

/// Queues the copy itself on `to`'s stream (peer access enabled first where the two GPUs
/// allow it; `to` and `from` may be one device); the caller orders it.
pub(super) fn copy_on(
    to: &CudaDevice,
    from: &CudaDevice,
    dst: sys::CUdeviceptr,
    src: sys::CUdeviceptr,
    bytes: usize,
    what: &str,
) -> Result<(), Error> {
    if path(to, from) == CopyPath::Peer {
        enable_peer_access(context(to), context(from))?;
    }
    // The stream is `to`'s context's NULL stream: that context must be current.
    context(to)
        .bind_to_thread()
        .map_err(|e| to.failed("binding the CUDA context", e))?;
    // SAFETY: the callers' ranges lie inside allocations of `to` and `from` that stay
    // alive until the copy has run: they are freed on these streams, after it.
    unsafe {
        result::memcpy_peer_async(
            context(to).cu_ctx(),
            dst,
            context(from).cu_ctx(),
            src,
            bytes,
            to.stream.cu_stream(),
        )
    }
    .map_err(|e| to.failed(what, e))
}

/// An event after the work queued on `device` so far.
fn event(device: &CudaDevice) -> Result<CudaEvent, Error> {
    device
        .stream
        .record_event(None)
        .map_err(|e| device.failed("recording an event for another GPU (cuEventRecord)", e))
}

/// Makes `device`'s stream wait for `event` (`cuStreamWaitEvent` takes another GPU's).
fn wait(device: &CudaDevice, event: &CudaEvent) -> Result<(), Error> {
    device
        .stream
        .wait(event)
        .map_err(|e| device.failed("waiting for another GPU's event (cuStreamWaitEvent)", e))
}

/// All to all among CUDA devices of this process, in `Collective::all_to_all`'s layout
/// (`counts[r][q]` elements of `inputs[r]`, its parts in rank order, to `outputs[q]`, packed
/// in rank order), with nothing waiting on the host: an event after every device's queued
/// work first, then each destination's stream waits for its sources' and copies its parts in
/// (the copy engines, each GPU pulling at once, so both directions of a link run together;
/// its own part inside its memory), then every source's stream waits for the copies, so
/// that nothing queued later on a source (a write, a free) overtakes one reading it.
pub(crate) fn all_to_all<T: Pod>(
    devices: &[Device],
    inputs: &[Buffer<T>],
    counts: &[Vec<usize>],
    outputs: &mut [Buffer<T>],
) -> Result<(), Error> {
    let size = std::mem::size_of::<T>();
    let devices: Vec<&CudaDevice> = devices.iter().map(cuda).collect();
    let ready = devices
        .iter()
        .map(|d| event(d))
        .collect::<Result<Vec<_>, _>>()?;
    for (q, (to, output)) in devices.iter().zip(outputs.iter_mut()).enumerate() {
        let (dst, _written) = memory_mut(output).slice.device_ptr_mut(&to.stream);
        let mut at = 0;
        for (r, (from, input)) in devices.iter().zip(inputs).enumerate() {
            let bytes = counts[r][q] * size;
            if bytes > 0 {
                if r != q {
                    wait(to, &ready[r])?;
                }
                let start = counts[r][..q].iter().sum::<usize>() * size;
                let (src, _read) = memory(input).slice.device_ptr(&from.stream);
                let (dst, src) = (dst + at as u64, src + start as u64);
                copy_on(to, from, dst, src, bytes, "copying an all-to-all part")?;
            }
            at += bytes;
        }
    }
    let copied = devices
        .iter()
        .map(|d| event(d))
        .collect::<Result<Vec<_>, _>>()?;
    for (r, from) in devices.iter().enumerate() {
        for (q, done) in copied.iter().enumerate() {
            if q != r {
                wait(from, done)?;
            }
        }
    }
    Ok(())
}
