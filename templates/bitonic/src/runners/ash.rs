//! The ash backend: the embedded SPIR-V straight on Vulkan 1.2, no translation layer.
//!
//! One command buffer per sort: copy the keys from a host-visible staging buffer into a
//! device-local buffer, every dispatch (encode, each network step, decode) with a
//! compute->compute barrier between them, copy back, one submission, one fence wait.
//! Buffers are kept and reused while they are big enough.
//!
//! Confirmed against ash 0.38.0+1.3.281 (crates.io sources); the Vulkan loader is opened
//! at run time (`ash::Entry::load`), so a machine without one gets a clear error.

use std::ffi::CStr;

use ash::vk;
use shared::{KeyKind, SortOrder};

use super::spirv::{self, ENTRY_POINTS, PARAMS_BYTES};
use super::{Backend, RunnerError, SortRunner};

const BACKEND: Backend = Backend::Ash;

fn unavailable(reason: impl Into<String>) -> RunnerError {
    RunnerError::Unavailable {
        backend: BACKEND,
        reason: reason.into(),
    }
}

fn failed(what: &str, result: vk::Result) -> RunnerError {
    RunnerError::Failed {
        backend: BACKEND,
        reason: format!("{what}: {result}"),
    }
}

/// A buffer and its memory.
struct Allocation {
    buffer: vk::Buffer,
    memory: vk::DeviceMemory,
    size: u64,
}

pub struct AshRunner {
    // Field order is not drop order: `Drop` below destroys in the right order.
    _entry: ash::Entry,
    instance: ash::Instance,
    device: ash::Device,
    memory_types: vk::PhysicalDeviceMemoryProperties,
    queue: vk::Queue,
    command_pool: vk::CommandPool,
    command_buffer: vk::CommandBuffer,
    fence: vk::Fence,
    set_layout: vk::DescriptorSetLayout,
    descriptor_pool: vk::DescriptorPool,
    descriptor_set: vk::DescriptorSet,
    pipeline_layout: vk::PipelineLayout,
    modules: Vec<vk::ShaderModule>,
    pipelines: Vec<vk::Pipeline>,
    keys: Option<Allocation>,
    staging: Option<(Allocation, *mut u32)>,
    /// With `RGPU_GPU_TIMING=1` (benchmarks): timestamps around the dispatches and after
    /// each one (`TIMESTAMPS` slots), and the nanoseconds per tick.
    timing: Option<(vk::QueryPool, f64)>,
    description: String,
}

/// Timestamp slots with `RGPU_GPU_TIMING=1`: the sort's start and end, then one after
/// each dispatch (when the sort has at most `TIMESTAMPS - 2` dispatches: 47 at 2^26).
const TIMESTAMPS: u32 = 128;

/// `gpu-timing-split:` the dispatches' time summed per entry point (tile vs global
/// passes; each dispatch's time includes the barrier before it).
fn print_split(dispatches: &[spirv::Dispatch], ticks: &[u64], ms: impl Fn(u64) -> f64) {
    let len = dispatches.first().map_or(0, |d| d.params.len);
    let mut per_entry = [(0.0f64, 0u32); spirv::ENTRY_POINTS.len()];
    let mut previous = ticks[0];
    for (dispatch, &end) in dispatches.iter().zip(&ticks[2..]) {
        let entry = &mut per_entry[dispatch.entry];
        entry.0 += ms(end.saturating_sub(previous));
        entry.1 += 1;
        previous = end;
    }
    let parts: Vec<String> = spirv::ENTRY_POINTS
        .iter()
        .zip(per_entry)
        .map(|(name, (t, n))| format!("{name} {t:.3} ms ({n} dispatches)"))
        .collect();
    eprintln!("gpu-timing-split: ash {len} keys: {}", parts.join(", "));
}

fn c_str(bytes: Result<&CStr, std::ffi::FromBytesUntilNulError>) -> String {
    bytes.map_or_else(|_| "?".into(), |s| s.to_string_lossy().into_owned())
}

