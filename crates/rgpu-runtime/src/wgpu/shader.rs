//! How the SPIR-V reaches wgpu (passthrough or naga), and each kernel's pipeline.

use std::borrow::Cow;
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::sync::Arc;

use wgpu::naga;

use super::memory::WgpuMemory;
use super::{WgpuDevice, BACKEND};
use crate::common::wgpu_device::{pop, Pipeline};
use crate::common::{fault, spirv};
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

/// A module as the backend keeps it: on the passthrough path wgpu's shader module; on the
/// naga path naga's reading of it (once per module), or why naga could not read it. The
/// naga path makes one shader module per kernel from that reading (`kernel_module`).
pub(super) enum Module {
    Passthrough(wgpu::ShaderModule),
    Naga(Box<Result<naga::Module, String>>),
}

/// One kernel's shader module, and on the naga path the storage buffers of set 0 it uses
/// with whether naga reads each one read-only (wgpu checks the pipeline layout against
/// exactly this, so the layout follows it; empty on the passthrough path).
struct KernelModule<'a> {
    shader: Cow<'a, wgpu::ShaderModule>,
    read_only: HashMap<u32, bool>,
}

/// naga's SPIR-V front end with the options wgpu gives it for `ShaderSource::SpirV`
/// (wgpu 30, backend/wgpu_core.rs), so the module is the one wgpu would have read. naga's
/// reader panics on some modules (naga 30: a subgroup operation reading a value from another
/// block, which rgpu's build rewrites; rgpu/spirv/naga_scopes.py): a panic is
/// naga's refusal, with its message, not the end of the program.
fn parse_spirv(words: &[u32]) -> Result<naga::Module, String> {
    let options = naga::front::spv::Options {
        adjust_coordinate_space: false,
        strict_capabilities: true,
        block_ctx_dump_prefix: None,
    };
    quiet::catch(|| naga::front::spv::Frontend::new(words.iter().copied(), &options).parse())
        .map_err(|panic| format!("naga's SPIR-V reader crashed ({panic})"))?
        .map_err(|e| format!("naga's SPIR-V reader: {e}"))
}

/// The module with `kernel` its only entry point, compacted: what wgpu validates and
/// translates for that kernel's pipeline. wgpu validates every entry point of a module it is
/// given, so without this one kernel that a platform cannot take (an `f64` kernel on Metal)
/// would keep every other kernel of its module off that platform.
fn only(module: &naga::Module, kernel: &str) -> naga::Module {
    let mut one = module.clone();
    one.entry_points.retain(|e| e.name == kernel);
    naga::compact::compact(&mut one, naga::compact::KeepUnused::No);
    one
}

/// The entry point's storage buffers of set 0 that it uses and whether naga reads each one
/// read-only, from naga's own analysis (the uses wgpu-core checks the layout against; naga's
/// SPIR-V front end gives every function an expression for every global, so naming one is no
/// use). naga honours `NonWritable` on the variable (rust-gpu's `&[T]`), not on the members of
/// a `Block` struct (glslang's `readonly buffer`), so neither the kernel's own access nor the
/// source language says it. Empty when naga's analysis fails: wgpu reports why.
fn read_only_bindings(module: &naga::Module) -> HashMap<u32, bool> {
    let mut validator = naga::valid::Validator::new(
        naga::valid::ValidationFlags::empty(),
        naga::valid::Capabilities::all(),
    );
    let Ok(info) = validator.validate(module) else {
        return HashMap::new();
    };
    let mut found = HashMap::new();
    for index in 0..module.entry_points.len() {
        let uses = info.get_entry_point(index);
        for (handle, global) in module.global_variables.iter() {
            if uses[handle].is_empty() {
                continue;
            }
            if let (Some(binding), naga::AddressSpace::Storage { access }) =
                (&global.binding, global.space)
            {
                if binding.group == 0 {
                    found.insert(
                        binding.binding,
                        !access.contains(naga::StorageAccess::STORE),
                    );
                }
            }
        }
    }
    found
}

/// Why a kernel cannot run on the naga path, and what runs it instead.
fn refused(kernel: &str, why: &str) -> String {
    format!(
        "naga, wgpu's shader translator on Metal, DirectX 12 and with {SHADER_VAR}=naga, \
         cannot take kernel `{kernel}`: {why}. `rgpu build` lists each kernel's platforms (its \
         portability warnings); this kernel runs on the ash, cuda and cpu backends, and on \
         Vulkan through wgpu's SPIR-V passthrough (unset {SHADER_VAR})"
    )
}

/// A kernel's pipeline and the layout its bind groups follow.
pub(super) type Kernel = Pipeline;

