//! rgpu-naga: rgpu's build-time portability check.
//!
//! Reads one SPIR-V module (rust-gpu's output) with naga, the translator wgpu uses at run
//! time where it has no SPIR-V passthrough, and for every compute entry point (kernel):
//! keeps only that entry point (the module compacted), validates it at the capabilities of
//! each platform and writes
//!
//! - `<stem>.<kernel>.wgsl` (WebGPU): buffer i stays `@group(0) @binding(i)`, the params
//!   block (rust-gpu's push-constant variable) becomes a read-only storage buffer at
//!   `@group(0) @binding(<number of buffers>)` (WebGPU has no push constants; a uniform
//!   buffer would need struct parameters at multiples of 16 bytes, storage keeps the
//!   `#[repr(C)]` layout the host writes); before it is validated and written, the kernel's
//!   IR is flattened (flatten.rs, coalesce.rs: phi diamonds as `select`, element-wise
//!   stores, merged copies), which browsers' shader compilers need for rust-gpu's unrolled
//!   code; its first comment line counts the rewrites;
//! - `<stem>.<kernel>.metal` (Metal, MSL 2.4): buffer i at `[[buffer(i)]]`, the params block
//!   (push constants) at the next buffer slot, the runtime-array sizes after it;
//! - `<stem>.<kernel>.hlsl` (DirectX 12, shader model 6.0): read-only buffers `t0..`,
//!   read-write buffers `u0..` in space 0, the params block as root constants at `b0`.
//!
//! It prints one JSON report on stdout: the naga version, and per kernel the number of
//! buffers and per platform either the file written or naga's message. Nothing here is
//! compiled by a platform compiler or run: naga's validator is the only check.
//!
//! Usage: rgpu-naga --spv FILE --out-dir DIR [--kernel NAME]...

mod coalesce;
mod flatten;

use std::collections::BTreeMap;
use std::error::Error as StdError;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use naga::back::{hlsl, msl, wgsl};
use naga::valid::{Capabilities, ModuleInfo, ValidationFlags, Validator};
use naga::{AddressSpace, ResourceBinding, ShaderStage, StorageAccess};
use serde_json::{json, Value};

/// The naga crate this binary is built with (Cargo.toml pins it with `=`).
const NAGA_VERSION: &str = "30.0.1";
const MSL_VERSION: (u8, u8) = (2, 4);
const HLSL_MODEL: hlsl::ShaderModel = hlsl::ShaderModel::V6_0;

#[derive(Clone, Copy)]
enum Platform {
    WebGpu,
    Metal,
    Dx12,
}

impl Platform {
    const ALL: [Platform; 3] = [Platform::WebGpu, Platform::Metal, Platform::Dx12];

    fn key(self) -> &'static str {
        match self {
            Platform::WebGpu => "webgpu",
            Platform::Metal => "metal",
            Platform::Dx12 => "dx12",
        }
    }

    fn language(self) -> &'static str {
        match self {
            Platform::WebGpu => "wgsl",
            Platform::Metal => "msl",
            Platform::Dx12 => "hlsl",
        }
    }

    fn suffix(self) -> &'static str {
        match self {
            Platform::WebGpu => "wgsl",
            Platform::Metal => "metal",
            Platform::Dx12 => "hlsl",
        }
    }

    /// What the platform's shading language can express, as naga's validator knows it.
    fn capabilities(self) -> Capabilities {
        match self {
            // WebGPU core plus its optional `subgroups` and `shader-f16` features: no f64,
            // no 64-bit or 16-bit integers, no push constants.
            Platform::WebGpu => Capabilities::SUBGROUP | Capabilities::SHADER_FLOAT16,
            Platform::Metal => msl::supported_capabilities(),
            Platform::Dx12 => hlsl::supported_capabilities(),
        }
    }
}

struct Args {
    spv: PathBuf,
    out_dir: PathBuf,
    kernels: Vec<String>,
}

fn parse_args() -> Result<Args, String> {
    let mut spv = None;
    let mut out_dir = None;
    let mut kernels = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--spv" => spv = Some(PathBuf::from(value()?)),
            "--out-dir" => out_dir = Some(PathBuf::from(value()?)),
            "--kernel" => kernels.push(value()?),
            "--version" => {
                println!(
                    "rgpu-naga {} (naga {NAGA_VERSION})",
                    env!("CARGO_PKG_VERSION")
                );
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok(Args {
        spv: spv.ok_or("--spv FILE is required")?,
        out_dir: out_dir.ok_or("--out-dir DIR is required")?,
        kernels,
    })
}

/// An error with its causes, on one line.
fn chain(error: &dyn StdError) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let next = cause.to_string();
        if !text.contains(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        source = cause.source();
    }
    text
}