/// Picks a physical device with a compute queue, discrete GPUs first.
///
/// # Safety
/// `instance` must be a live instance.
unsafe fn pick_device(instance: &ash::Instance) -> Result<(vk::PhysicalDevice, u32), RunnerError> {
    // SAFETY: the caller keeps the instance alive.
    let devices = unsafe { instance.enumerate_physical_devices() }
        .map_err(|e| unavailable(format!("listing Vulkan devices: {e}")))?;
    let mut best: Option<(u32, vk::PhysicalDevice, u32)> = None;
    for device in devices {
        // SAFETY: `device` came from this instance.
        let (props, queues) = unsafe {
            (
                instance.get_physical_device_properties(device),
                instance.get_physical_device_queue_family_properties(device),
            )
        };
        let Some(family) = queues
            .iter()
            .position(|q| q.queue_flags.contains(vk::QueueFlags::COMPUTE))
        else {
            continue;
        };
        let rank = match props.device_type {
            vk::PhysicalDeviceType::DISCRETE_GPU => 0,
            vk::PhysicalDeviceType::INTEGRATED_GPU => 1,
            vk::PhysicalDeviceType::VIRTUAL_GPU => 2,
            _ => 3,
        };
        if props.api_version >= vk::API_VERSION_1_2 && best.is_none_or(|(r, _, _)| rank < r) {
            best = Some((rank, device, family as u32));
        }
    }
    best.map(|(_, d, f)| (d, f))
        .ok_or_else(|| unavailable("no Vulkan 1.2 device with a compute queue"))
}

impl AshRunner {
    pub fn new() -> Result<Self, RunnerError> {
        // SAFETY: loading the system's Vulkan loader runs its initialisation code; that is
        // what every Vulkan program does.
        let entry = unsafe { ash::Entry::load() }
            .map_err(|e| unavailable(format!("no Vulkan loader (libvulkan): {e}")))?;
        let app = vk::ApplicationInfo::default()
            .application_name(c"rgpu sort")
            .api_version(vk::API_VERSION_1_2);
        // SAFETY: the create info is valid and outlives the call.
        let instance = unsafe {
            entry.create_instance(
                &vk::InstanceCreateInfo::default().application_info(&app),
                None,
            )
        }
        .map_err(|e| unavailable(format!("no Vulkan driver (vkCreateInstance: {e})")))?;
        // SAFETY: the instance is live; on error it is destroyed before returning.
        match unsafe { Self::with_instance(entry, instance.clone()) } {
            Ok(runner) => Ok(runner),
            Err(e) => {
                // SAFETY: nothing made from the instance is alive any more.
                unsafe { instance.destroy_instance(None) };
                Err(e)
            }
        }
    }

