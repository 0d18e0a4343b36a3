//! Buffers and their memory: device-local storage buffers, and the two host-visible
//! staging buffers that uploads and downloads go through (kept, mapped, and reused).

use std::ptr::NonNull;

use ash::vk;

use super::context::{Allocation, Context, Staging};
use super::BACKEND;
use crate::error::Error;

/// Which staging buffer: each direction has its own, in the memory that suits it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Direction {
    /// Host-visible, coherent memory (on a discrete GPU: system memory the GPU reads
    /// over PCIe, typically write-combined: fast for the host to write).
    Upload,
    /// Host-cached memory where the device has it (fast for the host to read back), else
    /// as `Upload`.
    Readback,
}

impl Direction {
    /// Memory properties, most wanted first.
    fn preferences(self) -> &'static [vk::MemoryPropertyFlags] {
        const COHERENT: vk::MemoryPropertyFlags = vk::MemoryPropertyFlags::from_raw(
            vk::MemoryPropertyFlags::HOST_VISIBLE.as_raw()
                | vk::MemoryPropertyFlags::HOST_COHERENT.as_raw(),
        );
        const CACHED: vk::MemoryPropertyFlags = vk::MemoryPropertyFlags::from_raw(
            COHERENT.as_raw() | vk::MemoryPropertyFlags::HOST_CACHED.as_raw(),
        );
        match self {
            Direction::Upload => &[COHERENT],
            Direction::Readback => &[CACHED, COHERENT],
        }
    }
}

/// Usage of every storage buffer.
const STORAGE_USAGE: vk::BufferUsageFlags = vk::BufferUsageFlags::from_raw(
    vk::BufferUsageFlags::STORAGE_BUFFER.as_raw()
        | vk::BufferUsageFlags::TRANSFER_SRC.as_raw()
        | vk::BufferUsageFlags::TRANSFER_DST.as_raw(),
);

impl Context {
    fn memory_type(&self, bits: u32, flags: vk::MemoryPropertyFlags) -> Option<u32> {
        (0..self.memory_types.memory_type_count).find(|&i| {
            bits & (1 << i) != 0
                && self.memory_types.memory_types[i as usize]
                    .property_flags
                    .contains(flags)
        })
    }

    /// Frees `memory` now, or after the open batch (which may use it).
    pub(super) fn discard(&mut self, memory: Allocation) {
        if self.lost.is_lost() {
            // The GPU may still run a kernel on it: leaked, as the whole device is.
            return;
        }
        self.forget_bound_sets(memory.buffer);
        if self.batch.is_some() {
            self.garbage.push(memory);
        } else {
            // SAFETY: no batch is open and every submission was waited for.
            unsafe { memory.free(&self.device) };
        }
    }

    /// A device-local storage buffer of `size` bytes (any memory the buffer may use where
    /// the device has no device-local memory for it).
    pub(super) fn allocate_storage(&self, size: u64) -> Result<Allocation, Error> {
        self.allocate(
            size,
            STORAGE_USAGE,
            &[
                vk::MemoryPropertyFlags::DEVICE_LOCAL,
                vk::MemoryPropertyFlags::empty(),
            ],
        )
    }

    /// A buffer of `size` bytes in the first memory type that has one of `preferences`
    /// (in order).
    fn allocate(
        &self,
        size: u64,
        usage: vk::BufferUsageFlags,
        preferences: &[vk::MemoryPropertyFlags],
    ) -> Result<Allocation, Error> {
        let out_of_memory = |reason: String| Error::out_of_memory(BACKEND, size, reason);
        let d = &self.device;
        // SAFETY: valid create infos on a live device; freed on the error paths.
        unsafe {
            let buffer = d
                .create_buffer(
                    &vk::BufferCreateInfo::default()
                        .size(size)
                        .usage(usage)
                        .sharing_mode(vk::SharingMode::EXCLUSIVE),
                    None,
                )
                .map_err(|e| out_of_memory(format!("vkCreateBuffer: {e}")))?;
            let req = d.get_buffer_memory_requirements(buffer);
            let type_index = preferences
                .iter()
                .find_map(|&flags| self.memory_type(req.memory_type_bits, flags));
            let Some(type_index) = type_index else {
                d.destroy_buffer(buffer, None);
                return Err(out_of_memory(format!(
                    "the device has no {:?} memory for it",
                    preferences.first().copied().unwrap_or_default()
                )));
            };
            let memory = match d.allocate_memory(
                &vk::MemoryAllocateInfo::default()
                    .allocation_size(req.size)
                    .memory_type_index(type_index),
                None,
            ) {
                Ok(m) => m,
                Err(e) => {
                    d.destroy_buffer(buffer, None);
                    return Err(out_of_memory(format!("vkAllocateMemory: {e}")));
                }
            };
            if let Err(e) = d.bind_buffer_memory(buffer, memory, 0) {
                d.destroy_buffer(buffer, None);
                d.free_memory(memory, None);
                return Err(out_of_memory(format!("vkBindBufferMemory: {e}")));
            }
            Ok(Allocation {
                buffer,
                memory,
                size,
            })
        }
    }

    fn staging_slot(&mut self, direction: Direction) -> &mut Option<Staging> {
        match direction {
            Direction::Upload => &mut self.upload_staging,
            Direction::Readback => &mut self.readback_staging,
        }
    }

    /// The staging buffer of `direction` and its mapping, at least `size` bytes (grown to
    /// a power of two, at least 64 KiB). Growing frees the old one: the caller makes sure
    /// the GPU no longer uses it (uploads recorded into the open batch use the upload
    /// buffer until the batch is submitted).
    pub(super) fn staging(
        &mut self,
        direction: Direction,
        size: u64,
    ) -> Result<(vk::Buffer, NonNull<u8>), Error> {
        if let Some(s) = self.staging_slot(direction) {
            if s.allocation.size >= size {
                return Ok((s.allocation.buffer, s.ptr));
            }
        }
        if let Some(old) = self.staging_slot(direction).take() {
            // SAFETY: the caller guarantees the GPU no longer uses it.
            unsafe { old.free(&self.device) };
        }
        let size = size.max(1 << 16).next_power_of_two();
        let allocation = self.allocate(
            size,
            vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST,
            direction.preferences(),
        )?;
        // SAFETY: host-visible memory of this device, not mapped yet.
        let mapped = unsafe {
            self.device
                .map_memory(allocation.memory, 0, size, vk::MemoryMapFlags::empty())
        };
        let ptr = match mapped.map(|p| NonNull::new(p.cast::<u8>())) {
            Ok(Some(ptr)) => ptr,
            Ok(None) | Err(_) => {
                // SAFETY: just made, never used by the GPU.
                unsafe { allocation.free(&self.device) };
                return Err(Error::api_call(
                    BACKEND,
                    "mapping a staging buffer",
                    mapped.err().unwrap_or(vk::Result::ERROR_MEMORY_MAP_FAILED),
                ));
            }
        };
        *self.staging_slot(direction) = Some(Staging { allocation, ptr });
        Ok((allocation.buffer, ptr))
    }
}
