//! Listing and opening ash devices: the Vulkan loader, an instance, its physical devices
//! (in the loader's order), the one asked for (the best, an index or a name), a logical
//! device with the features kernels may use, and the objects every launch needs.

use std::ffi::CStr;

use ash::vk;

use super::context::{Context, Timestamps};
use super::BACKEND;
use crate::api::About;
use crate::common::deadline::launch_timeout;
use crate::common::launch::Limits;
use crate::common::spin::spin_time;
use crate::devices::{pick, DeviceInfo, DeviceType, Wanted};
use crate::error::Error;
use crate::stats::DeviceFacts;

fn c_str(bytes: Result<&CStr, std::ffi::FromBytesUntilNulError>) -> String {
    bytes.map_or_else(|_| "?".into(), |s| s.to_string_lossy().into_owned())
}

fn kind(device_type: vk::PhysicalDeviceType) -> DeviceType {
    match device_type {
        vk::PhysicalDeviceType::DISCRETE_GPU => DeviceType::DiscreteGpu,
        vk::PhysicalDeviceType::INTEGRATED_GPU => DeviceType::IntegratedGpu,
        vk::PhysicalDeviceType::VIRTUAL_GPU => DeviceType::VirtualGpu,
        vk::PhysicalDeviceType::CPU => DeviceType::Cpu,
        _ => DeviceType::Other,
    }
}

/// One physical device, as the list shows it and as opening it needs it.
struct Candidate {
    physical: vk::PhysicalDevice,
    info: DeviceInfo,
    /// Its first queue family with compute, and that family's timestamp bits.
    family: u32,
    timestamp_bits: u32,
}

/// Every physical device, in `vkEnumeratePhysicalDevices`' order (the order `vulkaninfo`
/// numbers them GPU0, GPU1, ...): those older than Vulkan 1.2 or without a compute queue
/// are listed with why the backend cannot use them.
///
/// # Safety
/// `instance` must be live.
unsafe fn candidates(instance: &ash::Instance) -> Result<Vec<Candidate>, Error> {
    // SAFETY: the caller keeps the instance alive.
    let devices = unsafe { instance.enumerate_physical_devices() }.map_err(|e| {
        Error::unavailable(
            BACKEND,
            format!("listing Vulkan devices failed ({e}): check the driver"),
        )
    })?;
    let mut found = Vec::with_capacity(devices.len());
    for (index, physical) in devices.into_iter().enumerate() {
        // SAFETY: `physical` came from this instance.
        let (props, queues, memory) = unsafe {
            (
                instance.get_physical_device_properties(physical),
                instance.get_physical_device_queue_family_properties(physical),
                instance.get_physical_device_memory_properties(physical),
            )
        };
        let family = queues
            .iter()
            .position(|q| q.queue_flags.contains(vk::QueueFlags::COMPUTE));
        let version = (
            vk::api_version_major(props.api_version),
            vk::api_version_minor(props.api_version),
        );
        let unusable = if props.api_version < vk::API_VERSION_1_2 {
            Some(format!(
                "Vulkan {}.{}: the ash backend needs 1.2",
                version.0, version.1
            ))
        } else if family.is_none() {
            Some("no compute queue".to_string())
        } else {
            None
        };
        let heaps = &memory.memory_heaps[..memory.memory_heap_count as usize];
        let local: u64 = heaps
            .iter()
            .filter(|h| h.flags.contains(vk::MemoryHeapFlags::DEVICE_LOCAL))
            .map(|h| h.size)
            .sum();
        let bus = if unusable.is_none() {
            // SAFETY: a Vulkan 1.2 device of this instance.
            unsafe { pci_address(instance, physical) }
        } else {
            None
        };
        let name = c_str(props.device_name_as_c_str());
        found.push(Candidate {
            physical,
            info: DeviceInfo {
                memory: (local > 0).then_some(local),
                bus,
                unusable,
                ..DeviceInfo::new(BACKEND, index, &name, kind(props.device_type))
            },
            family: family.unwrap_or(0) as u32,
            timestamp_bits: family.map_or(0, |f| queues[f].timestamp_valid_bits),
        });
    }
    Ok(found)
}