// --- the SPIR-V interface: which buffers an entry point declares ---------------------------

const OP_ENTRY_POINT: u32 = 15;
const OP_VARIABLE: u32 = 59;
const OP_DECORATE: u32 = 71;
const STORAGE_CLASS_STORAGE_BUFFER: u32 = 12;
const DECORATION_BINDING: u32 = 33;

/// Per entry point name: the number of storage buffers its OpEntryPoint interface declares
/// (highest binding + 1). SPIR-V 1.4+ lists every global an entry point uses there, and
/// rust-gpu lists each of the entry's parameters, used or not.
fn interface_buffers(words: &[u32]) -> BTreeMap<String, u32> {
    let mut entries: Vec<(String, Vec<u32>)> = Vec::new();
    let mut storage: BTreeMap<u32, ()> = BTreeMap::new();
    let mut bindings: BTreeMap<u32, u32> = BTreeMap::new();
    let mut at = 5;
    while at < words.len() {
        let count = (words[at] >> 16) as usize;
        let opcode = words[at] & 0xffff;
        if count == 0 || at + count > words.len() {
            break;
        }
        let inst = &words[at..at + count];
        match opcode {
            OP_ENTRY_POINT if count > 3 => {
                let mut name = Vec::new();
                let mut end = 3;
                'name: for (i, w) in inst[3..].iter().enumerate() {
                    for b in w.to_le_bytes() {
                        if b == 0 {
                            end = 3 + i + 1;
                            break 'name;
                        }
                        name.push(b);
                    }
                }
                let name = String::from_utf8_lossy(&name).into_owned();
                entries.push((name, inst[end.min(count)..].to_vec()));
            }
            OP_VARIABLE if count >= 4 && inst[3] == STORAGE_CLASS_STORAGE_BUFFER => {
                storage.insert(inst[2], ());
            }
            OP_DECORATE if count >= 4 && inst[2] == DECORATION_BINDING => {
                bindings.insert(inst[1], inst[3]);
            }
            _ => {}
        }
        at += count;
    }
    entries
        .into_iter()
        .map(|(name, interface)| {
            let n = interface
                .iter()
                .filter(|id| storage.contains_key(id))
                .filter_map(|id| bindings.get(id))
                .map(|b| b + 1)
                .max()
                .unwrap_or(0);
            (name, n)
        })
        .collect()
}

// --- one kernel --------------------------------------------------------------------------

/// The module with only `kernel` left, compacted.
fn only(module: &naga::Module, kernel: &str) -> naga::Module {
    let mut one = module.clone();
    one.entry_points.retain(|e| e.name == kernel);
    naga::compact::compact(&mut one, naga::compact::KeepUnused::No);
    one
}

/// Storage buffers the module's globals bind (binding -> access), group 0.
fn storage_buffers(module: &naga::Module) -> BTreeMap<u32, StorageAccess> {
    module
        .global_variables
        .iter()
        .filter_map(|(_, g)| match (g.space, g.binding) {
            (AddressSpace::Storage { access }, Some(rb)) if rb.group == 0 => {
                Some((rb.binding, access))
            }
            _ => None,
        })
        .collect()
}

fn validate(module: &naga::Module, caps: Capabilities) -> Result<ModuleInfo, String> {
    Validator::new(ValidationFlags::all(), caps)
        .validate(module)
        .map_err(|e| chain(&e.into_inner()))
}

fn webgpu(module: &naga::Module, buffers: u32) -> Result<String, String> {
    let mut module = module.clone();
    for (_, global) in module.global_variables.iter_mut() {
        if global.space == AddressSpace::Immediate {
            global.space = AddressSpace::Storage {
                access: StorageAccess::LOAD,
            };
            global.binding = Some(ResourceBinding {
                group: 0,
                binding: buffers,
            });
        }
    }
    let stats = flatten::flatten(&mut module);
    // The rewrites leave values nobody reads (the composed arrays, the copied loads):
    // compaction drops them, so the WGSL does not evaluate them.
    naga::compact::compact(&mut module, naga::compact::KeepUnused::No);
    let info = validate(&module, Platform::WebGpu.capabilities())?;
    let text =
        wgsl::write_string(&module, &info, wgsl::WriterFlags::empty()).map_err(|e| chain(&e))?;
    let kernel = module
        .entry_points
        .first()
        .map(|e| e.name.clone())
        .unwrap_or_default();
    let text = entry_point_named(text, &kernel)?;
    Ok(format!(
        "{}// rgpu-naga: {} if/else as select, {} element-wise stores, {} stores hoisted, {} \
         copies coalesced\n{text}",
        enables(&text),
        stats.selects,
        stats.element_stores,
        stats.hoisted_stores,
        stats.coalesced
    ))
}

