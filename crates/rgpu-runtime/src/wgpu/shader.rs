//! How the SPIR-V reaches wgpu (passthrough or naga), and each kernel's pipeline.

use std::borrow::Cow;
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::sync::Arc;

use wgpu::naga;

use super::{WgpuDevice, BACKEND};
use crate::common::spirv;
use crate::common::wgpu_device::{pop, Pipeline};
use crate::error::Error;
use crate::kernel::{Artifact, KernelInfo};

/// The variable that forces a shader path.
pub(super) const SHADER_VAR: &str = "RGPU_WGPU_SHADER";

/// How the SPIR-V is handed to wgpu.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ShaderPath {
    Passthrough,
    Naga,
}

/// `RGPU_WGPU_SHADER` (`None` = unset) and whether the adapter can pass SPIR-V through.
pub(super) fn shader_path(value: Option<&str>, can_pass: bool) -> Result<ShaderPath, Error> {
    match value.map(str::trim) {
        Some("naga") => Ok(ShaderPath::Naga),
        Some("passthrough") if can_pass => Ok(ShaderPath::Passthrough),
        Some("passthrough") => Err(Error::unavailable(
            BACKEND,
            format!(
                "{SHADER_VAR}=passthrough, but this adapter has no PASSTHROUGH_SHADERS: unset \
                 it or set it to naga"
            ),
        )),
        Some(other) if !other.is_empty() => Err(Error::Config {
            reason: format!(
                "{SHADER_VAR}={other} is not a shader path: set it to passthrough or naga"
            ),
        }),
        _ if can_pass => Ok(ShaderPath::Passthrough),
        _ => Ok(ShaderPath::Naga),
    }
}

/// A module as wgpu holds it.
pub(super) struct Module {
    shader: wgpu::ShaderModule,
    /// The naga path: for each entry point, the storage buffers of set 0 it uses and
    /// whether naga reads each one read-only. wgpu checks the pipeline layout against
    /// exactly this, so the layout follows it. Empty on the passthrough path.
    read_only: HashMap<String, HashMap<u32, bool>>,
}

/// naga's SPIR-V front end with the options wgpu gives it for `ShaderSource::SpirV`
/// (wgpu 30, backend/wgpu_core.rs), so the module is the one wgpu would have read.
fn parse_spirv(words: &[u32]) -> Result<naga::Module, naga::front::spv::Error> {
    let options = naga::front::spv::Options {
        adjust_coordinate_space: false,
        strict_capabilities: true,
        block_ctx_dump_prefix: None,
    };
    naga::front::spv::Frontend::new(words.iter().copied(), &options).parse()
}

/// For each entry point: each storage buffer of set 0 that it uses and whether naga reads it
/// read-only, from naga's own analysis (the uses wgpu-core checks the layout against; naga's
/// SPIR-V front end gives every function an expression for every global, so naming one is no
/// use). naga honours `NonWritable` on the variable (rust-gpu's `&[T]`), not on the members of
/// a `Block` struct (glslang's `readonly buffer`), so neither the kernel's own access nor the
/// source language says it. `None` when naga's analysis fails: wgpu reports why.
fn read_only_bindings(module: &naga::Module) -> Option<HashMap<String, HashMap<u32, bool>>> {
    let mut validator = naga::valid::Validator::new(
        naga::valid::ValidationFlags::empty(),
        naga::valid::Capabilities::all(),
    );
    let info = validator.validate(module).ok()?;
    let entries = module
        .entry_points
        .iter()
        .enumerate()
        .map(|(index, entry)| {
            let uses = info.get_entry_point(index);
            let bindings = module
                .global_variables
                .iter()
                .filter(|&(handle, _)| !uses[handle].is_empty())
                .filter_map(|(_, global)| match (&global.binding, global.space) {
                    (Some(binding), naga::AddressSpace::Storage { access })
                        if binding.group == 0 =>
                    {
                        Some((
                            binding.binding,
                            !access.contains(naga::StorageAccess::STORE),
                        ))
                    }
                    _ => None,
                })
                .collect();
            (entry.name.clone(), bindings)
        });
    Some(entries.collect())
}

/// A kernel's pipeline and the layout its bind groups follow.
pub(super) type Kernel = Pipeline;