/// `VK_EXT_pci_bus_info`'s address, where the device has the extension.
///
/// # Safety
/// `physical` belongs to the live `instance`, a Vulkan 1.2 device.
unsafe fn pci_address(instance: &ash::Instance, physical: vk::PhysicalDevice) -> Option<String> {
    // SAFETY: the caller guarantees a live device of this instance.
    let extensions =
        unsafe { instance.enumerate_device_extension_properties(physical) }.unwrap_or_default();
    if !has(&extensions, ash::ext::pci_bus_info::NAME) {
        return None;
    }
    let mut pci = vk::PhysicalDevicePCIBusInfoPropertiesEXT::default();
    let mut props = vk::PhysicalDeviceProperties2::default().push_next(&mut pci);
    // SAFETY: the extension is listed, so its struct may be chained.
    unsafe { instance.get_physical_device_properties2(physical, &mut props) };
    Some(format!(
        "{:04x}:{:02x}:{:02x}.{:x}",
        pci.pci_domain, pci.pci_bus, pci.pci_device, pci.pci_function
    ))
}

/// The process's Vulkan loader and instance (Vulkan 1.2), made at the first call and never
/// destroyed: every list and device of the process uses this one. NVIDIA's driver misbehaves
/// after some cycles of vkCreateInstance/vkDestroyInstance in one process (on the H200, wgpu
/// found no adapter after the conformance suite's ash tests had made and destroyed an
/// instance for each device; other projects report subgroup ids corrupted after ~11 cycles).
fn instance() -> Result<(ash::Entry, ash::Instance), Error> {
    static MADE: std::sync::OnceLock<(ash::Entry, ash::Instance)> = std::sync::OnceLock::new();
    if let Some(made) = MADE.get() {
        return Ok(made.clone());
    }
    let made = new_instance()?;
    let kept = MADE.get_or_init(|| made.clone());
    if kept.1.handle() != made.1.handle() {
        // Another thread made one first: this one was never used.
        // SAFETY: nothing was made from it.
        unsafe { made.1.destroy_instance(None) };
    }
    Ok(kept.clone())
}

/// Loads the Vulkan loader and makes an instance (Vulkan 1.2).
fn new_instance() -> Result<(ash::Entry, ash::Instance), Error> {
    crate::common::vulkan::ensure_runtime_dir();
    // SAFETY: loading the system's Vulkan loader runs its initialisation code; that is
    // what every Vulkan program does.
    let entry = unsafe { ash::Entry::load() }.map_err(|e| {
        Error::unavailable(
            BACKEND,
            format!("no Vulkan loader ({e}): install libvulkan1 and a Vulkan driver"),
        )
    })?;
    let app = vk::ApplicationInfo::default()
        .application_name(c"rgpu")
        .api_version(vk::API_VERSION_1_2);
    // SAFETY: the create info is valid and outlives the call.
    let instance = unsafe {
        entry.create_instance(
            &vk::InstanceCreateInfo::default().application_info(&app),
            None,
        )
    }
    .map_err(|e| {
        Error::unavailable(
            BACKEND,
            format!(
                "no Vulkan driver (vkCreateInstance: {e}): install one, or check VK_ICD_FILENAMES"
            ),
        )
    })?;
    Ok((entry, instance))
}

/// The devices the loader lists, in its order.
pub(super) fn list() -> Result<Vec<DeviceInfo>, Error> {
    let (_entry, instance) = instance()?;
    // SAFETY: the process's instance is live for the process.
    let found = unsafe { candidates(&instance) };
    Ok(found?.into_iter().map(|c| c.info).collect())
}

/// Features kernels may use (rust-gpu emits the capabilities), enabled where supported.
struct Features {
    core: vk::PhysicalDeviceFeatures,
    v11: vk::PhysicalDeviceVulkan11Features<'static>,
    v12: vk::PhysicalDeviceVulkan12Features<'static>,
}

/// What the device's extensions and properties say beyond the limits: the facts kernels
/// see (`Device::facts`) and whether pipelines can report statistics.
struct Extras {
    facts: DeviceFacts,
    /// `VK_KHR_pipeline_executable_properties` with its `pipelineExecutableInfo` feature,
    /// or why not.
    stats: Result<(), String>,
    /// `VK_KHR_maintenance4`'s `maxBufferSize`, where the device has the extension.
    max_buffer_size: Option<u64>,
}

/// Whether `extensions` lists `name`.
fn has(extensions: &[vk::ExtensionProperties], name: &CStr) -> bool {
    extensions
        .iter()
        .any(|e| e.extension_name_as_c_str().is_ok_and(|n| n == name))
}

