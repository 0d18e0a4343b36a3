//! Buffers: creating, uploading, writing and downloading (one function each, so faster
//! paths can replace them).

use std::sync::mpsc;

use super::{pop, transfer, WgpuDevice, BACKEND};
use crate::error::Error;
use crate::vulkan::padded_bytes;

/// A wgpu buffer's memory: whole words, at least one.
pub(crate) struct WgpuMemory {
    pub(super) buffer: wgpu::Buffer,
}

impl WgpuDevice {
    fn new_buffer(&self, bytes: usize, mapped: bool) -> Result<wgpu::Buffer, Error> {
        let size = padded_bytes(bytes);
        if size > self.limits.max_buffer_size {
            return Err(Error::OutOfMemory {
                backend: BACKEND,
                bytes: bytes as u64,
                reason: format!(
                    "the device's largest buffer is {} bytes",
                    self.limits.max_buffer_size
                ),
            });
        }
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let buffer = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("rgpu buffer"),
            size,
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: mapped,
        });
        match pop(scope) {
            None => Ok(buffer),
            Some(reason) => Err(Error::OutOfMemory {
                backend: BACKEND,
                bytes: bytes as u64,
                reason,
            }),
        }
    }

    /// A new buffer holding `data` (written while mapped at creation: no queue involved).
    pub(crate) fn upload(&self, data: &[u8]) -> Result<WgpuMemory, Error> {
        let buffer = self.new_buffer(data.len(), true)?;
        {
            let mut view = buffer
                .get_mapped_range_mut(..)
                .map_err(|e| transfer(format!("writing a new buffer: {e}")))?;
            view.slice(..data.len()).copy_from_slice(data);
        }
        buffer.unmap();
        Ok(WgpuMemory { buffer })
    }

    /// A new buffer of zeros (wgpu zeroes new buffers).
    pub(crate) fn zeros(&self, bytes: usize) -> Result<WgpuMemory, Error> {
        Ok(WgpuMemory {
            buffer: self.new_buffer(bytes, false)?,
        })
    }

    /// Replaces the start of `memory` with `data`, after the queued launches.
    pub(crate) fn write(&self, memory: &WgpuMemory, data: &[u8]) -> Result<(), Error> {
        // Queued launches must see the old contents: submit them first (a queue write
        // lands before the command buffers of the next submission).
        self.flush()?;
        if data.is_empty() {
            return Ok(());
        }
        let mut padded = data.to_vec();
        padded.resize(data.len().next_multiple_of(4), 0);
        self.queue.write_buffer(&memory.buffer, 0, &padded);
        Ok(())
    }

    /// Copies the start of each buffer into its `out`, after every queued launch.
    pub(crate) fn download(&self, reads: &mut [(&WgpuMemory, &mut [u8])]) -> Result<(), Error> {
        let readbacks: Vec<wgpu::Buffer> = reads
            .iter()
            .map(|(_, out)| {
                self.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("rgpu readback"),
                    size: padded_bytes(out.len()),
                    usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                })
            })
            .collect();
        let copies: Vec<(&wgpu::Buffer, &wgpu::Buffer)> = reads
            .iter()
            .zip(&readbacks)
            .map(|((memory, _), readback)| (&memory.buffer, readback))
            .collect();
        self.submit(&copies)?;
        let (sender, receiver) = mpsc::channel();
        for readback in &readbacks {
            let sender = sender.clone();
            readback.map_async(wgpu::MapMode::Read, .., move |r| {
                let _ = sender.send(r);
            });
        }
        drop(sender);
        self.wait()?;
        let mapped: Vec<_> = receiver.iter().collect();
        if mapped.len() != readbacks.len() {
            return Err(transfer(
                "a readback never finished: the GPU may have been lost",
            ));
        }
        for r in mapped {
            r.map_err(|e| transfer(format!("mapping a readback buffer: {e}")))?;
        }
        for ((_, out), readback) in reads.iter_mut().zip(&readbacks) {
            {
                let view = readback
                    .get_mapped_range(..)
                    .map_err(|e| transfer(format!("reading a readback buffer: {e}")))?;
                out.copy_from_slice(&view[..out.len()]);
            }
            readback.unmap();
        }
        Ok(())
    }
}