/// The WGSL with its entry point named `kernel`. naga's writer renames an identifier that
/// ends in a digit, is a WGSL keyword or builtin, or holds a double underscore (naga 30,
/// `proc/namer.rs`: `escape_u8` is written `escape_u8_`), and the browser, asked for the
/// kernel's entry point, would find none. The kernel's name is given back where it is a
/// WGSL identifier naga's names do not already use.
fn entry_point_named(text: String, kernel: &str) -> Result<String, String> {
    let written = text
        .split("@compute")
        .nth(1)
        .and_then(|rest| rest.split_once("fn "))
        .and_then(|(_, rest)| rest.split_once('('))
        .map(|(name, _)| name.trim().to_string())
        .ok_or("naga's WGSL has no compute entry point")?;
    if written == kernel {
        return Ok(text);
    }
    let identifier = kernel
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && kernel
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !kernel.starts_with("__")
        && kernel != "_"
        && !naga::keywords::wgsl::RESERVED.contains(&kernel)
        && !naga::keywords::wgsl::BUILTIN_IDENTIFIERS.contains(&kernel);
    let is_part = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let taken = text.match_indices(kernel).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + kernel.len()..].chars().next();
        !before.is_some_and(is_part) && !after.is_some_and(is_part)
    });
    if !identifier || taken {
        return Err(format!(
            "naga names the kernel's WGSL entry point `{written}`, and `{kernel}` cannot be a \
             WGSL entry point name there: rename the kernel (a plain identifier that is no \
             WGSL keyword)"
        ));
    }
    Ok(text.replacen(&format!("fn {written}("), &format!("fn {kernel}("), 1))
}

/// The `enable` directives WGSL wants before a kernel naga 30 writes without them:
/// `subgroups` for subgroup builtins and operations, and, where the kernel has a workgroup
/// barrier, Chromium's `chromium_disable_uniformity_analysis`: naga's SPIR-V reader keeps the
/// entry point's builtins (workgroup id, workgroup count) in private variables, and WGSL's
/// uniformity analysis cannot see that a barrier inside rgpu's workgroup loop is reached by
/// the whole workgroup. Browsers other than Chromium (with unsafe WebGPU APIs allowed) reject
/// that directive: docs/reference.md, WebGPU.
fn enables(text: &str) -> String {
    let mut out = String::new();
    if text.contains("workgroupBarrier") || text.contains("storageBarrier") {
        out.push_str("enable chromium_disable_uniformity_analysis;\n");
    }
    if text.contains("subgroup") {
        out.push_str("enable subgroups;\n");
    }
    out
}

fn metal(module: &naga::Module, kernel: &str, buffers: u32) -> Result<String, String> {
    let info = validate(module, Platform::Metal.capabilities())?;
    let slot =
        |n: u32| u8::try_from(n).map_err(|_| format!("{n} buffers do not fit Metal's slots"));
    let mut resources = msl::BindingMap::default();
    for (binding, access) in storage_buffers(module) {
        resources.insert(
            ResourceBinding { group: 0, binding },
            msl::BindTarget {
                buffer: Some(slot(binding)?),
                mutable: access.contains(StorageAccess::STORE),
                ..Default::default()
            },
        );
    }
    let mut options = msl::Options {
        lang_version: MSL_VERSION,
        fake_missing_bindings: false,
        ..Default::default()
    };
    options.per_entry_point_map.insert(
        kernel.to_string(),
        msl::EntryPointResources {
            resources,
            immediates_buffer: Some(slot(buffers)?),
            sizes_buffer: Some(slot(buffers + 1)?),
        },
    );
    let pipeline = msl::PipelineOptions {
        entry_point: Some((ShaderStage::Compute, kernel.to_string())),
        ..Default::default()
    };
    msl::write_string(module, &info, &options, &pipeline)
        .map(|(text, _)| text)
        .map_err(|e| chain(&e))
}