/// The subgroup sizes and compute units, and whether pipeline statistics can be had.
///
/// # Safety
/// `physical` belongs to the live `instance`, a Vulkan 1.2 device.
unsafe fn extras(instance: &ash::Instance, physical: vk::PhysicalDevice, driver: &str) -> Extras {
    // SAFETY: the caller guarantees a live device of this instance.
    let extensions =
        unsafe { instance.enumerate_device_extension_properties(physical) }.unwrap_or_default();
    // The instance asks for Vulkan 1.2, so 1.3's core structs are valid through their
    // extensions only (drivers keep listing promoted extensions).
    let size_control = has(&extensions, ash::ext::subgroup_size_control::NAME);
    let sm_builtins = has(&extensions, ash::nv::shader_sm_builtins::NAME);
    let amd_cores = has(&extensions, ash::amd::shader_core_properties::NAME);
    let maintenance4 = has(&extensions, ash::khr::maintenance4::NAME);
    let mut subgroup = vk::PhysicalDeviceSubgroupProperties::default();
    let mut control = vk::PhysicalDeviceSubgroupSizeControlProperties::default();
    let mut sm = vk::PhysicalDeviceShaderSMBuiltinsPropertiesNV::default();
    let mut amd = vk::PhysicalDeviceShaderCorePropertiesAMD::default();
    let mut buffers = vk::PhysicalDeviceMaintenance4Properties::default();
    let mut sources = vec!["VkPhysicalDeviceSubgroupProperties"];
    {
        let mut props = vk::PhysicalDeviceProperties2::default().push_next(&mut subgroup);
        if size_control {
            props = props.push_next(&mut control);
            sources.push("VK_EXT_subgroup_size_control");
        }
        if sm_builtins {
            props = props.push_next(&mut sm);
            sources.push("VK_NV_shader_sm_builtins");
        }
        if amd_cores {
            props = props.push_next(&mut amd);
            sources.push("VK_AMD_shader_core_properties");
        }
        if maintenance4 {
            props = props.push_next(&mut buffers);
        }
        // SAFETY: every struct chained is core in this version or an extension it lists.
        unsafe { instance.get_physical_device_properties2(physical, &mut props) };
    }
    let known = |n: u32| (n > 0).then_some(n);
    let default_size = known(subgroup.subgroup_size);
    let (min, max) = if size_control {
        (
            known(control.min_subgroup_size),
            known(control.max_subgroup_size),
        )
    } else {
        (default_size, default_size)
    };
    let (compute_units, compute_unit) = if sm_builtins && sm.shader_sm_count > 0 {
        (Some(sm.shader_sm_count), "SM")
    } else if amd_cores {
        let cus = amd.shader_engine_count
            * amd.shader_arrays_per_engine_count
            * amd.compute_units_per_shader_array;
        (known(cus), if cus > 0 { "CU" } else { "" })
    } else {
        (None, "")
    };
    let stats = if !has(&extensions, ash::khr::pipeline_executable_properties::NAME) {
        Err(format!(
            "the Vulkan driver {driver} lacks VK_KHR_pipeline_executable_properties: use a \
             driver that has it (NVIDIA, Mesa's RADV/ANV) or the cuda backend"
        ))
    } else {
        let mut wanted = vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR::default();
        let mut all = vk::PhysicalDeviceFeatures2::default().push_next(&mut wanted);
        // SAFETY: the extension is listed, so its feature struct may be chained.
        unsafe { instance.get_physical_device_features2(physical, &mut all) };
        if wanted.pipeline_executable_info != 0 {
            Ok(())
        } else {
            Err(format!(
                "the Vulkan driver {driver} lists VK_KHR_pipeline_executable_properties \
                 without its pipelineExecutableInfo feature: update the driver, or use the \
                 cuda backend"
            ))
        }
    };
    Extras {
        facts: DeviceFacts {
            backend: BACKEND,
            subgroup_size: default_size,
            subgroup_min: min,
            subgroup_max: max,
            compute_units,
            compute_unit,
            source: sources.join(", "),
        },
        stats,
        max_buffer_size: maintenance4.then_some(buffers.max_buffer_size),
    }
}

