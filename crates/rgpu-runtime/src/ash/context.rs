//! `Context`: every Vulkan object of one ash device, what it is made of (buffers, staging
//! memory, pipelines, descriptor pools, the open batch), and their destruction. What the
//! objects do is in the modules that import this one: `batch`, `memory`, `pipeline`,
//! `transfer`.

use std::collections::{HashMap, HashSet};
use std::mem::ManuallyDrop;
use std::ptr::NonNull;
use std::time::Duration;

use ash::vk;

use crate::common::deadline::Lost;
use crate::common::spirv::ModuleKey;

/// The objects of one device. Used under `AshDevice`'s mutex only.
pub(super) struct Context {
    /// The loaded Vulkan library and the process's instance (setup.rs `instance`: kept for
    /// the process, never destroyed here).
    pub(super) _entry: ManuallyDrop<ash::Entry>,
    pub(super) instance: ash::Instance,
    pub(super) device: ash::Device,
    pub(super) memory_types: vk::PhysicalDeviceMemoryProperties,
    pub(super) queue: vk::Queue,
    pub(super) command_pool: vk::CommandPool,
    /// Records the queued launches (`batch`).
    pub(super) batch_commands: vk::CommandBuffer,
    /// Record the chunks of large uploads and downloads, two in flight (`transfer`).
    pub(super) chunk_commands: [vk::CommandBuffer; 2],
    pub(super) chunk_fences: [vk::Fence; 2],
    /// Signalled by batch submissions.
    pub(super) fence: vk::Fence,
    /// The launches recorded and not yet submitted.
    pub(super) batch: Option<Batch>,
    /// Descriptor sets of launches with host-slice temporaries, reset after each batch.
    pub(super) descriptors: DescriptorPools,
    /// Descriptor sets of launches on device buffers, kept while their buffers live.
    pub(super) bound_sets: BoundSets,
    /// How long a wait polls its fence before blocking (`common::spin`; 0 on a CPU device).
    pub(super) spin: Duration,
    /// How long a wait may block in all (`common::deadline`); `None`: no limit.
    pub(super) timeout: Option<Duration>,
    /// The kernel recorded last, which a timed-out wait names.
    pub(super) last_kernel: &'static str,
    /// Set when a wait timed out or the driver lost the device: from then on every call
    /// returns that error and `Drop` leaks every object instead of waiting for the GPU.
    pub(super) lost: Lost,
    pub(super) modules: HashMap<ModuleKey, vk::ShaderModule>,
    pub(super) kernels: HashMap<(ModuleKey, &'static str), Kernel>,
    /// Where uploads are staged: up to `transfer::CHUNK` bytes each in the part from 0 to
    /// `upload_used`, read by copies in the open batch; two `CHUNK` halves for large ones.
    pub(super) upload_staging: Option<Staging>,
    pub(super) upload_used: u64,
    /// Where downloads land (host-cached memory where the device has it).
    pub(super) readback_staging: Option<Staging>,
    /// Buffers dropped while the open batch may use them: freed after it ran.
    pub(super) garbage: Vec<Allocation>,
    pub(super) timestamps: Option<Timestamps>,
    /// Inside `Device::timed`.
    pub(super) timing: Option<Timing>,
    /// `kernels`' keys in the order they were made (`Device::kernel_stats` lists them so).
    pub(super) made: Vec<(ModuleKey, &'static str)>,
    /// `VK_KHR_pipeline_executable_properties`, enabled, or why the device lacks it.
    pub(super) statistics: Result<ash::khr::pipeline_executable_properties::Device, String>,
    /// Checked builds' modules: each one's fault record (`common::fault`).
    pub(super) faults: HashMap<ModuleKey, FaultRecord>,
    /// The set layout of the fault records, and the pool of their sets (made with the first).
    pub(super) fault_layout: vk::DescriptorSetLayout,
    pub(super) fault_pool: vk::DescriptorPool,
    /// The kernels launched since the last wait, once a checked module is loaded (a fault
    /// names them).
    pub(super) since_wait: Vec<&'static crate::kernel::KernelInfo>,
}

// SAFETY: Vulkan handles may be used from any thread when access is externally
// synchronised, which `AshDevice`'s mutex does; the staging pointers are only dereferenced
// under that mutex.
unsafe impl Send for Context {}

impl Context {
    /// A context for a new device, with no other objects yet (null handles, which
    /// `Drop` skips).
    pub(super) fn new(
        entry: ash::Entry,
        instance: ash::Instance,
        device: ash::Device,
        memory_types: vk::PhysicalDeviceMemoryProperties,
        queue: vk::Queue,
    ) -> Self {
        Self {
            _entry: ManuallyDrop::new(entry),
            instance,
            device,
            memory_types,
            queue,
            command_pool: vk::CommandPool::null(),
            batch_commands: vk::CommandBuffer::null(),
            chunk_commands: [vk::CommandBuffer::null(); 2],
            chunk_fences: [vk::Fence::null(); 2],
            fence: vk::Fence::null(),
            batch: None,
            descriptors: DescriptorPools::default(),
            bound_sets: BoundSets::default(),
            spin: Duration::ZERO,
            timeout: None,
            last_kernel: "(none launched yet)",
            lost: Lost::default(),
            modules: HashMap::new(),
            kernels: HashMap::new(),
            upload_staging: None,
            upload_used: 0,
            readback_staging: None,
            garbage: Vec::new(),
            timestamps: None,
            timing: None,
            made: Vec::new(),
            statistics: Err("not asked yet".into()),
            faults: HashMap::new(),
            fault_layout: vk::DescriptorSetLayout::null(),
            fault_pool: vk::DescriptorPool::null(),
            since_wait: Vec::new(),
        }
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        if self.lost.is_lost() {
            // A kernel may still run (lavapipe's threads spin on): vkDeviceWaitIdle would
            // wait forever and destroying objects under it is undefined. Everything is
            // leaked, the Vulkan library too; the process can still exit.
            return;
        }
        // SAFETY: the context owns every object below; waiting for the device first means
        // none is in use. Destroying a null handle is a no-op (objects never made).
        unsafe {
            let _ = self.device.device_wait_idle();
            for a in std::mem::take(&mut self.garbage) {
                a.free(&self.device);
            }
            for (_, r) in self.faults.drain() {
                r.memory.free(&self.device);
            }
            self.device.destroy_descriptor_pool(self.fault_pool, None);
            self.device
                .destroy_descriptor_set_layout(self.fault_layout, None);
            for s in [self.upload_staging.take(), self.readback_staging.take()]
                .into_iter()
                .flatten()
            {
                s.free(&self.device);
            }
            for (_, k) in self.kernels.drain() {
                k.destroy(&self.device);
            }
            for (_, m) in self.modules.drain() {
                self.device.destroy_shader_module(m, None);
            }
            self.descriptors.destroy(&self.device);
            self.bound_sets.destroy(&self.device);
            if let Some(t) = self.timestamps.take() {
                self.device.destroy_query_pool(t.pool, None);
            }
            self.device.destroy_fence(self.fence, None);
            for f in self.chunk_fences {
                self.device.destroy_fence(f, None);
            }
            self.device.destroy_command_pool(self.command_pool, None);
            self.device.destroy_device(None);
            // The instance and the library stay: the process's (setup.rs `instance`).
        }
    }
}

/// Timestamp queries around each batch inside `Device::timed`.
pub(super) struct Timestamps {
    pub(super) pool: vk::QueryPool,
    /// Nanoseconds per tick.
    pub(super) tick_ns: f64,
    /// Meaningful bits of a timestamp.
    pub(super) valid_bits: u32,
}

/// Device time of the batches submitted inside `Device::timed`.
#[derive(Default)]
pub(super) struct Timing {
    pub(super) ms: f64,
    /// A batch ran without timestamps.
    pub(super) untimed: bool,
}

/// What the open command buffer holds.
pub(super) struct Batch {
    /// Writes by dispatches / transfers that later commands must wait for.
    pub(super) compute_writes: bool,
    pub(super) transfer_writes: bool,
    /// The pipeline bound last.
    pub(super) bound: vk::Pipeline,
    /// It starts with a timestamp (query 0).
    pub(super) timed: bool,
}

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

/// A host-visible buffer uploads or downloads copy through, mapped for its lifetime.
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

/// One kernel's pipeline and layouts.
pub(super) struct Kernel {
    /// The module it was made from (owned by `Context::modules`).
    pub(super) module: vk::ShaderModule,
    pub(super) set_layout: vk::DescriptorSetLayout,
    pub(super) pipeline_layout: vk::PipelineLayout,
    pub(super) pipeline: vk::Pipeline,
    /// A checked build's kernel: its module's fault record's descriptor set, bound as set
    /// `fault::SET` (`common::fault`).
    pub(super) fault: Option<vk::DescriptorSet>,
}

/// A checked module's fault record (`common::fault`) on this device.
pub(super) struct FaultRecord {
    pub(super) memory: Allocation,
    /// The module's format strings by site.
    pub(super) sites: &'static [&'static str],
    /// Its descriptor set (set `fault::SET` of the module's kernels).
    pub(super) set: vk::DescriptorSet,
}

impl Kernel {
    /// # Safety
    /// No submission may use the pipeline any more.
    pub(super) unsafe fn destroy(self, device: &ash::Device) {
        // SAFETY: the caller guarantees the objects are idle; null handles are no-ops.
        unsafe {
            device.destroy_pipeline(self.pipeline, None);
            device.destroy_pipeline_layout(self.pipeline_layout, None);
            device.destroy_descriptor_set_layout(self.set_layout, None);
        }
    }
}

/// Descriptor pools: sets come from `pools[current]`, the next pool when it is full.
#[derive(Default)]
pub(super) struct DescriptorPools {
    pub(super) pools: Vec<vk::DescriptorPool>,
    pub(super) current: usize,
    /// A set was allocated since the last reset (batches of launches on device buffers
    /// allocate none: their sets are kept, `BoundSets`).
    pub(super) used: bool,
}

impl DescriptorPools {
    /// Frees every set (after the submission that used them finished).
    ///
    /// # Safety
    /// No submission may use the sets any more.
    pub(super) unsafe fn reset(&mut self, device: &ash::Device) {
        if !std::mem::take(&mut self.used) {
            return;
        }
        for &pool in &self.pools {
            // SAFETY: the caller guarantees the sets are idle.
            let _ = unsafe {
                device.reset_descriptor_pool(pool, vk::DescriptorPoolResetFlags::empty())
            };
        }
        self.current = 0;
    }