fn dx12(module: &naga::Module, kernel: &str) -> Result<String, String> {
    let info = validate(module, Platform::Dx12.capabilities())?;
    let mut options = hlsl::Options {
        shader_model: HLSL_MODEL,
        fake_missing_bindings: false,
        immediates_target: Some(hlsl::BindTarget {
            space: 0,
            register: 0,
            binding_array_size: None,
            dynamic_storage_buffer_offsets_index: None,
            restrict_indexing: false,
        }),
        ..Default::default()
    };
    let (mut srv, mut uav) = (0, 0);
    for (binding, access) in storage_buffers(module) {
        let counter = if access.contains(StorageAccess::STORE) {
            &mut uav
        } else {
            &mut srv
        };
        options.binding_map.insert(
            ResourceBinding { group: 0, binding },
            hlsl::BindTarget {
                space: 0,
                register: *counter,
                binding_array_size: None,
                dynamic_storage_buffer_offsets_index: None,
                restrict_indexing: false,
            },
        );
        *counter += 1;
    }
    let pipeline = hlsl::PipelineOptions {
        entry_point: Some((ShaderStage::Compute, kernel.to_string())),
    };
    let mut text = String::new();
    let mut writer = hlsl::Writer::new(&mut text, &options, &pipeline);
    writer.write(module, &info, None).map_err(|e| chain(&e))?;
    Ok(text)
}

fn translate(
    module: &naga::Module,
    kernel: &str,
    declared: u32,
    stem: &str,
    out_dir: &Path,
) -> Value {
    let one = only(module, kernel);
    let referenced = storage_buffers(&one)
        .keys()
        .map(|b| b + 1)
        .max()
        .unwrap_or(0);
    let buffers = declared.max(referenced);
    let mut platforms = serde_json::Map::new();
    for platform in Platform::ALL {
        // naga's writers panic on some inputs (an unbound push-constant block in HLSL):
        // a panic is that platform's failure, with its message, not the end of the report.
        let written = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match platform {
            Platform::WebGpu => webgpu(&one, buffers),
            Platform::Metal => metal(&one, kernel, buffers),
            Platform::Dx12 => dx12(&one, kernel),
        }))
        .unwrap_or_else(|payload| Err(format!("naga panicked: {}", panic_text(&*payload))));
        let entry = match written {
            Ok(text) => {
                let file = format!("{stem}.{kernel}.{}", platform.suffix());
                match std::fs::write(out_dir.join(&file), text) {
                    Ok(()) => json!({"ok": true, "file": file, "language": platform.language()}),
                    Err(e) => json!({"ok": false, "message": format!("cannot write {file}: {e}")}),
                }
            }
            Err(message) => json!({"ok": false, "message": message}),
        };
        platforms.insert(platform.key().to_string(), entry);
    }
    json!({"name": kernel, "buffers": buffers, "platforms": platforms})
}

fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "no message".to_string()
    }
}

fn failed_everywhere(kernel: &str, message: &str) -> Value {
    let platforms: serde_json::Map<String, Value> = Platform::ALL
        .iter()
        .map(|p| {
            (
                p.key().to_string(),
                json!({"ok": false, "message": message}),
            )
        })
        .collect();
    json!({"name": kernel, "buffers": null, "platforms": platforms})
}

/// Why naga could not read a module.
enum ReadFailure {
    Error(naga::front::spv::Error),
    /// The reader panicked: its message and where.
    Panicked(String),
}