    /// # Safety
    /// `instance` must be live; on error the caller destroys it.
    unsafe fn with_instance(
        entry: ash::Entry,
        instance: ash::Instance,
    ) -> Result<Self, RunnerError> {
        // SAFETY: the instance is live.
        let (physical, family) = unsafe { pick_device(&instance) }?;
        let mut driver = vk::PhysicalDeviceDriverProperties::default();
        let mut props2 = vk::PhysicalDeviceProperties2::default().push_next(&mut driver);
        // SAFETY: `physical` belongs to the instance; the device is Vulkan 1.2.
        unsafe { instance.get_physical_device_properties2(physical, &mut props2) };
        let name = c_str(props2.properties.device_name_as_c_str());
        let tick_ns = f64::from(props2.properties.limits.timestamp_period);
        let shared_limit = props2.properties.limits.max_compute_shared_memory_size;
        if shared_limit < spirv::TILE_BYTES {
            return Err(RunnerError::Unavailable {
                backend: BACKEND,
                reason: format!(
                    "{name} allows {shared_limit} bytes of workgroup memory; the sort's tile \
                     needs {}",
                    spirv::TILE_BYTES
                ),
            });
        }
        let description = format!(
            "{name} (Vulkan {}.{}, driver {} {})",
            vk::api_version_major(props2.properties.api_version),
            vk::api_version_minor(props2.properties.api_version),
            c_str(driver.driver_name_as_c_str()),
            c_str(driver.driver_info_as_c_str()),
        );
        let priorities = [1.0];
        let queue_info = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(family)
            .queue_priorities(&priorities)];
        // SAFETY: valid create info; the queue family exists on this device.
        let device = unsafe {
            instance.create_device(
                physical,
                &vk::DeviceCreateInfo::default().queue_create_infos(&queue_info),
                None,
            )
        }
        .map_err(|e| unavailable(format!("{name} refused a device: {e}")))?;
        // SAFETY: the device is live; partial objects are destroyed by `Drop` on error.
        let memory_types = unsafe { instance.get_physical_device_memory_properties(physical) };
        // SAFETY: queue 0 of `family` was requested above.
        let queue = unsafe { device.get_device_queue(family, 0) };
        let mut runner = Self {
            _entry: entry,
            instance,
            device,
            memory_types,
            queue,
            command_pool: vk::CommandPool::null(),
            command_buffer: vk::CommandBuffer::null(),
            fence: vk::Fence::null(),
            set_layout: vk::DescriptorSetLayout::null(),
            descriptor_pool: vk::DescriptorPool::null(),
            descriptor_set: vk::DescriptorSet::null(),
            pipeline_layout: vk::PipelineLayout::null(),
            modules: Vec::new(),
            pipelines: Vec::new(),
            keys: None,
            staging: None,
            timing: None,
            description,
        };
        // SAFETY: the device is live; `Drop` destroys whatever was made if this fails.
        match unsafe { runner.create_objects(family, tick_ns) } {
            Ok(()) => Ok(runner),
            Err(e) => {
                // `Drop` would destroy the instance the caller also destroys: do it here
                // and forget the runner.
                // SAFETY: the device is idle; nothing else uses these objects.
                unsafe { runner.destroy_device_objects() };
                std::mem::forget(runner);
                Err(e)
            }
        }
    }

    /// # Safety
    /// `self.device` must be live.
    unsafe fn create_objects(&mut self, family: u32, tick_ns: f64) -> Result<(), RunnerError> {
        let d = &self.device;
        let timing = std::env::var("RGPU_GPU_TIMING").is_ok_and(|v| v == "1") && tick_ns > 0.0;
        // SAFETY: valid create infos on a live device (the whole block).
        unsafe {
            self.command_pool = d
                .create_command_pool(
                    &vk::CommandPoolCreateInfo::default()
                        .queue_family_index(family)
                        .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER),
                    None,
                )
                .map_err(|e| failed("vkCreateCommandPool", e))?;
            self.command_buffer = d
                .allocate_command_buffers(
                    &vk::CommandBufferAllocateInfo::default()
                        .command_pool(self.command_pool)
                        .level(vk::CommandBufferLevel::PRIMARY)
                        .command_buffer_count(1),
                )
                .map_err(|e| failed("vkAllocateCommandBuffers", e))?[0];
            self.fence = d
                .create_fence(&vk::FenceCreateInfo::default(), None)
                .map_err(|e| failed("vkCreateFence", e))?;
            let binding = [vk::DescriptorSetLayoutBinding::default()
                .binding(0)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .descriptor_count(1)
                .stage_flags(vk::ShaderStageFlags::COMPUTE)];
            self.set_layout = d
                .create_descriptor_set_layout(
                    &vk::DescriptorSetLayoutCreateInfo::default().bindings(&binding),
                    None,
                )
                .map_err(|e| failed("vkCreateDescriptorSetLayout", e))?;
            let sizes = [vk::DescriptorPoolSize::default()
                .ty(vk::DescriptorType::STORAGE_BUFFER)
                .descriptor_count(1)];
            self.descriptor_pool = d
                .create_descriptor_pool(
                    &vk::DescriptorPoolCreateInfo::default()
                        .max_sets(1)
                        .pool_sizes(&sizes),
                    None,
                )
                .map_err(|e| failed("vkCreateDescriptorPool", e))?;
            let layouts = [self.set_layout];
            self.descriptor_set = d
                .allocate_descriptor_sets(
                    &vk::DescriptorSetAllocateInfo::default()
                        .descriptor_pool(self.descriptor_pool)
                        .set_layouts(&layouts),
                )
                .map_err(|e| failed("vkAllocateDescriptorSets", e))?[0];
            let ranges = [vk::PushConstantRange::default()
                .stage_flags(vk::ShaderStageFlags::COMPUTE)
                .offset(0)
                .size(PARAMS_BYTES)];
            self.pipeline_layout = d
                .create_pipeline_layout(
                    &vk::PipelineLayoutCreateInfo::default()
                        .set_layouts(&layouts)
                        .push_constant_ranges(&ranges),
                    None,
                )
                .map_err(|e| failed("vkCreatePipelineLayout", e))?;
            for entry in ENTRY_POINTS {
                let (_, words) = spirv::module_for(BACKEND, entry)?;
                let module = d
                    .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&words), None)
                    .map_err(|e| failed("vkCreateShaderModule", e))?;
                self.modules.push(module);
                let name = std::ffi::CString::new(entry).expect("entry names have no NUL");
                let stage = vk::PipelineShaderStageCreateInfo::default()
                    .stage(vk::ShaderStageFlags::COMPUTE)
                    .module(module)
                    .name(&name);
                let info = [vk::ComputePipelineCreateInfo::default()
                    .stage(stage)
                    .layout(self.pipeline_layout)];
                let pipeline = d
                    .create_compute_pipelines(vk::PipelineCache::null(), &info, None)
                    .map_err(|(_, e)| failed("vkCreateComputePipelines", e))?[0];
                self.pipelines.push(pipeline);
            }
            if timing {
                let pool = d
                    .create_query_pool(
                        &vk::QueryPoolCreateInfo::default()
                            .query_type(vk::QueryType::TIMESTAMP)
                            .query_count(TIMESTAMPS),
                        None,
                    )
                    .map_err(|e| failed("vkCreateQueryPool", e))?;
                self.timing = Some((pool, tick_ns));
            }
        }
        Ok(())
    }

    fn memory_type(&self, bits: u32, flags: vk::MemoryPropertyFlags) -> Option<u32> {
        (0..self.memory_types.memory_type_count).find(|&i| {
            bits & (1 << i) != 0
                && self.memory_types.memory_types[i as usize]
                    .property_flags
                    .contains(flags)
        })
    }

    /// # Safety
    /// `self.device` must be live.
    unsafe fn allocate(
        &self,
        size: u64,
        usage: vk::BufferUsageFlags,
        flags: vk::MemoryPropertyFlags,
    ) -> Result<Allocation, RunnerError> {
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
                .map_err(|e| failed("vkCreateBuffer", e))?;
            let req = d.get_buffer_memory_requirements(buffer);
            let Some(type_index) = self.memory_type(req.memory_type_bits, flags) else {
                d.destroy_buffer(buffer, None);
                return Err(failed(
                    "no memory type",
                    vk::Result::ERROR_FEATURE_NOT_PRESENT,
                ));
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
                    return Err(failed("vkAllocateMemory", e));
                }
            };
            if let Err(e) = d.bind_buffer_memory(buffer, memory, 0) {
                d.destroy_buffer(buffer, None);
                d.free_memory(memory, None);
                return Err(failed("vkBindBufferMemory", e));
            }
            Ok(Allocation {
                buffer,
                memory,
                size,
            })
        }
    }

    /// # Safety
    /// The device must be idle with respect to `a`.
    unsafe fn free(&self, a: Allocation) {
        // SAFETY: the caller guarantees the GPU no longer uses it.
        unsafe {
            self.device.destroy_buffer(a.buffer, None);
            self.device.free_memory(a.memory, None);
        }
    }

    /// Makes sure both buffers hold at least `bytes`, and points the descriptor at them.
    fn ensure_buffers(&mut self, bytes: u64) -> Result<(), RunnerError> {
        if self.keys.as_ref().is_some_and(|k| k.size >= bytes) {
            return Ok(());
        }
        // SAFETY: every sort waits for its fence, so the GPU uses neither buffer now.
        unsafe {
            if let Some(old) = self.keys.take() {
                self.free(old);
            }
            if let Some((old, _)) = self.staging.take() {
                self.device.unmap_memory(old.memory);
                self.free(old);
            }
            let keys = self.allocate(
                bytes,
                vk::BufferUsageFlags::STORAGE_BUFFER
                    | vk::BufferUsageFlags::TRANSFER_SRC
                    | vk::BufferUsageFlags::TRANSFER_DST,
                vk::MemoryPropertyFlags::DEVICE_LOCAL,
            )?;
            let buffer_info = [vk::DescriptorBufferInfo::default()
                .buffer(keys.buffer)
                .offset(0)
                .range(vk::WHOLE_SIZE)];
            let write = [vk::WriteDescriptorSet::default()
                .dst_set(self.descriptor_set)
                .dst_binding(0)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .buffer_info(&buffer_info)];
            self.device.update_descriptor_sets(&write, &[]);
            self.keys = Some(keys);
            let staging = self.allocate(
                bytes,
                vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST,
                vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT,
            )?;
            let ptr =
                match self
                    .device
                    .map_memory(staging.memory, 0, bytes, vk::MemoryMapFlags::empty())
                {
                    Ok(p) => p.cast::<u32>(),
                    Err(e) => {
                        self.free(staging);
                        return Err(failed("vkMapMemory", e));
                    }
                };
            self.staging = Some((staging, ptr));
        }
        Ok(())
    }

    /// Records upload, every dispatch and download into the one command buffer.
    ///
    /// # Safety
    /// Both buffers exist and hold `len` keys; the command buffer is not in use.
    unsafe fn record(&self, len: u32, kind: KeyKind, order: SortOrder) -> Result<(), vk::Result> {
        let d = &self.device;
        let cb = self.command_buffer;
        let keys = self.keys.as_ref().expect("ensure_buffers ran").buffer;
        let staging = self.staging.as_ref().expect("ensure_buffers ran").0.buffer;
        let region = [vk::BufferCopy::default().size(u64::from(len) * 4)];
        let compute = vk::PipelineStageFlags::COMPUTE_SHADER;
        let transfer = vk::PipelineStageFlags::TRANSFER;
        let barrier = |src: vk::AccessFlags, dst: vk::AccessFlags| {
            [vk::MemoryBarrier::default()
                .src_access_mask(src)
                .dst_access_mask(dst)]
        };
        let rw = vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE;
        // SAFETY: the caller guarantees the buffers and the idle command buffer.
        unsafe {
            d.reset_command_buffer(cb, vk::CommandBufferResetFlags::empty())?;
            d.begin_command_buffer(
                cb,
                &vk::CommandBufferBeginInfo::default()
                    .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
            )?;
            if let Some((pool, _)) = self.timing {
                d.cmd_reset_query_pool(cb, pool, 0, TIMESTAMPS);
            }
            d.cmd_copy_buffer(cb, staging, keys, &region);
            let b = barrier(vk::AccessFlags::TRANSFER_WRITE, rw);
            d.cmd_pipeline_barrier(
                cb,
                transfer,
                compute,
                vk::DependencyFlags::empty(),
                &b,
                &[],
                &[],
            );
            d.cmd_bind_descriptor_sets(
                cb,
                vk::PipelineBindPoint::COMPUTE,
                self.pipeline_layout,
                0,
                &[self.descriptor_set],
                &[],
            );
            if let Some((pool, _)) = self.timing {
                d.cmd_write_timestamp(cb, vk::PipelineStageFlags::BOTTOM_OF_PIPE, pool, 0);
            }
            let mut bound = usize::MAX;
            let between = barrier(vk::AccessFlags::SHADER_WRITE, rw);
            let dispatches = spirv::dispatches(len, kind, order);
            let split = dispatches.len() as u32 + 2 <= TIMESTAMPS;
            for (i, dispatch) in dispatches.iter().enumerate() {
                if i > 0 {
                    d.cmd_pipeline_barrier(
                        cb,
                        compute,
                        compute,
                        vk::DependencyFlags::empty(),
                        &between,
                        &[],
                        &[],
                    );
                }
                if dispatch.entry != bound {
                    let p = self.pipelines[dispatch.entry];
                    d.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, p);
                    bound = dispatch.entry;
                }
                d.cmd_push_constants(
                    cb,
                    self.pipeline_layout,
                    vk::ShaderStageFlags::COMPUTE,
                    0,
                    bytemuck::bytes_of(&dispatch.params),
                );
                d.cmd_dispatch(cb, dispatch.groups, 1, 1);
                if let Some((pool, _)) = self.timing.filter(|_| split) {
                    // Slot 2 + i: when dispatch i (and everything before it) finished.
                    let slot = 2 + i as u32;
                    d.cmd_write_timestamp(cb, vk::PipelineStageFlags::BOTTOM_OF_PIPE, pool, slot);
                }
            }
            if let Some((pool, _)) = self.timing {
                d.cmd_write_timestamp(cb, vk::PipelineStageFlags::BOTTOM_OF_PIPE, pool, 1);
            }
            let b = barrier(
                vk::AccessFlags::SHADER_WRITE,
                vk::AccessFlags::TRANSFER_READ,
            );
            d.cmd_pipeline_barrier(
                cb,
                compute,
                transfer,
                vk::DependencyFlags::empty(),
                &b,
                &[],
                &[],
            );
            d.cmd_copy_buffer(cb, keys, staging, &region);
            let b = barrier(vk::AccessFlags::TRANSFER_WRITE, vk::AccessFlags::HOST_READ);
            let host = vk::PipelineStageFlags::HOST;
            d.cmd_pipeline_barrier(
                cb,
                transfer,
                host,
                vk::DependencyFlags::empty(),
                &b,
                &[],
                &[],
            );
            d.end_command_buffer(cb)
        }
    }

    /// # Safety
    /// Only from `drop` or a failed constructor: nothing made here may be in use.
    unsafe fn destroy_device_objects(&mut self) {
        // SAFETY: the caller guarantees nothing is in use; null handles are ignored.
        unsafe {
            let _ = self.device.device_wait_idle();
            if let Some(k) = self.keys.take() {
                self.free(k);
            }
            if let Some((s, _)) = self.staging.take() {
                self.device.unmap_memory(s.memory);
                self.free(s);
            }
            for p in self.pipelines.drain(..) {
                self.device.destroy_pipeline(p, None);
            }
            for m in self.modules.drain(..) {
                self.device.destroy_shader_module(m, None);
            }
            if let Some((pool, _)) = self.timing.take() {
                self.device.destroy_query_pool(pool, None);
            }
            let d = &self.device;
            d.destroy_pipeline_layout(self.pipeline_layout, None);
            d.destroy_descriptor_pool(self.descriptor_pool, None);
            d.destroy_descriptor_set_layout(self.set_layout, None);
            d.destroy_fence(self.fence, None);
            d.destroy_command_pool(self.command_pool, None);
            d.destroy_device(None);
        }
    }
}