impl WgpuDevice {
    fn module(&self, artifact: &'static Artifact, words: &[u32], threads: u32) -> Module {
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
                Module::Passthrough(unsafe {
                    self.gpu.device.create_shader_module_passthrough(desc)
                })
            }
            // Parsed here rather than by wgpu, once: the layout needs naga's view of each
            // binding's access, and each kernel gets a module of its own.
            ShaderPath::Naga => Module::Naga(Box::new(parse_spirv(words))),
        }
    }

    /// The kernel's shader module: the module's own on the passthrough path; on the naga
    /// path one made from naga's reading of the module, with only this kernel in it.
    fn kernel_module<'m>(
        &self,
        module: &'m Module,
        artifact: &'static Artifact,
        kernel: &'static str,
    ) -> Result<KernelModule<'m>, String> {
        let parsed = match module {
            Module::Passthrough(shader) => {
                return Ok(KernelModule {
                    shader: Cow::Borrowed(shader),
                    read_only: HashMap::new(),
                })
            }
            Module::Naga(parsed) => parsed.as_ref().as_ref().map_err(|e| refused(kernel, e))?,
        };
        let one = only(parsed, kernel);
        let read_only = read_only_bindings(&one);
        let desc = wgpu::ShaderModuleDescriptor {
            label: Some(artifact.target),
            source: wgpu::ShaderSource::Naga(Cow::Owned(one)),
        };
        let scope = self
            .gpu
            .device
            .push_error_scope(wgpu::ErrorFilter::Validation);
        // SAFETY: the kernels check every index against the lengths in their params
        // themselves, so wgpu's extra bounds checks would only cost time.
        let made = quiet::catch(|| unsafe {
            self.gpu
                .device
                .create_shader_module_trusted(desc, wgpu::ShaderRuntimeChecks::unchecked())
        });
        let scoped = pop(scope);
        let shader = made.map_err(|panic| refused(kernel, &format!("naga crashed ({panic})")))?;
        if let Some(e) = scoped {
            return Err(refused(kernel, &e));
        }
        Ok(KernelModule {
            shader: Cow::Owned(shader),
            read_only,
        })
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
        let launch_error = |reason: String| Error::launch(BACKEND, kernel.name, reason);
        let state = &mut *state;
        let module = match state.modules.entry(key) {
            Entry::Occupied(made) => made.into_mut(),
            Entry::Vacant(slot) => {
                let words = spirv::words(BACKEND, kernel, artifact)?;
                let scope = self
                    .gpu
                    .device
                    .push_error_scope(wgpu::ErrorFilter::Validation);
                let module = self.module(artifact, &words, kernel.threads);
                if let Some(e) = pop(scope) {
                    // The passthrough module itself: rgpu validated it (spirv-val), so the
                    // driver or wgpu refuses what the build accepted.
                    return Err(self.gpu.module_rejected(kernel, artifact.target, &e));
                }
                slot.insert(module)
            }
        };
        let made = self
            .kernel_module(module, artifact, kernel.name)
            .map_err(launch_error)?;
        // On the naga path wgpu requires the access naga read (a binding the entry point
        // never uses is not checked); passthrough: the kernel's, which rust-gpu's SPIR-V
        // declares. On the naga path wgpu translates the kernel here (naga's SPIR-V, MSL or
        // HLSL writer), and a writer can panic: that is naga's refusal too.
        // A checked build's module: its fault record, made with the module's first kernel.
        let fault = if artifact.faults.is_empty() {
            None
        } else {
            let record = match state.faults.get(&key) {
                Some((record, _)) => Arc::clone(record),
                None => {
                    let record = Arc::new(WgpuMemory::new(self.gpu.storage(fault::BYTES, false)?));
                    state
                        .faults
                        .insert(key, (Arc::clone(&record), artifact.faults));
                    record
                }
            };
            Some(record.buffer.clone())
        };
        let pipeline = quiet::catch(|| {
            self.gpu.pipeline(
                kernel,
                &made.shader,
                |i, _| made.read_only.get(&i).copied(),
                fault,
            )
        })
        .map_err(|panic| launch_error(refused(kernel.name, &format!("wgpu crashed ({panic})"))))?;
        let pipeline = match pipeline {
            Err(Error::Launch { reason, .. }) if self.path == ShaderPath::Naga => {
                return Err(launch_error(refused(kernel.name, &reason)))
            }
            other => other?,
        };
        let made = Arc::new(pipeline);
        state.kernels.insert((key, kernel.name), Arc::clone(&made));
        Ok(made)
    }
}

/// Panics caught as errors, without the panic message on stderr: the backend turns a crash
/// of naga or wgpu into an `rgpu::Error`. The process's panic hook is wrapped once; it stays
/// silent only on a thread inside `catch`, and calls the previous hook everywhere else.
mod quiet {
    use std::cell::{Cell, RefCell};
    use std::panic::{self, AssertUnwindSafe};
    use std::sync::Once;

    thread_local! {
        static CATCHING: Cell<bool> = const { Cell::new(false) };
        static CAUGHT: RefCell<String> = const { RefCell::new(String::new()) };
    }

    /// A source path in cargo's registry from the crate's folder on (`naga-30.0.2/src/..`).
    fn crate_path(file: &str) -> &str {
        match file.split_once("/registry/src/") {
            Some((_, rest)) => rest.split_once('/').map_or(rest, |(_, path)| path),
            None => file,
        }
    }