impl WgpuDevice {
    fn shader_module(
        &self,
        artifact: &'static Artifact,
        words: &[u32],
        threads: u32,
    ) -> Result<Module, String> {
        match self.path {
            ShaderPath::Passthrough => {
                let desc = wgpu::ShaderModuleDescriptorPassthrough {
                    label: Some(artifact.target),
                    spirv: Some(Cow::Borrowed(words)),
                    entry_points: artifact
                        .entry_points
                        .iter()
                        .map(|&name| wgpu::PassthroughShaderEntryPoint {
                            name: Cow::Borrowed(name),
                            // Used by Metal only; SPIR-V modules declare their own size.
                            workgroup_size: (threads, 1, 1),
                        })
                        .collect(),
                    ..Default::default()
                };
                // SAFETY: the module is one rgpu embedded after validating it (spirv-val,
                // entry point names), and its interface is the launch ABI that the layouts
                // built here follow (set 0 binding i = buffer i, push constants = params).
                let shader = unsafe { self.gpu.device.create_shader_module_passthrough(desc) };
                Ok(Module {
                    shader,
                    read_only: HashMap::new(),
                })
            }
            ShaderPath::Naga => {
                // Parsed here rather than by wgpu, once: the layout needs naga's view of
                // each binding's access, and wgpu takes the parsed module as it is.
                let module =
                    parse_spirv(words).map_err(|e| format!("naga's SPIR-V front end: {e}"))?;
                let read_only = read_only_bindings(&module).unwrap_or_default();
                let desc = wgpu::ShaderModuleDescriptor {
                    label: Some(artifact.target),
                    source: wgpu::ShaderSource::Naga(Cow::Owned(module)),
                };
                // SAFETY: the kernels check every index against the lengths in their params
                // themselves, so wgpu's extra bounds checks would only cost time.
                let shader = unsafe {
                    self.gpu
                        .device
                        .create_shader_module_trusted(desc, wgpu::ShaderRuntimeChecks::unchecked())
                };
                Ok(Module { shader, read_only })
            }
        }
    }

    /// The kernel's pipeline, made once per device.
    pub(super) fn kernel(
        &self,
        kernel: &'static KernelInfo,
        artifacts: &'static [Artifact],
    ) -> Result<Arc<Kernel>, Error> {
        let artifact = spirv::artifact_for(BACKEND, kernel, artifacts)?;
        let key = spirv::module_key(artifact);
        let mut state = self.state();
        if let Some(k) = state.kernels.get(&(key, kernel.name)) {
            return Ok(Arc::clone(k));
        }
        let state = &mut *state;
        let module = match state.modules.entry(key) {
            Entry::Occupied(made) => made.into_mut(),
            Entry::Vacant(slot) => {
                let words = spirv::words(BACKEND, kernel, artifact)?;
                let scope = self
                    .gpu
                    .device
                    .push_error_scope(wgpu::ErrorFilter::Validation);
                let module = self.shader_module(artifact, &words, kernel.threads);
                let scoped = pop(scope);
                let module =
                    module.map_err(|e| self.gpu.module_rejected(kernel, artifact.target, &e))?;
                if let Some(e) = scoped {
                    return Err(self.gpu.module_rejected(kernel, artifact.target, &e));
                }
                slot.insert(module)
            }
        };
        // On the naga path wgpu requires the access naga read (a binding the entry point
        // never uses is not checked); passthrough: the kernel's, which rust-gpu's SPIR-V
        // declares.
        let declared = module.read_only.get(kernel.name);
        let made = Arc::new(self.gpu.pipeline(kernel, &module.shader, |i, _| {
            declared.and_then(|d| d.get(&i).copied())
        })?);
        state.kernels.insert((key, kernel.name), Arc::clone(&made));
        Ok(made)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rgpu_wgpu_shader_values() {
        assert_eq!(shader_path(None, true), Ok(ShaderPath::Passthrough));
        assert_eq!(shader_path(None, false), Ok(ShaderPath::Naga));
        assert_eq!(shader_path(Some(""), true), Ok(ShaderPath::Passthrough));
        assert_eq!(shader_path(Some("naga"), true), Ok(ShaderPath::Naga));
        assert_eq!(
            shader_path(Some("passthrough"), true),
            Ok(ShaderPath::Passthrough)
        );
        assert!(matches!(
            shader_path(Some("passthrough"), false),
            Err(Error::Unavailable { .. })
        ));
        assert_eq!(
            shader_path(Some("spirv"), true).unwrap_err().to_string(),
            "RGPU_WGPU_SHADER=spirv is not a shader path: set it to passthrough or naga"
        );
    }
}