/// # Safety
/// `physical` belongs to the live `instance`, a Vulkan 1.2 device.
unsafe fn wanted_features(instance: &ash::Instance, physical: vk::PhysicalDevice) -> Features {
    let mut v11 = vk::PhysicalDeviceVulkan11Features::default();
    let mut v12 = vk::PhysicalDeviceVulkan12Features::default();
    let supported_core = {
        let mut all = vk::PhysicalDeviceFeatures2::default()
            .push_next(&mut v11)
            .push_next(&mut v12);
        // SAFETY: the caller guarantees a Vulkan 1.2 device of this instance.
        unsafe { instance.get_physical_device_features2(physical, &mut all) };
        all.features
    };
    let core = vk::PhysicalDeviceFeatures::default()
        .shader_int64(supported_core.shader_int64 != 0)
        .shader_int16(supported_core.shader_int16 != 0)
        .shader_float64(supported_core.shader_float64 != 0);
    let v11 = vk::PhysicalDeviceVulkan11Features::default()
        .storage_buffer16_bit_access(v11.storage_buffer16_bit_access != 0)
        .variable_pointers_storage_buffer(v11.variable_pointers_storage_buffer != 0)
        .variable_pointers(v11.variable_pointers != 0);
    let v12 = vk::PhysicalDeviceVulkan12Features::default()
        .storage_buffer8_bit_access(v12.storage_buffer8_bit_access != 0)
        .shader_int8(v12.shader_int8 != 0)
        .shader_float16(v12.shader_float16 != 0)
        .vulkan_memory_model(v12.vulkan_memory_model != 0)
        .vulkan_memory_model_device_scope(v12.vulkan_memory_model_device_scope != 0)
        .shader_subgroup_extended_types(v12.shader_subgroup_extended_types != 0);
    Features { core, v11, v12 }
}

/// Everything `AshDevice` keeps besides the context.
pub(super) struct Opened {
    pub(super) context: Context,
    pub(super) about: About,
    pub(super) limits: Limits,
}

pub(super) fn open(wanted: &Wanted) -> Result<Opened, Error> {
    let (entry, instance) = instance()?;
    // SAFETY: the process's instance is live for the process.
    unsafe { with_instance(&entry, instance, wanted) }
}

/// Opens the device on the process's instance.
///
/// # Safety
/// `instance` must be live.
unsafe fn with_instance(
    entry: &ash::Entry,
    instance: ash::Instance,
    wanted: &Wanted,
) -> Result<Opened, Error> {
    // SAFETY: the instance is live.
    let mut found = unsafe { candidates(&instance) }?;
    let infos: Vec<DeviceInfo> = found.iter().map(|c| c.info.clone()).collect();
    let index = pick(BACKEND, &infos, wanted)?;
    let chosen = found.swap_remove(index);
    let mut driver = vk::PhysicalDeviceDriverProperties::default();
    let mut v11 = vk::PhysicalDeviceVulkan11Properties::default();
    let mut props2 = vk::PhysicalDeviceProperties2::default()
        .push_next(&mut driver)
        .push_next(&mut v11);
    // SAFETY: `physical` belongs to the instance; the device is Vulkan 1.2.
    unsafe { instance.get_physical_device_properties2(chosen.physical, &mut props2) };
    let props = props2.properties;
    let name = chosen.info.name.clone();
    let description = format!(
        "{name} (Vulkan {}.{} {}, driver {} {})",
        vk::api_version_major(props.api_version),
        vk::api_version_minor(props.api_version),
        chosen.info.kind,
        c_str(driver.driver_name_as_c_str()),
        c_str(driver.driver_info_as_c_str()),
    );
    let l = props.limits;
    // SAFETY: a Vulkan 1.2 device of this instance.
    let mut features = unsafe { wanted_features(&instance, chosen.physical) };
    let driver_name = format!("'{}'", c_str(driver.driver_name_as_c_str()));
    // SAFETY: as above.
    let extras = unsafe { extras(&instance, chosen.physical, &driver_name) };
    let limits = Limits {
        max_shared: l.max_compute_shared_memory_size,
        max_threads: l
            .max_compute_work_group_invocations
            .min(l.max_compute_work_group_size[0]),
        max_params: Some(l.max_push_constants_size),
        max_buffers: l.max_per_stage_descriptor_storage_buffers,
        max_binding: u64::from(l.max_storage_buffer_range),
        max_groups: l.max_compute_work_group_count[0],
        // One buffer is one allocation here: Vulkan 1.1's maxMemoryAllocationSize, and
        // VK_KHR_maintenance4's maxBufferSize where the device has it.
        max_buffer: extras
            .max_buffer_size
            .map_or(v11.max_memory_allocation_size, |max| {
                max.min(v11.max_memory_allocation_size)
            }),
    };
    let priorities = [1.0];
    let queue_info = [vk::DeviceQueueCreateInfo::default()
        .queue_family_index(chosen.family)
        .queue_priorities(&priorities)];
    // Pipeline statistics (`Device::kernel_stats`): enabling the extension changes nothing
    // for the pipelines launches use (only pipelines made with CAPTURE_STATISTICS report).
    let stats_extension = [ash::khr::pipeline_executable_properties::NAME.as_ptr()];
    let mut stats_feature = vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR::default()
        .pipeline_executable_info(true);
    let mut create = vk::DeviceCreateInfo::default()
        .queue_create_infos(&queue_info)
        .enabled_features(&features.core)
        .push_next(&mut features.v11)
        .push_next(&mut features.v12);
    if extras.stats.is_ok() {
        create = create
            .enabled_extension_names(&stats_extension)
            .push_next(&mut stats_feature);
    }
    // SAFETY: valid create info; the queue family exists on this device.
    let device =
        unsafe { instance.create_device(chosen.physical, &create, None) }.map_err(|e| {
            Error::unavailable(
                BACKEND,
                format!("{name} refused a device ({e}): update the driver"),
            )
        })?;
    // SAFETY: live instance and device; queue 0 of `family` was requested above.
    let (memory_types, queue) = unsafe {
        (
            instance.get_physical_device_memory_properties(chosen.physical),
            device.get_device_queue(chosen.family, 0),
        )
    };
    let mut context = Context::new(entry.clone(), instance, device, memory_types, queue);
    context.spin = spin_time(chosen.info.kind == DeviceType::Cpu)?;
    context.timeout = launch_timeout(wanted.launch_timeout)?;
    context.statistics = extras.stats.map(|()| {
        ash::khr::pipeline_executable_properties::Device::new(&context.instance, &context.device)
    });
    let tick_ns = f64::from(l.timestamp_period);
    // From here on, dropping `context` destroys the device and the instance.
    // SAFETY: the device is live; `Drop` destroys whatever was made if this fails.
    unsafe { create_objects(&mut context, chosen.family, tick_ns, chosen.timestamp_bits) }?;
    Ok(Opened {
        context,
        about: About {
            info: chosen.info,
            description,
            facts: extras.facts,
        },
        limits,
    })
}