impl Drop for AshRunner {
    fn drop(&mut self) {
        // SAFETY: the runner owns every object and no sort is in flight (sort_bits waits).
        unsafe {
            self.destroy_device_objects();
            self.instance.destroy_instance(None);
        }
    }
}

impl SortRunner for AshRunner {
    fn backend(&self) -> Backend {
        BACKEND
    }

    fn device(&self) -> String {
        self.description.clone()
    }

    fn sort_checked(
        &mut self,
        keys: &mut [u32],
        kind: KeyKind,
        order: SortOrder,
    ) -> Result<(), RunnerError> {
        let len = keys.len() as u32;
        self.ensure_buffers(u64::from(len) * 4)?;
        let ptr = self.staging.as_ref().expect("ensure_buffers ran").1;
        // SAFETY: the staging memory is mapped, coherent, at least `len` words long, and
        // the GPU is not using it (the previous sort waited for its fence).
        unsafe {
            std::ptr::copy_nonoverlapping(keys.as_ptr(), ptr, keys.len());
            self.record(len, kind, order)
                .map_err(|e| failed("recording the sort", e))?;
            let cbs = [self.command_buffer];
            let submit = [vk::SubmitInfo::default().command_buffers(&cbs)];
            self.device
                .queue_submit(self.queue, &submit, self.fence)
                .map_err(|e| failed("vkQueueSubmit", e))?;
            let waited = self.device.wait_for_fences(&[self.fence], true, u64::MAX);
            let reset = self.device.reset_fences(&[self.fence]);
            waited.map_err(|e| failed("vkWaitForFences", e))?;
            reset.map_err(|e| failed("vkResetFences", e))?;
            std::ptr::copy_nonoverlapping(ptr, keys.as_mut_ptr(), keys.len());
            if let Some((pool, tick_ns)) = self.timing {
                let dispatches = spirv::dispatches(len, kind, order);
                let split = dispatches.len() as u32 + 2 <= TIMESTAMPS;
                let mut ticks = vec![0u64; if split { 2 + dispatches.len() } else { 2 }];
                self.device
                    .get_query_pool_results(
                        pool,
                        0,
                        &mut ticks,
                        vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
                    )
                    .map_err(|e| failed("vkGetQueryPoolResults", e))?;
                let ms = |ticks: u64| ticks as f64 * tick_ns / 1e6;
                let total = ms(ticks[1].saturating_sub(ticks[0]));
                eprintln!("gpu-timing: ash {len} keys: sort dispatches {total:.3} ms");
                if split {
                    print_split(&dispatches, &ticks, ms);
                }
            }
        }
        Ok(())
    }
}