fn report(args: &Args) -> Result<Value, String> {
    let bytes =
        std::fs::read(&args.spv).map_err(|e| format!("cannot read {}: {e}", args.spv.display()))?;
    std::fs::create_dir_all(&args.out_dir)
        .map_err(|e| format!("cannot create {}: {e}", args.out_dir.display()))?;
    let stem = args
        .spv
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "module".to_string());
    let words: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let declared = interface_buffers(&words);
    // wgpu's options for SPIR-V input (wgpu-core: strict capabilities, no Y flip).
    let options = naga::front::spv::Options {
        adjust_coordinate_space: false,
        strict_capabilities: true,
        block_ctx_dump_prefix: None,
    };
    // naga's reader panics on some modules (naga 30: `proc/emitter.rs` unwraps `None` when
    // a subgroup operation reads a value another block defined, which rgpu's build rewrites:
    // rgpu/spirv/naga_scopes.py): a module it cannot read, with the panic's message.
    let parsed = std::panic::catch_unwind(|| {
        naga::front::spv::parse_u8_slice(&bytes, &options).map_err(ReadFailure::Error)
    })
    .unwrap_or_else(|payload| {
        let place = PANIC_PLACE.with(|p| p.take());
        Err(ReadFailure::Panicked(format!(
            "{}{place}",
            panic_text(&*payload)
        )))
    });
    let kernels: Vec<Value> = match parsed {
        Ok(module) => {
            let names: Vec<String> = if args.kernels.is_empty() {
                module
                    .entry_points
                    .iter()
                    .filter(|e| e.stage == ShaderStage::Compute)
                    .map(|e| e.name.clone())
                    .collect()
            } else {
                args.kernels.clone()
            };
            // Each kernel alone, as everywhere it runs: WebGPU loads rgpu's per-kernel WGSL,
            // and rgpu's wgpu backend gives wgpu (Metal, DX12) a module with only the
            // kernel's entry point (crates/rgpu-runtime/src/wgpu/shader.rs).
            names
                .iter()
                .map(|k| {
                    if module.entry_points.iter().any(|e| &e.name == k) {
                        translate(
                            &module,
                            k,
                            declared.get(k).copied().unwrap_or(0),
                            &stem,
                            &args.out_dir,
                        )
                    } else {
                        failed_everywhere(k, "naga found no entry point of this name in the module")
                    }
                })
                .collect()
        }
        Err(e) => {
            let message = match e {
                ReadFailure::Error(e) => {
                    format!("naga cannot read the SPIR-V module: {}", chain(&e))
                }
                ReadFailure::Panicked(text) => {
                    format!("naga's SPIR-V reader panicked on the module: {text}")
                }
            };
            let names: Vec<String> = if args.kernels.is_empty() {
                declared.keys().cloned().collect()
            } else {
                args.kernels.clone()
            };
            names
                .iter()
                .map(|k| failed_everywhere(k, &message))
                .collect()
        }
    };
    Ok(json!({
        "naga": NAGA_VERSION,
        "module": args.spv.file_name().map(|s| s.to_string_lossy().into_owned()),
        "msl": format!("{}.{}", MSL_VERSION.0, MSL_VERSION.1),
        "hlsl": "6.0",
        "kernels": kernels,
    }))
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(e) => {
            eprintln!(
                "rgpu-naga: {e}\nusage: rgpu-naga --spv FILE --out-dir DIR [--kernel NAME]..."
            );
            return ExitCode::from(2);
        }
    };
    // Panics are caught and reported with their message: a writer's as that platform's
    // failure (`translate`), any other (naga's reader or validator, rgpu-naga's own
    // rewrites) as the whole run's, with where it happened, instead of a silent exit 101.
    std::panic::set_hook(Box::new(|info| {
        let place = info
            .location()
            .map(|l| format!(" at {}:{}", crate_path(l.file()), l.line()))
            .unwrap_or_default();
        PANIC_PLACE.with(|p| *p.borrow_mut() = place);
    }));
    let outcome = std::panic::catch_unwind(|| report(&args)).unwrap_or_else(|payload| {
        let place = PANIC_PLACE.with(|p| p.take());
        Err(format!("panicked{place}: {}", panic_text(&*payload)))
    });
    match outcome {
        Ok(value) => {
            println!("{value}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("rgpu-naga: {e}");
            ExitCode::from(1)
        }
    }
}

/// A source path from cargo's registry from the crate's folder on (`naga-30.0.1/src/..`).
fn crate_path(file: &str) -> &str {
    match file.split_once("/registry/src/") {
        Some((_, rest)) => rest.split_once('/').map_or(rest, |(_, path)| path),
        None => file,
    }
}

thread_local! {
    /// Where the last panic on this thread happened (set by the panic hook).
    static PANIC_PLACE: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

#[cfg(test)]
mod tests {
    use super::entry_point_named;

    const WGSL: &str = "fn function_() {\n}\n\n@compute @workgroup_size(64, 1, 1) \n\
                        fn escape_u8_(@builtin(local_invocation_id) p: vec3<u32>) {\n    \
                        function_();\n}\n";

    #[test]
    fn the_kernels_name_is_given_back_to_its_entry_point() {
        let text = entry_point_named(WGSL.to_string(), "escape_u8").unwrap();
        assert!(text.contains("fn escape_u8(@builtin"), "{text}");
        assert!(!text.contains("escape_u8_"), "{text}");
        // Already the kernel's name: unchanged.
        let same = WGSL.replace("escape_u8_", "saxpy");
        assert_eq!(entry_point_named(same.clone(), "saxpy").unwrap(), same);
    }

    #[test]
    fn a_name_wgsl_cannot_take_there_is_an_error() {
        // A WGSL keyword, and a name naga's text already uses for something else.
        let keyword = WGSL.replace("escape_u8_", "loop_");
        assert!(entry_point_named(keyword, "loop")
            .unwrap_err()
            .contains("rename the kernel"));
        let taken = WGSL.replace("escape_u8_", "function__1");
        assert!(entry_point_named(taken, "function_").is_err());
    }
}
