//! Buffers and their memory: device-local storage buffers, and the host-visible staging
//! buffer that uploads and downloads go through.

use std::ptr::NonNull;

use ash::vk;

use super::context::Context;
use super::vk_error;
use crate::backend::Backend;
use crate::error::Error;

/// A buffer and its memory.
#[derive(Clone, Copy)]
pub(crate) struct Allocation {
    pub(super) buffer: vk::Buffer,
    pub(super) memory: vk::DeviceMemory,
    pub(super) size: u64,
}

impl Allocation {
    /// # Safety
    /// The GPU must no longer use the buffer, and it is freed once.
    pub(super) unsafe fn free(self, device: &ash::Device) {
        // SAFETY: the caller guarantees the buffer is idle and not freed before.
        unsafe {
            device.destroy_buffer(self.buffer, None);
            device.free_memory(self.memory, None);
        }
    }
}

/// The host-visible buffer uploads and downloads copy through, mapped for its lifetime.
pub(super) struct Staging {
    pub(super) allocation: Allocation,
    pub(super) ptr: NonNull<u8>,
}

impl Staging {
    /// # Safety
    /// As `Allocation::free`.
    pub(super) unsafe fn free(self, device: &ash::Device) {
        // SAFETY: the caller guarantees the buffer is idle; unmapping precedes freeing.
        unsafe {
            device.unmap_memory(self.allocation.memory);
            self.allocation.free(device);
        }
    }
}

/// Usage of every storage buffer.
pub(super) const STORAGE_USAGE: vk::BufferUsageFlags = vk::BufferUsageFlags::from_raw(
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

    /// A buffer of `size` bytes in memory with `flags` (`DEVICE_LOCAL` falls back to any
    /// memory the buffer may use).
    pub(super) fn allocate(
        &self,
        size: u64,
        usage: vk::BufferUsageFlags,
        flags: vk::MemoryPropertyFlags,
    ) -> Result<Allocation, Error> {
        let out_of_memory = |reason: String| Error::OutOfMemory {
            backend: Backend::Ash,
            bytes: size,
            reason,
        };
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
            let type_index = self.memory_type(req.memory_type_bits, flags).or_else(|| {
                (flags == vk::MemoryPropertyFlags::DEVICE_LOCAL)
                    .then(|| {
                        self.memory_type(req.memory_type_bits, vk::MemoryPropertyFlags::empty())
                    })
                    .flatten()
            });
            let Some(type_index) = type_index else {
                d.destroy_buffer(buffer, None);
                return Err(out_of_memory(format!(
                    "the device has no {flags:?} memory for it"
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

    /// The staging buffer, at least `size` bytes (grown by doubling).
    pub(super) fn staging(&mut self, size: u64) -> Result<&Staging, Error> {
        if self
            .staging
            .as_ref()
            .is_some_and(|s| s.allocation.size >= size)
        {
            return Ok(self.staging.as_ref().expect("checked above"));
        }
        if let Some(old) = self.staging.take() {
            // SAFETY: every use of the staging buffer waits for its submission, so the GPU
            // no longer uses it.
            unsafe { old.free(&self.device) };
        }
        let size = size.max(1 << 16).next_power_of_two();
        let allocation = self.allocate(
            size,
            vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST,
            vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT,
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
                return Err(vk_error(
                    "mapping the staging buffer",
                    mapped.err().unwrap_or(vk::Result::ERROR_MEMORY_MAP_FAILED),
                ));
            }
        };
        Ok(self.staging.insert(Staging { allocation, ptr }))
    }
}
