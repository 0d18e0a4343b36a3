//! Compute pipelines (one per kernel, made once per device) and the descriptor sets that
//! bind a launch's buffers (allocated per launch, reset after each submission).

use std::ffi::CString;

use ash::vk;

use super::context::{Context, Kernel};
use super::BACKEND;
use crate::common::spirv;
use crate::error::Error;
use crate::kernel::{Artifact, KernelInfo};

/// Sets per descriptor pool; pools are added as launches queue up.
const SETS_PER_POOL: u32 = 256;
/// Storage buffer descriptors per pool (8 per set on average).
const BUFFERS_PER_POOL: u32 = 8 * SETS_PER_POOL;

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
            // SAFETY: the device is live and `module` is one of its modules.
            let made = unsafe { self.make_kernel(kernel, module) }?;
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

    /// # Safety
    /// `module` belongs to this device.
    unsafe fn make_kernel(
        &self,
        kernel: &KernelInfo,
        module: vk::ShaderModule,
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
                let layouts = [made.set_layout];
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
                            .set_layouts(&layouts)
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

    /// A descriptor set of `layout` pointing at `buffers` (binding i = buffers[i]), valid
    /// until the open batch is submitted.
    pub(super) fn descriptor_set(
        &mut self,
        kernel: &KernelInfo,
        layout: vk::DescriptorSetLayout,
        buffers: &[vk::Buffer],
    ) -> Result<vk::DescriptorSet, Error> {
        let layouts = [layout];
        let set = loop {
            let fresh = self.descriptors.current == self.descriptors.pools.len();
            if fresh {
                let sizes = [vk::DescriptorPoolSize::default()
                    .ty(vk::DescriptorType::STORAGE_BUFFER)
                    .descriptor_count(BUFFERS_PER_POOL.max(buffers.len() as u32))];
                // SAFETY: a valid create info on a live device.
                let pool = unsafe {
                    self.device.create_descriptor_pool(
                        &vk::DescriptorPoolCreateInfo::default()
                            .max_sets(SETS_PER_POOL)
                            .pool_sizes(&sizes),
                        None,
                    )
                }
                .map_err(|e| {
                    Error::launch_call(BACKEND, kernel.name, "vkCreateDescriptorPool", e)
                })?;
                self.descriptors.pools.push(pool);
            }
            let pool = self.descriptors.pools[self.descriptors.current];
            // SAFETY: the pool and layout belong to this device.
            match unsafe {
                self.device.allocate_descriptor_sets(
                    &vk::DescriptorSetAllocateInfo::default()
                        .descriptor_pool(pool)
                        .set_layouts(&layouts),
                )
            } {
                Ok(sets) => break sets[0],
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
        // SAFETY: the set is new (not in use) and every buffer is live.
        unsafe { self.device.update_descriptor_sets(&writes, &[]) };
        Ok(set)
    }
}
