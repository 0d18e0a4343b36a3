//! Buffers: creating, uploading, writing and downloading.
//!
//! Uploads of up to `DIRECT` bytes take wgpu's own paths, which need no submission of
//! their own: a new buffer is written while mapped at creation, a write goes through
//! `Queue::write_buffer_with`. Larger uploads, and every download, go through staging
//! buffers the device keeps and reuses (`Staging`): two `MAP_WRITE` buffers for uploads,
//! two `MAP_READ` buffers for downloads, of up to `CHUNK` bytes each. The data moves in
//! chunks, each copy submitted on its own (the first one with the queued launches), so the
//! host copy into or out of one buffer overlaps the GPU copy of the other; a buffer is
//! mapped again as soon as its copy is submitted, and its next use waits for that.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::MutexGuard;
use std::time::Duration;

use super::batch::Region;
use super::{WgpuDevice, BACKEND};
use crate::api::Api;
use crate::common::copy::{host_copy, host_copy_to_mapping};
use crate::common::wgpu_device::pop;
use crate::error::Error;

/// The most bytes a staging buffer holds: the chunk size of large transfers.
const CHUNK: u64 = 8 << 20;
/// The smallest staging buffer made.
const MIN_STAGE: u64 = 64 << 10;
/// Uploads up to this size take wgpu's own paths (no submission, and no wait for an
/// earlier copy through the staging buffer); above it, the reused staging buffers are
/// faster (lavapipe: 0.03 against 0.04 ms at 64 KiB, 0.04 against 0.17 ms at 256 KiB,
/// 10 against 45 ms at 64 MiB).
const DIRECT: usize = 64 << 10;

/// A wgpu buffer's memory: whole words, at least one.
pub(crate) struct WgpuMemory {
    pub(super) buffer: wgpu::Buffer,
    /// Unique in the process (never reused): what the kept bind groups are keyed by.
    pub(super) id: u64,
}

impl WgpuMemory {
    pub(super) fn new(buffer: wgpu::Buffer) -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        Self {
            buffer,
            id: NEXT.fetch_add(1, Ordering::Relaxed),
        }
    }
}

/// One staging buffer, and the mapping requested after its last copy was submitted.
struct Stage {
    buffer: wgpu::Buffer,
    /// `None`: an upload buffer is mapped, a readback buffer unmapped and idle.
    mapping: Option<Mapping>,
}

struct Mapping {
    done: mpsc::Receiver<Result<(), wgpu::BufferAsyncError>>,
    /// The submission whose copy uses the buffer: the mapping completes after it.
    after: wgpu::SubmissionIndex,
}

/// The device's staging buffers (none until a transfer needs them).
#[derive(Default)]
pub(super) struct Staging {
    uploads: Vec<Stage>,
    readbacks: Vec<Stage>,
}

/// Part of a download: `len` bytes at `offset` of read `read`, staged at `at`.
struct Piece {
    read: usize,
    offset: usize,
    len: usize,
    at: u64,
}

fn padded(len: usize) -> u64 {
    (len as u64).next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT)
}

