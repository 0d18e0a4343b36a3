//! Compute pipelines (one per kernel, made once per device) and the descriptor sets that
//! bind a launch's buffers: kept for launches on device buffers (the same buffers bind the
//! same set again, `bound_set`), allocated per launch and reset after each submission for
//! launches with host-slice temporaries (`descriptor_set`).

use std::ffi::CString;

use ash::vk;

use super::context::{Context, FaultRecord, Kernel};
use super::transfer::{copy_in, copy_out, Target};
use super::BACKEND;
use crate::common::fault::{self, Access};
use crate::common::spirv;
use crate::error::Error;
use crate::kernel::{Artifact, KernelInfo};

/// Sets per descriptor pool; pools are added as launches queue up.
const SETS_PER_POOL: u32 = 256;
/// Storage buffer descriptors per pool (8 per set on average).
const BUFFERS_PER_POOL: u32 = 8 * SETS_PER_POOL;
/// The most sets kept for device buffers; launches on other buffers beyond it allocate per
/// batch (as launches with temporaries do).
const MAX_BOUND_SETS: usize = 4096;
/// Fault records (one per checked module) a device holds.
const FAULT_SETS: u32 = 64;

impl Context {
    /// The kernel's pipeline: made from the embedded SPIR-V the first time.
    pub(super) fn kernel(
        &mut self,
        kernel: &'static KernelInfo,
        artifacts: &'static [Artifact],
    ) -> Result<&Kernel, Error> {
        let artifact = spirv::artifact_for(BACKEND, kernel, artifacts)?;
        let key = spirv::module_key(artifact);
        if !self.kernels.contains_key(&(key, kernel.name)) {
            let module = self.module(kernel, artifact)?;
            let fault = self.fault_record(kernel, artifact)?;
            // SAFETY: the device is live and `module` is one of its modules.
            let made = unsafe { self.make_kernel(kernel, module, fault) }?;
            self.kernels.insert((key, kernel.name), made);
            self.made.push((key, kernel.name));
        }
        Ok(&self.kernels[&(key, kernel.name)])
    }