    /// # Safety
    /// As `reset`.
    pub(super) unsafe fn destroy(&mut self, device: &ash::Device) {
        for pool in self.pools.drain(..) {
            // SAFETY: the caller guarantees the pools are idle.
            unsafe { device.destroy_descriptor_pool(pool, None) };
        }
    }
}

/// Descriptor sets that stay bound to the same buffers across batches: a launch on device
/// buffers with the kernel's layout and buffers of an earlier launch binds that launch's set
/// again, with no allocation and no `vkUpdateDescriptorSets` (`pipeline.rs`). They come from
/// pools that free single sets; a buffer given up (`Context::discard`) takes its sets along
/// before its handle can be reused.
#[derive(Default)]
pub(super) struct BoundSets {
    pub(super) pools: Vec<vk::DescriptorPool>,
    /// By layout and buffers (binding i = buffers[i]): the set and the pool it came from.
    pub(super) sets: HashMap<
        (vk::DescriptorSetLayout, Vec<vk::Buffer>),
        (vk::DescriptorPool, vk::DescriptorSet),
    >,
    /// Every buffer some kept set binds (a buffer given up without one costs no search).
    pub(super) buffers: HashSet<vk::Buffer>,
    /// Sets of given-up buffers that the open batch may still bind: freed after it ran.
    pub(super) stale: Vec<(vk::DescriptorPool, vk::DescriptorSet)>,
}

impl BoundSets {
    /// Frees the stale sets.
    ///
    /// # Safety
    /// No submission may use them any more.
    pub(super) unsafe fn free_stale(&mut self, device: &ash::Device) {
        for (pool, set) in self.stale.drain(..) {
            // SAFETY: the caller guarantees the set is idle; it came from `pool`, which
            // was made with FREE_DESCRIPTOR_SET.
            let _ = unsafe { device.free_descriptor_sets(pool, &[set]) };
        }
    }

    /// # Safety
    /// No submission may use any set any more.
    pub(super) unsafe fn destroy(&mut self, device: &ash::Device) {
        self.sets.clear();
        self.buffers.clear();
        self.stale.clear();
        for pool in self.pools.drain(..) {
            // SAFETY: the caller guarantees the pools are idle.
            unsafe { device.destroy_descriptor_pool(pool, None) };
        }
    }
}
