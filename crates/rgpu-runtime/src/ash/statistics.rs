//! `Device::kernel_stats` on ash: `VK_KHR_pipeline_executable_properties`. The pipelines
//! launches use are made without `CAPTURE_STATISTICS` (so their compile and timing never
//! change); for statistics each kernel's pipeline is made again from the same shader
//! module, entry point and layout with that flag, asked, and destroyed.

use std::ffi::{CStr, CString};

use ash::vk;

use super::context::{Context, Kernel};
use super::BACKEND;
use crate::error::Error;
use crate::stats::{summarize, KernelStats, Stat, StatValue};

fn text(bytes: Result<&CStr, std::ffi::FromBytesUntilNulError>) -> String {
    bytes.map_or_else(|_| String::new(), |s| s.to_string_lossy().trim().to_owned())
}

/// A statistic's value in the format the driver gave.
fn value(statistic: &vk::PipelineExecutableStatisticKHR<'_>) -> Option<StatValue> {
    let v = statistic.value;
    // SAFETY: `format` says which member of the union the driver wrote.
    unsafe {
        match statistic.format {
            vk::PipelineExecutableStatisticFormatKHR::BOOL32 => Some(StatValue::Bool(v.b32 != 0)),
            vk::PipelineExecutableStatisticFormatKHR::INT64 => Some(StatValue::I64(v.i64)),
            vk::PipelineExecutableStatisticFormatKHR::UINT64 => Some(StatValue::U64(v.u64)),
            vk::PipelineExecutableStatisticFormatKHR::FLOAT64 => Some(StatValue::F64(v.f64)),
            _ => None,
        }
    }
}

impl Context {
    /// Statistics of every kernel made so far, in the order they were made.
    pub(super) fn kernel_stats(&self) -> Result<Vec<KernelStats>, Error> {
        let ext = self
            .statistics
            .as_ref()
            .map_err(|why| Error::no_kernel_stats(BACKEND, why.clone()))?;
        self.made
            .iter()
            .map(|key| {
                // SAFETY: the kernel's module and layout belong to this live device.
                unsafe { self.pipeline_stats(ext, key.1, &self.kernels[key]) }
            })
            .collect()
    }

    /// # Safety
    /// `kernel`'s module and layout belong to this device.
    unsafe fn pipeline_stats(
        &self,
        ext: &ash::khr::pipeline_executable_properties::Device,
        name: &'static str,
        kernel: &Kernel,
    ) -> Result<KernelStats, Error> {
        let failed = |what: &str, e: vk::Result| {
            Error::no_kernel_stats(
                BACKEND,
                format!(
                    "{what} failed for kernel `{name}` ({e}): the driver could not report its \
                 statistics"
                ),
            )
        };
        let entry = CString::new(name).map_err(|_| {
            Error::no_kernel_stats(
                BACKEND,
                format!("kernel `{name}`'s name has a NUL byte: rename the kernel"),
            )
        })?;
        // The same stage and layout as `make_kernel`'s, with CAPTURE_STATISTICS.
        let stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(kernel.module)
            .name(&entry);
        let info = [vk::ComputePipelineCreateInfo::default()
            .flags(vk::PipelineCreateFlags::CAPTURE_STATISTICS_KHR)
            .stage(stage)
            .layout(kernel.pipeline_layout)];
        // SAFETY: a valid create info on a live device (the caller's contract).
        let pipeline = unsafe {
            self.device
                .create_compute_pipelines(vk::PipelineCache::null(), &info, None)
        }
        .map_err(|(_, e)| failed("vkCreateComputePipelines (CAPTURE_STATISTICS)", e))?[0];
        // SAFETY: the pipeline was made with CAPTURE_STATISTICS on a device with the
        // extension and its feature enabled.
        let result =
            unsafe { self.read_stats(ext, pipeline, name) }.map_err(|(what, e)| failed(what, e));
        // SAFETY: never bound to a command buffer.
        unsafe { self.device.destroy_pipeline(pipeline, None) };
        result
    }

    /// # Safety
    /// As `pipeline_stats`; `pipeline` was made with CAPTURE_STATISTICS.
    unsafe fn read_stats(
        &self,
        ext: &ash::khr::pipeline_executable_properties::Device,
        pipeline: vk::Pipeline,
        name: &'static str,
    ) -> Result<KernelStats, (&'static str, vk::Result)> {
        let pipeline_info = vk::PipelineInfoKHR::default().pipeline(pipeline);
        // SAFETY: the caller's contract.
        let executables = unsafe { ext.get_pipeline_executable_properties(&pipeline_info) }
            .map_err(|e| ("vkGetPipelineExecutablePropertiesKHR", e))?;
        let mut stats = Vec::new();
        let subgroup_size = executables.iter().map(|e| e.subgroup_size).find(|&n| n > 0);
        for (index, executable) in executables.iter().enumerate() {
            let label = text(executable.name_as_c_str());
            let label = if executable.subgroup_size > 0 {
                format!("{label} (subgroup size {})", executable.subgroup_size)
            } else {
                label
            };
            let info = vk::PipelineExecutableInfoKHR::default()
                .pipeline(pipeline)
                .executable_index(index as u32);
            // SAFETY: `index` is one of the pipeline's executables.
            let list = unsafe { ext.get_pipeline_executable_statistics(&info) }
                .map_err(|e| ("vkGetPipelineExecutableStatisticsKHR", e))?;
            for statistic in &list {
                if let Some(value) = value(statistic) {
                    stats.push(Stat {
                        executable: label.clone(),
                        name: text(statistic.name_as_c_str()),
                        value,
                        description: text(statistic.description_as_c_str()),
                    });
                }
            }
        }
        let mut out = KernelStats {
            kernel: name,
            registers: None,
            local_bytes: None,
            shared_bytes: None,
            subgroup_size,
            stats,
            source: "VK_KHR_pipeline_executable_properties",
        };
        summarize(&mut out);
        Ok(out)
    }
}