    fn module(
        &mut self,
        kernel: &KernelInfo,
        artifact: &'static Artifact,
    ) -> Result<vk::ShaderModule, Error> {
        let key = spirv::module_key(artifact);
        if let Some(&module) = self.modules.get(&key) {
            return Ok(module);
        }
        let words = spirv::words(BACKEND, kernel, artifact)?;
        // SAFETY: the words are a SPIR-V module rgpu validated when embedding it.
        let module = unsafe {
            self.device
                .create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&words), None)
        }
        .map_err(|e| {
            Error::launch_call(
                BACKEND,
                kernel.name,
                "the driver rejected its SPIR-V module (vkCreateShaderModule)",
                e,
            )
        })?;
        self.modules.insert(key, module);
        Ok(module)
    }

    /// A checked build's module: its fault record's descriptor set (the record made zeroed
    /// with the module's first kernel); `None` for any other.
    fn fault_record(
        &mut self,
        kernel: &KernelInfo,
        artifact: &'static Artifact,
    ) -> Result<Option<vk::DescriptorSet>, Error> {
        if artifact.faults.is_empty() {
            return Ok(None);
        }
        let key = spirv::module_key(artifact);
        if let Some(record) = self.faults.get(&key) {
            return Ok(Some(record.set));
        }
        let call = |what: &'static str| move |e| Error::launch_call(BACKEND, kernel.name, what, e);
        if self.fault_layout == vk::DescriptorSetLayout::null() {
            let binding = [vk::DescriptorSetLayoutBinding::default()
                .binding(fault::BINDING)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .descriptor_count(1)
                .stage_flags(vk::ShaderStageFlags::COMPUTE)];
            let sizes = [vk::DescriptorPoolSize::default()
                .ty(vk::DescriptorType::STORAGE_BUFFER)
                .descriptor_count(FAULT_SETS)];
            // SAFETY: valid create infos on a live device (destroyed with the context).
            unsafe {
                self.fault_layout = self
                    .device
                    .create_descriptor_set_layout(
                        &vk::DescriptorSetLayoutCreateInfo::default().bindings(&binding),
                        None,
                    )
                    .map_err(call("vkCreateDescriptorSetLayout"))?;
                self.fault_pool = self
                    .device
                    .create_descriptor_pool(
                        &vk::DescriptorPoolCreateInfo::default()
                            .max_sets(FAULT_SETS)
                            .pool_sizes(&sizes),
                        None,
                    )
                    .map_err(call("vkCreateDescriptorPool"))?;
            }
        }
        let set = self
            .allocate_set(self.fault_pool, self.fault_layout)
            .map_err(call("vkAllocateDescriptorSets (a fault record)"))?;
        let memory = self.allocate_storage(fault::BYTES as u64)?;
        if let Err(e) = copy_in(self, &memory, 0, &[0; fault::BYTES], Target::New) {
            self.discard(memory);
            return Err(Error::launch(
                BACKEND,
                kernel.name,
                format!("making its fault record: {e}"),
            ));
        }
        let info = [vk::DescriptorBufferInfo::default()
            .buffer(memory.buffer)
            .offset(0)
            .range(vk::WHOLE_SIZE)];
        let write = vk::WriteDescriptorSet::default()
            .dst_set(set)
            .dst_binding(fault::BINDING)
            .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
            .buffer_info(&info);
        // SAFETY: the set is new and the buffer live.
        unsafe { self.device.update_descriptor_sets(&[write], &[]) };
        self.faults.insert(
            key,
            FaultRecord {
                memory,
                sites: artifact.faults,
                set,
            },
        );
        Ok(Some(set))
    }

    /// A checked module's fault (`common::fault`), after a wait: `Error::OutOfRange` naming
    /// the kernels launched since the wait before; the record is cleared, the device usable.
    pub(super) fn take_fault(&mut self) -> Result<(), Error> {
        if self.faults.is_empty() {
            return Ok(());
        }
        let kernels = std::mem::take(&mut self.since_wait);
        let records: Vec<_> = self.faults.values().map(|r| (r.memory, r.sites)).collect();
        fault::take(BACKEND, &kernels, records, |record, access| match access {
            Access::Read(bytes) => copy_out(self, &mut [(record, 0, &mut bytes[..])]),
            Access::Clear => copy_in(self, record, 0, &[0; fault::BYTES], Target::Live),
        })
    }

    /// # Safety
    /// `module` belongs to this device.
    unsafe fn make_kernel(
        &self,
        kernel: &KernelInfo,
        module: vk::ShaderModule,
        fault: Option<vk::DescriptorSet>,
    ) -> Result<Kernel, Error> {
        let d = &self.device;
        let name = CString::new(kernel.name).map_err(|_| {
            Error::launch(
                BACKEND,
                kernel.name,
                "its name has a NUL byte: rename the kernel",
            )
        })?;
        let bindings: Vec<vk::DescriptorSetLayoutBinding> = (0..kernel.buffers.len() as u32)
            .map(|i| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(i)
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .descriptor_count(1)
                    .stage_flags(vk::ShaderStageFlags::COMPUTE)
            })
            .collect();
        let mut made = Kernel {
            module,
            set_layout: vk::DescriptorSetLayout::null(),
            pipeline_layout: vk::PipelineLayout::null(),
            pipeline: vk::Pipeline::null(),
            fault,
        };
        // SAFETY: valid create infos on a live device; on error what was made is destroyed.
        let result = unsafe {
            (|| {
                made.set_layout = d
                    .create_descriptor_set_layout(
                        &vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings),
                        None,
                    )
                    .map_err(|e| {
                        Error::launch_call(BACKEND, kernel.name, "vkCreateDescriptorSetLayout", e)
                    })?;
                // A checked build's kernel: its fault record is set `fault::SET`.
                let with_fault = [made.set_layout, self.fault_layout];
                let layouts = if fault.is_some() {
                    &with_fault[..]
                } else {
                    &with_fault[..1]
                };
                let ranges = [vk::PushConstantRange::default()
                    .stage_flags(vk::ShaderStageFlags::COMPUTE)
                    .offset(0)
                    .size(kernel.params_size.next_multiple_of(4))];
                let ranges = if kernel.params_size == 0 {
                    &ranges[..0]
                } else {
                    &ranges[..]
                };
                made.pipeline_layout = d
                    .create_pipeline_layout(
                        &vk::PipelineLayoutCreateInfo::default()
                            .set_layouts(layouts)
                            .push_constant_ranges(ranges),
                        None,
                    )
                    .map_err(|e| {
                        Error::launch_call(BACKEND, kernel.name, "vkCreatePipelineLayout", e)
                    })?;
                let stage = vk::PipelineShaderStageCreateInfo::default()
                    .stage(vk::ShaderStageFlags::COMPUTE)
                    .module(module)
                    .name(&name);
                let info = [vk::ComputePipelineCreateInfo::default()
                    .stage(stage)
                    .layout(made.pipeline_layout)];
                made.pipeline = d
                    .create_compute_pipelines(vk::PipelineCache::null(), &info, None)
                    .map_err(|(_, e)| {
                        Error::launch_call(
                            BACKEND,
                            kernel.name,
                            "the driver rejected its pipeline (vkCreateComputePipelines)",
                            e,
                        )
                    })?[0];
                Ok(())
            })()
        };
        match result {
            Ok(()) => Ok(made),
            Err(e) => {
                // SAFETY: never used by a submission.
                unsafe { made.destroy(d) };
                Err(e)
            }
        }
    }

    /// A descriptor set of `layout` pointing at `buffers` (binding i = buffers[i]) that stays
    /// valid while those buffers live: made by the first launch on them, bound again by
    /// every later one.
    pub(super) fn bound_set(
        &mut self,
        kernel: &KernelInfo,
        layout: vk::DescriptorSetLayout,
        buffers: &[vk::Buffer],
    ) -> Result<vk::DescriptorSet, Error> {
        if let Some(&(_, set)) = self.bound_sets.sets.get(&(layout, buffers.to_vec())) {
            return Ok(set);
        }
        if self.bound_sets.sets.len() >= MAX_BOUND_SETS {
            return self.descriptor_set(kernel, layout, buffers);
        }
        // A pool with room (sets of given-up buffers free theirs), else a new one.
        let mut made = None;
        for &pool in self.bound_sets.pools.iter().rev() {
            match self.allocate_set(pool, layout) {
                Err(vk::Result::ERROR_OUT_OF_POOL_MEMORY | vk::Result::ERROR_FRAGMENTED_POOL) => {}
                other => {
                    made = Some(other.map(|set| (pool, set)));
                    break;
                }
            }
        }
        let made = match made {
            Some(made) => made,
            None => {
                let pool = self.new_pool(kernel, buffers.len(), true)?;
                self.bound_sets.pools.push(pool);
                self.allocate_set(pool, layout).map(|set| (pool, set))
            }
        };
        let (pool, set) = made
            .map_err(|e| Error::launch_call(BACKEND, kernel.name, "vkAllocateDescriptorSets", e))?;
        self.write_set(set, buffers);
        self.bound_sets
            .sets
            .insert((layout, buffers.to_vec()), (pool, set));
        self.bound_sets.buffers.extend(buffers);
        Ok(set)
    }

    /// Buffer `buffer` is given up: the sets that bind it go (freed now, or after the open
    /// batch), before the driver can hand its handle to a new buffer.
    pub(super) fn forget_bound_sets(&mut self, buffer: vk::Buffer) {
        let bound = &mut self.bound_sets;
        if !bound.buffers.remove(&buffer) {
            return;
        }
        let before = bound.stale.len();
        bound.sets.retain(|(_, buffers), &mut found| {
            let keep = !buffers.contains(&buffer);
            if !keep {
                bound.stale.push(found);
            }
            keep
        });
        if self.batch.is_none() && bound.stale.len() > before {
            // SAFETY: no batch is open and every submission was waited for.
            unsafe { bound.free_stale(&self.device) };
        }
    }

    fn new_pool(
        &self,
        kernel: &KernelInfo,
        buffers: usize,
        free_sets: bool,
    ) -> Result<vk::DescriptorPool, Error> {
        let sizes = [vk::DescriptorPoolSize::default()
            .ty(vk::DescriptorType::STORAGE_BUFFER)
            .descriptor_count(BUFFERS_PER_POOL.max(buffers as u32))];
        let flags = if free_sets {
            vk::DescriptorPoolCreateFlags::FREE_DESCRIPTOR_SET
        } else {
            vk::DescriptorPoolCreateFlags::empty()
        };
        // SAFETY: a valid create info on a live device.
        unsafe {
            self.device.create_descriptor_pool(
                &vk::DescriptorPoolCreateInfo::default()
                    .flags(flags)
                    .max_sets(SETS_PER_POOL)
                    .pool_sizes(&sizes),
                None,
            )
        }
        .map_err(|e| Error::launch_call(BACKEND, kernel.name, "vkCreateDescriptorPool", e))
    }

    /// One descriptor set of `layout` from `pool`.
    fn allocate_set(
        &self,
        pool: vk::DescriptorPool,
        layout: vk::DescriptorSetLayout,
    ) -> Result<vk::DescriptorSet, vk::Result> {
        let layouts = [layout];
        // SAFETY: the pool and layout belong to this device.
        unsafe {
            self.device.allocate_descriptor_sets(
                &vk::DescriptorSetAllocateInfo::default()
                    .descriptor_pool(pool)
                    .set_layouts(&layouts),
            )
        }
        .map(|sets| sets[0])
    }

    /// Points `set`'s bindings at `buffers` (binding i = buffers[i], whole buffers).
    fn write_set(&self, set: vk::DescriptorSet, buffers: &[vk::Buffer]) {
        let infos: Vec<[vk::DescriptorBufferInfo; 1]> = buffers
            .iter()
            .map(|&b| {
                [vk::DescriptorBufferInfo::default()
                    .buffer(b)
                    .offset(0)
                    .range(vk::WHOLE_SIZE)]
            })
            .collect();
        let writes: Vec<vk::WriteDescriptorSet> = infos
            .iter()
            .enumerate()
            .map(|(i, info)| {
                vk::WriteDescriptorSet::default()
                    .dst_set(set)
                    .dst_binding(i as u32)
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .buffer_info(info)
            })
            .collect();
        // SAFETY: the set is not in use (new) and every buffer is live.
        unsafe { self.device.update_descriptor_sets(&writes, &[]) };
    }

    /// A descriptor set of `layout` pointing at `buffers` (binding i = buffers[i]), valid
    /// until the open batch is submitted.
    pub(super) fn descriptor_set(
        &mut self,
        kernel: &KernelInfo,
        layout: vk::DescriptorSetLayout,
        buffers: &[vk::Buffer],
    ) -> Result<vk::DescriptorSet, Error> {
        let set = loop {
            let fresh = self.descriptors.current == self.descriptors.pools.len();
            if fresh {
                let pool = self.new_pool(kernel, buffers.len(), false)?;
                self.descriptors.pools.push(pool);
            }
            let pool = self.descriptors.pools[self.descriptors.current];
            self.descriptors.used = true;
            match self.allocate_set(pool, layout) {
                Ok(set) => break set,
                // This pool is full: on to the next (a new pool that fails is an error).
                Err(vk::Result::ERROR_OUT_OF_POOL_MEMORY | vk::Result::ERROR_FRAGMENTED_POOL)
                    if !fresh =>
                {
                    self.descriptors.current += 1;
                }
                Err(e) => {
                    return Err(Error::launch_call(
                        BACKEND,
                        kernel.name,
                        "vkAllocateDescriptorSets",
                        e,
                    ))
                }
            }
        };
        self.write_set(set, buffers);
        Ok(set)
    }
}