/// # Safety
/// The context's device must be live.
unsafe fn create_objects(
    c: &mut Context,
    family: u32,
    tick_ns: f64,
    timestamp_bits: u32,
) -> Result<(), Error> {
    let d = &c.device;
    // SAFETY: valid create infos on a live device (the whole block).
    unsafe {
        c.command_pool = d
            .create_command_pool(
                &vk::CommandPoolCreateInfo::default()
                    .queue_family_index(family)
                    .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER),
                None,
            )
            .map_err(|e| Error::api_call(BACKEND, "vkCreateCommandPool", e))?;
        let buffers = d
            .allocate_command_buffers(
                &vk::CommandBufferAllocateInfo::default()
                    .command_pool(c.command_pool)
                    .level(vk::CommandBufferLevel::PRIMARY)
                    .command_buffer_count(3),
            )
            .map_err(|e| Error::api_call(BACKEND, "vkAllocateCommandBuffers", e))?;
        c.batch_commands = buffers[0];
        c.chunk_commands = [buffers[1], buffers[2]];
        c.fence = d
            .create_fence(&vk::FenceCreateInfo::default(), None)
            .map_err(|e| Error::api_call(BACKEND, "vkCreateFence", e))?;
        for f in &mut c.chunk_fences {
            *f = d
                .create_fence(&vk::FenceCreateInfo::default(), None)
                .map_err(|e| Error::api_call(BACKEND, "vkCreateFence", e))?;
        }
        if timestamp_bits > 0 && tick_ns > 0.0 {
            let pool = d
                .create_query_pool(
                    &vk::QueryPoolCreateInfo::default()
                        .query_type(vk::QueryType::TIMESTAMP)
                        .query_count(2),
                    None,
                )
                .map_err(|e| Error::api_call(BACKEND, "vkCreateQueryPool", e))?;
            c.timestamps = Some(Timestamps {
                pool,
                tick_ns,
                valid_bits: timestamp_bits,
            });
        }
    }
    Ok(())
}