impl WgpuDevice {
    fn staging(&self) -> MutexGuard<'_, Staging> {
        // A panic under the lock may leave a stage in an unknown state: start over.
        self.staging.lock().unwrap_or_else(|e| {
            let mut staging = e.into_inner();
            *staging = Staging::default();
            staging
        })
    }

    /// A new buffer holding `data`.
    pub(super) fn upload(&self, data: &[u8]) -> Result<WgpuMemory, Error> {
        if data.len() > DIRECT {
            let memory = WgpuMemory::new(self.gpu.storage(data.len(), false)?);
            self.stage_in(&memory.buffer, 0, data)?;
            return Ok(memory);
        }
        Ok(WgpuMemory::new(self.gpu.storage_with(data)?))
    }

    /// A new buffer of zeros (wgpu zeroes new buffers).
    pub(super) fn zeros(&self, bytes: usize) -> Result<WgpuMemory, Error> {
        Ok(WgpuMemory::new(self.gpu.storage(bytes, false)?))
    }

    /// Replaces the bytes of `memory` from `offset` (4-aligned) with `data`, after the
    /// queued launches.
    pub(super) fn write(&self, memory: &WgpuMemory, offset: u64, data: &[u8]) -> Result<(), Error> {
        if data.len() > DIRECT {
            // The first chunk's copy is submitted after the queued launches.
            return self.stage_in(&memory.buffer, offset, data);
        }
        // Queued launches must see the old contents: submit them first (a queue write
        // lands before the command buffers of the next submission).
        self.flush()?;
        let Some(size) = wgpu::BufferSize::new(padded(data.len())) else {
            return Ok(());
        };
        let scope = self
            .gpu
            .device
            .push_error_scope(wgpu::ErrorFilter::Validation);
        let view = self
            .gpu
            .queue
            .write_buffer_with(&memory.buffer, offset, size);
        if let Some(mut view) = view {
            let (mut head, mut tail) = view.slice(..).split_at(data.len());
            head.copy_from_slice(data);
            tail.fill(0);
        }
        match pop(scope) {
            None => Ok(()),
            Some(e) => Err(Error::api_call(BACKEND, "writing a buffer", e)),
        }
    }

    /// Copies each buffer's bytes from its offset (4-aligned) into its `out`, after every
    /// queued launch.
    pub(super) fn download(
        &self,
        reads: &mut [(&WgpuMemory, u64, &mut [u8])],
    ) -> Result<(), Error> {
        let total: u64 = reads.iter().map(|(_, _, out)| padded(out.len())).sum();
        if total == 0 {
            return self.sync();
        }
        let mut staging = self.staging();
        let result = self.stage_out(&mut staging.readbacks, reads, total);
        if result.is_err() {
            // A stage may be left half way (unmapped, or mapping): start over next time.
            staging.readbacks.clear();
        }
        result
    }

    /// Two staging buffers of `usage` holding at least `min(bytes, CHUNK)` each (made
    /// anew, to a power of two, when the ones there are smaller); returns their size.
    fn stages(
        &self,
        stages: &mut Vec<Stage>,
        bytes: u64,
        usage: wgpu::BufferUsages,
    ) -> Result<u64, Error> {
        let want = bytes.clamp(MIN_STAGE, CHUNK).next_power_of_two();
        if let Some(stage) = stages.first() {
            if stage.buffer.size() >= want {
                return Ok(stage.buffer.size());
            }
        }
        // wgpu keeps dropped buffers alive while submitted copies use them.
        stages.clear();
        let write = usage.contains(wgpu::BufferUsages::MAP_WRITE);
        for _ in 0..2 {
            let buffer = self.gpu.buffer(want as usize, usage, write)?;
            stages.push(Stage {
                buffer,
                mapping: None,
            });
        }
        Ok(want)
    }

    /// Waits until `stage`'s requested mapping is done (if one is pending).
    fn mapped(&self, stage: &mut Stage) -> Result<(), Error> {
        let Some(mapping) = stage.mapping.take() else {
            return Ok(());
        };
        self.gpu.wait_for(Some(mapping.after))?;
        let done = match mapping.done.try_recv() {
            Ok(done) => done,
            // Callbacks run in poll: one that waits for everything runs this one too, unless
            // another thread's poll took it and is about to run it (several threads on one
            // device): then it arrives shortly.
            Err(_) => {
                self.wait()?;
                let limit = self.gpu.timeout.unwrap_or(Duration::from_secs(60));
                mapping.done.recv_timeout(limit).map_err(|_| {
                    self.gpu.explain(
                        "mapping a staging buffer",
                        "it never mapped: the GPU may be lost",
                    )
                })?
            }
        };
        done.map_err(|e| self.gpu.explain("mapping a staging buffer", e))
    }

    /// Asks for `stage` to be mapped again once submission `after` is done.
    fn map_after(stage: &mut Stage, mode: wgpu::MapMode, after: wgpu::SubmissionIndex) {
        let (sender, done) = mpsc::channel();
        stage.buffer.map_async(mode, .., move |r| {
            let _ = sender.send(r);
        });
        stage.mapping = Some(Mapping { done, after });
    }

    /// Copies `data` into `buffer` from byte `offset` through the upload stages, chunk by
    /// chunk, after the queued launches.
    fn stage_in(&self, buffer: &wgpu::Buffer, offset: u64, data: &[u8]) -> Result<(), Error> {
        let mut staging = self.staging();
        let result = self.stage_in_chunks(&mut staging.uploads, buffer, offset, data);
        if result.is_err() {
            staging.uploads.clear();
        }
        result
    }

    fn stage_in_chunks(
        &self,
        stages: &mut Vec<Stage>,
        buffer: &wgpu::Buffer,
        offset: u64,
        data: &[u8],
    ) -> Result<(), Error> {
        let usage = wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC;
        let chunk = self.stages(stages, padded(data.len()), usage)?;
        for (i, piece) in data.chunks(chunk as usize).enumerate() {
            let stage = &mut stages[i % 2];
            // Its copy of chunk i - 2 is done (the one of chunk i - 1 may still run).
            self.mapped(stage)?;
            let size = padded(piece.len());
            {
                let mut view = stage
                    .buffer
                    .get_mapped_range_mut(..size)
                    .map_err(|e| Error::api_call(BACKEND, "writing a staging buffer", e))?;
                let (head, mut tail) = view.slice(..).split_at(piece.len());
                host_copy_to_mapping(head, piece);
                tail.fill(0);
            }
            stage.buffer.unmap();
            let index = self.submit(&[Region {
                source: &stage.buffer,
                source_offset: 0,
                destination: buffer,
                destination_offset: offset + i as u64 * chunk,
                size,
            }])?;
            if let Some(index) = index {
                Self::map_after(stage, wgpu::MapMode::Write, index);
            }
        }
        Ok(())
    }

    /// Copies each read's buffer into its `out` through the readback stages: the reads
    /// split into pieces of at most a chunk, packed into chunks, each chunk one submission.
    fn stage_out(
        &self,
        stages: &mut Vec<Stage>,
        reads: &mut [(&WgpuMemory, u64, &mut [u8])],
        total: u64,
    ) -> Result<(), Error> {
        let usage = wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST;
        let chunk = self.stages(stages, total, usage)?;
        let mut chunks: Vec<Vec<Piece>> = vec![Vec::new()];
        let mut used = 0u64;
        for (read, (_, _, out)) in reads.iter().enumerate() {
            for offset in (0..out.len()).step_by(chunk as usize) {
                let len = (out.len() - offset).min(chunk as usize);
                if used + padded(len) > chunk {
                    chunks.push(Vec::new());
                    used = 0;
                }
                let at = used;
                used += padded(len);
                if let Some(last) = chunks.last_mut() {
                    last.push(Piece {
                        read,
                        offset,
                        len,
                        at,
                    });
                }
            }
        }
        let sources: Vec<(&wgpu::Buffer, u64)> = reads
            .iter()
            .map(|&(memory, at, _)| (&memory.buffer, at))
            .collect();
        // Queues the copies of chunk `c` into stage `c % 2` (unmapped and idle).
        let enqueue = |stages: &mut [Stage], c: usize| -> Result<(), Error> {
            let stage = &mut stages[c % 2];
            let regions: Vec<Region<'_>> = chunks[c]
                .iter()
                .map(|p| Region {
                    source: sources[p.read].0,
                    source_offset: sources[p.read].1 + p.offset as u64,
                    destination: &stage.buffer,
                    destination_offset: p.at,
                    size: padded(p.len),
                })
                .collect();
            if let Some(index) = self.submit(&regions)? {
                Self::map_after(stage, wgpu::MapMode::Read, index);
            }
            Ok(())
        };
        for c in 0..chunks.len().min(2) {
            enqueue(stages, c)?;
        }
        for c in 0..chunks.len() {
            let stage = &mut stages[c % 2];
            self.mapped(stage)?;
            {
                let view = stage
                    .buffer
                    .get_mapped_range(..)
                    .map_err(|e| Error::api_call(BACKEND, "reading a staging buffer", e))?;
                for p in &chunks[c] {
                    let staged = &view[p.at as usize..][..p.len];
                    host_copy(&mut reads[p.read].2[p.offset..][..p.len], staged);
                }
            }
            stage.buffer.unmap();
            if c + 2 < chunks.len() {
                enqueue(stages, c + 2)?;
            }
        }
        Ok(())
    }
}