    pub(super) fn catch<R>(f: impl FnOnce() -> R) -> Result<R, String> {
        static HOOK: Once = Once::new();
        HOOK.call_once(|| {
            let previous = panic::take_hook();
            panic::set_hook(Box::new(move |info| {
                if CATCHING.with(Cell::get) {
                    let place = info
                        .location()
                        .map(|l| format!(" at {}:{}", crate_path(l.file()), l.line()))
                        .unwrap_or_default();
                    CAUGHT.with(|c| *c.borrow_mut() = place);
                } else {
                    previous(info);
                }
            }));
        });
        let was = CATCHING.with(|c| c.replace(true));
        let result = panic::catch_unwind(AssertUnwindSafe(f));
        CATCHING.with(|c| c.set(was));
        result.map_err(|payload| {
            let text = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "no message".to_string());
            let place = CAUGHT.with(|c| std::mem::take(&mut *c.borrow_mut()));
            format!("{text}{place}")
        })
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

    /// A module naga 30's SPIR-V reader panics on (`proc/emitter.rs`): a subgroup add after
    /// a loop reads a value the loop's header defined (`OpGroupNonUniformIAdd %uint
    /// %subgroup Reduce %acc`, tests/fixtures/spirv/naga_scopes/subgroup_operand.spvasm).
    const NAGA_PANICS: [u32; 162] = [
        0x07230203, 0x00010500, 0x00070000, 0x0000001a, 0x00000000, 0x00020011, 0x00000001,
        0x00020011, 0x0000003d, 0x00020011, 0x0000003f, 0x0003000e, 0x00000000, 0x00000001,
        0x0006000f, 0x00000005, 0x00000001, 0x6e69616d, 0x00000000, 0x00000002, 0x00060010,
        0x00000001, 0x00000011, 0x00000020, 0x00000001, 0x00000001, 0x00040047, 0x00000003,
        0x00000006, 0x00000004, 0x00050048, 0x00000004, 0x00000000, 0x00000023, 0x00000000,
        0x00030047, 0x00000004, 0x00000002, 0x00040047, 0x00000002, 0x00000022, 0x00000000,
        0x00040047, 0x00000002, 0x00000021, 0x00000000, 0x00020013, 0x00000005, 0x00020014,
        0x00000006, 0x00040015, 0x00000007, 0x00000020, 0x00000000, 0x0004002b, 0x00000007,
        0x00000008, 0x00000000, 0x0004002b, 0x00000007, 0x00000009, 0x00000001, 0x0004002b,
        0x00000007, 0x0000000a, 0x0000000a, 0x0004002b, 0x00000007, 0x0000000b, 0x00000003,
        0x0003001d, 0x00000003, 0x00000007, 0x0003001e, 0x00000004, 0x00000003, 0x00040020,
        0x0000000c, 0x0000000c, 0x00000004, 0x00040020, 0x0000000d, 0x0000000c, 0x00000007,
        0x0004003b, 0x0000000c, 0x00000002, 0x0000000c, 0x00030021, 0x0000000e, 0x00000005,
        0x00050036, 0x00000005, 0x00000001, 0x00000000, 0x0000000e, 0x000200f8, 0x0000000f,
        0x000200f9, 0x00000010, 0x000200f8, 0x00000010, 0x000700f5, 0x00000007, 0x00000011,
        0x00000008, 0x0000000f, 0x00000012, 0x00000013, 0x000700f5, 0x00000007, 0x00000014,
        0x00000008, 0x0000000f, 0x00000015, 0x00000013, 0x000500b0, 0x00000006, 0x00000016,
        0x00000011, 0x0000000a, 0x000400f6, 0x00000017, 0x00000013, 0x00000000, 0x000400fa,
        0x00000016, 0x00000013, 0x00000017, 0x000200f8, 0x00000013, 0x00050080, 0x00000007,
        0x00000015, 0x00000014, 0x00000011, 0x00050080, 0x00000007, 0x00000012, 0x00000011,
        0x00000009, 0x000200f9, 0x00000010, 0x000200f8, 0x00000017, 0x0006015d, 0x00000007,
        0x00000018, 0x0000000b, 0x00000000, 0x00000014, 0x00060041, 0x0000000d, 0x00000019,
        0x00000002, 0x00000008, 0x00000008, 0x0003003e, 0x00000019, 0x00000018, 0x000100fd,
        0x00010038,
    ];

    #[test]
    fn a_module_nagas_reader_crashes_on_is_an_error_not_a_panic() {
        let error = parse_spirv(&NAGA_PANICS).unwrap_err();
        assert!(
            error.starts_with("naga's SPIR-V reader crashed ("),
            "{error}"
        );
        assert!(error.contains("emitter.rs"), "{error}");
        // Outside `quiet::catch` a panic is a panic again.
        assert!(std::panic::catch_unwind(|| panic!("still a panic")).is_err());
    }
}
