//! The launch ABI between the `#[rgpu::kernel]` launchers and the runtime: what a kernel is
//! (`KernelInfo`), the embedded artifacts (`Artifact`), the type-erased arguments (`Arg`),
//! their checks, and `launch` for the GPU backends.

use crate::backend::Backend;
use crate::buffer::{Dst, Src};
use crate::device::{Device, DeviceKind};
use crate::error::Error;

/// How a kernel's invocations are counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// One invocation per item: `count` items, `threads` per workgroup on a GPU.
    Items,
    /// `count` workgroups of `threads` invocations, with workgroup memory and barriers.
    Groups,
}

/// Whether a kernel writes a buffer parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Read,
    ReadWrite,
}

/// One buffer parameter; binding i of descriptor set 0 / device pointer argument 1 + i.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferInfo {
    pub name: &'static str,
    pub access: Access,
    /// Bytes per element.
    pub elem_size: u32,
    /// The kernel indexes it with the item index: in `Mode::Items` it must hold at least
    /// `count` elements.
    pub item: bool,
}

/// One kernel, as the launcher describes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelInfo {
    /// The entry point's name in PTX and SPIR-V (the Rust function's name).
    pub name: &'static str,
    /// Invocations per workgroup.
    pub threads: u32,
    pub mode: Mode,
    /// In declaration order: binding i = `buffers[i]`.
    pub buffers: &'static [BufferInfo],
    /// `size_of` the params struct (push constants / the by-value first argument).
    pub params_size: u32,
    /// Static workgroup memory the kernel declares.
    pub shared_bytes: u32,
}

/// One embedded kernel artifact (the kernel crate's table, generated from rgpu's manifest).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Artifact {
    /// `"ptx"` or `"spirv"`.
    pub kind: &'static str,
    /// `"sm_90"`, `"spirv-unknown-vulkan1.2"`, ...
    pub target: &'static str,
    /// What made it (`"nvptx"`, `"spirv"`, `"external"`, ...).
    pub codegen: &'static str,
    pub entry_points: &'static [&'static str],
    pub sha256: &'static str,
    pub bytes: &'static [u8],
}

/// One buffer argument of a launch, in `KernelInfo::buffers` order.
pub enum Arg<'a> {
    In(Src<'a>),
    InOut(Dst<'a>),
}

/// Most workgroups a CUDA grid has in x (the kernels grid-stride past it).
pub const CUDA_MAX_GRID: u32 = (1 << 31) - 1;

/// Workgroups for `count` in `mode`: items / threads (rounded up) or `count` groups, at
/// least 1 and at most `max`.
pub fn workgroups(mode: Mode, count: u32, threads: u32, max: u32) -> u32 {
    let groups = match mode {
        Mode::Items => count.div_ceil(threads.max(1)),
        Mode::Groups => count,
    };
    groups.clamp(1, max.max(1))
}

/// Checks each buffer's element count against the kernel (fits a `u32`, and in
/// `Mode::Items` an item buffer holds at least `count`), and returns them as `u32`s: the
/// `len_i` fields of the params struct. The cpu launchers call this directly.
pub fn check_lengths(
    kernel: &KernelInfo,
    count: u32,
    elements: &[usize],
) -> Result<Vec<u32>, Error> {
    if elements.len() != kernel.buffers.len() {
        return Err(Error::Argument {
            kernel: kernel.name,
            param: "(buffers)",
            reason: format!(
                "{} buffers given, the kernel takes {}: rebuild the launcher with the kernel",
                elements.len(),
                kernel.buffers.len()
            ),
        });
    }
    kernel
        .buffers
        .iter()
        .zip(elements)
        .map(|(info, &len)| {
            let len32 = u32::try_from(len).map_err(|_| Error::TooLarge {
                what: format!("kernel `{}`, parameter `{}`", kernel.name, info.name),
                len: len as u64,
                limit: u64::from(u32::MAX),
            })?;
            if kernel.mode == Mode::Items && info.item && len32 < count {
                return Err(Error::Argument {
                    kernel: kernel.name,
                    param: info.name,
                    reason: format!("{len} elements, the launch needs at least {count}"),
                });
            }
            Ok(len32)
        })
        .collect()
}

/// Checks the arguments of a GPU launch (kinds, devices, sizes) and returns the element
/// counts.
fn check_args(
    device: &Device,
    kernel: &KernelInfo,
    count: u32,
    args: &[Arg<'_>],
) -> Result<Vec<u32>, Error> {
    if kernel.threads == 0 {
        return Err(Error::Launch {
            backend: device.backend(),
            kernel: kernel.name,
            reason: "the kernel has 0 threads per workgroup: give it at least 1".into(),
        });
    }
    let mut elements = Vec::with_capacity(args.len());
    for (info, arg) in kernel.buffers.iter().zip(args) {
        let argument = |reason: String| Error::Argument {
            kernel: kernel.name,
            param: info.name,
            reason,
        };
        let (bytes, buffer) =
            match (info.access, arg) {
                (Access::Read, Arg::In(src)) => (src.bytes(), matches!(src, Src::Buffer(_))),
                (Access::ReadWrite, Arg::InOut(dst)) => {
                    (dst.bytes(), matches!(dst, Dst::Buffer(_)))
                }
                (access, _) => {
                    return Err(argument(format!(
                    "passed as {}, but the kernel declares it {access:?}: rebuild the launcher \
                     with the kernel",
                    if matches!(arg, Arg::In(_)) { "In" } else { "InOut" }
                )))
                }
            };
        if buffer {
            let owner = match arg {
                Arg::In(Src::Buffer(b)) => &b.device,
                Arg::InOut(Dst::Buffer(b)) => &b.device,
                _ => unreachable!("checked above"),
            };
            if owner.id != device.inner.id {
                return Err(Error::WrongDevice {
                    expected: device.inner.label(),
                    found: owner.label(),
                });
            }
        }
        if info.elem_size == 0 || bytes % info.elem_size as usize != 0 {
            return Err(argument(format!(
                "{bytes} bytes is not a whole number of {}-byte elements: pass the element type \
                 the kernel declares",
                info.elem_size
            )));
        }
        elements.push(bytes / info.elem_size as usize);
    }
    check_lengths(kernel, count, &elements)
}

/// The params bytes, checked against `KernelInfo::params_size` and padded to whole words.
fn params_bytes(
    backend: Backend,
    kernel: &KernelInfo,
    params: &dyn Fn(&[u32]) -> Vec<u8>,
    lens: &[u32],
) -> Result<Vec<u8>, Error> {
    let mut bytes = params(lens);
    if bytes.len() != kernel.params_size as usize {
        return Err(Error::Launch {
            backend,
            kernel: kernel.name,
            reason: format!(
                "the params struct is {} bytes but KernelInfo says {}: rebuild the launcher \
                 with the kernel",
                bytes.len(),
                kernel.params_size
            ),
        });
    }
    bytes.resize(bytes.len().next_multiple_of(4), 0);
    Ok(bytes)
}

/// Runs `kernel` on a GPU device: `count` items (`Mode::Items`) or workgroups
/// (`Mode::Groups`), with `args` bound in order and `params(element counts)` as the params
/// struct. Launches on device `Buffer`s are queued; host-slice outputs are written back
/// before this returns.
pub fn launch(
    device: &Device,
    kernel: &'static KernelInfo,
    artifacts: &'static [Artifact],
    count: u32,
    args: &mut [Arg<'_>],
    params: &dyn Fn(&[u32]) -> Vec<u8>,
) -> Result<(), Error> {
    if args.len() != kernel.buffers.len() {
        return Err(Error::Argument {
            kernel: kernel.name,
            param: "(buffers)",
            reason: format!(
                "{} buffers given, the kernel takes {}: rebuild the launcher with the kernel",
                args.len(),
                kernel.buffers.len()
            ),
        });
    }
    let lens = check_args(device, kernel, count, args)?;
    let params = params_bytes(device.backend(), kernel, params, &lens)?;
    let _ = (&params, artifacts); // unused when no GPU backend is built
    match &device.inner.kind {
        DeviceKind::Cpu(_) => Err(Error::Launch {
            backend: Backend::Cpu,
            kernel: kernel.name,
            reason: "the cpu backend runs kernels through __private::cpu::run_items / \
                     run_groups, not launch(): regenerate the launcher with rgpu's macro"
                .into(),
        }),
        #[cfg(feature = "cuda")]
        DeviceKind::Cuda(d) => d.launch(kernel, artifacts, count, args, &params),
        #[cfg(feature = "wgpu")]
        DeviceKind::Wgpu(d) => d.launch(kernel, artifacts, count, args, &params),
        #[cfg(feature = "ash")]
        DeviceKind::Ash(d) => d.launch(kernel, artifacts, count, args, &params),
        #[cfg(all(feature = "webgpu", target_arch = "wasm32"))]
        DeviceKind::WebGpu(d) => d.launch(kernel, artifacts, count, args, &params),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAXPY_BUFFERS: [BufferInfo; 2] = [
        BufferInfo {
            name: "x",
            access: Access::Read,
            elem_size: 4,
            item: true,
        },
        BufferInfo {
            name: "y",
            access: Access::ReadWrite,
            elem_size: 4,
            item: true,
        },
    ];

    static SAXPY: KernelInfo = KernelInfo {
        name: "saxpy",
        threads: 64,
        mode: Mode::Items,
        buffers: &SAXPY_BUFFERS,
        params_size: 16,
        shared_bytes: 0,
    };

    fn saxpy_params(lens: &[u32]) -> Vec<u8> {
        let p = [16u32, lens[0], lens[1], 2.0f32.to_bits()];
        bytemuck::cast_slice(&p).to_vec()
    }

    #[test]
    fn workgroups_round_up_and_stay_in_range() {
        assert_eq!(workgroups(Mode::Items, 0, 256, CUDA_MAX_GRID), 1);
        assert_eq!(workgroups(Mode::Items, 256, 256, CUDA_MAX_GRID), 1);
        assert_eq!(workgroups(Mode::Items, 257, 256, CUDA_MAX_GRID), 2);
        assert_eq!(
            workgroups(Mode::Items, u32::MAX, 1, CUDA_MAX_GRID),
            CUDA_MAX_GRID
        );
        assert_eq!(workgroups(Mode::Items, u32::MAX, 64, 65535), 65535);
        assert_eq!(workgroups(Mode::Groups, 0, 256, 65535), 1);
        assert_eq!(workgroups(Mode::Groups, 7, 256, 65535), 7);
        assert_eq!(workgroups(Mode::Groups, 70000, 256, 65535), 65535);
    }

    #[test]
    fn a_short_item_buffer_is_an_argument_error() {
        assert_eq!(check_lengths(&SAXPY, 16, &[16, 20]), Ok(vec![16, 20]));
        let e = check_lengths(&SAXPY, 16, &[16, 10]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "kernel `saxpy`, parameter `y`: 10 elements, the launch needs at least 16"
        );
        // In Mode::Groups, count is workgroups: item buffers are not checked against it.
        let groups = KernelInfo {
            mode: Mode::Groups,
            ..SAXPY
        };
        assert_eq!(check_lengths(&groups, 16, &[1, 1]), Ok(vec![1, 1]));
        assert!(matches!(
            check_lengths(&SAXPY, 1, &[1]),
            Err(Error::Argument { .. })
        ));
    }

    #[test]
    #[cfg(target_pointer_width = "64")]
    fn more_than_u32_elements_is_too_large() {
        let e = check_lengths(&SAXPY, 1, &[5_000_000_000, 1]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "kernel `saxpy`, parameter `x`: 5000000000 elements is more than the 4294967295 a \
             kernel indexes: split the data across launches"
        );
    }

    #[test]
    fn launch_checks_arguments_before_the_backend() {
        let device = Device::open(Backend::Cpu).unwrap();
        let x = [1.0f32; 16];
        let mut y = [0.0f32; 10];
        let mut args = [
            Arg::In(Src::Host(bytemuck::cast_slice(&x))),
            Arg::InOut(Dst::Host(bytemuck::cast_slice_mut(&mut y))),
        ];
        let e = launch(&device, &SAXPY, &[], 16, &mut args, &saxpy_params).unwrap_err();
        assert_eq!(
            e,
            Error::Argument {
                kernel: "saxpy",
                param: "y",
                reason: "10 elements, the launch needs at least 16".into()
            }
        );
        // Swapped kinds, odd byte counts and a missing buffer are argument errors too.
        let mut y = [0.0f32; 16];
        let mut swapped = [
            Arg::InOut(Dst::Host(bytemuck::cast_slice_mut(&mut y))),
            Arg::In(Src::Host(bytemuck::cast_slice(&x))),
        ];
        let e = launch(&device, &SAXPY, &[], 16, &mut swapped, &saxpy_params).unwrap_err();
        assert!(matches!(e, Error::Argument { param: "x", .. }), "{e}");
        let odd = [0u8; 63];
        let mut y = [0.0f32; 16];
        let mut args = [
            Arg::In(Src::Host(&odd)),
            Arg::InOut(Dst::Host(bytemuck::cast_slice_mut(&mut y))),
        ];
        let e = launch(&device, &SAXPY, &[], 16, &mut args, &saxpy_params).unwrap_err();
        assert!(e.to_string().contains("63 bytes"), "{e}");
        let e = launch(&device, &SAXPY, &[], 16, &mut [], &saxpy_params).unwrap_err();
        assert!(
            matches!(
                e,
                Error::Argument {
                    param: "(buffers)",
                    ..
                }
            ),
            "{e}"
        );
    }

    #[test]
    fn params_must_match_the_declared_size() {
        let lens = [16, 16];
        assert_eq!(
            params_bytes(Backend::Cuda, &SAXPY, &saxpy_params, &lens)
                .unwrap()
                .len(),
            16
        );
        let short = |_: &[u32]| vec![0u8; 12];
        let e = params_bytes(Backend::Cuda, &SAXPY, &short, &lens).unwrap_err();
        assert!(
            e.to_string().contains("12 bytes but KernelInfo says 16"),
            "{e}"
        );
        let odd = KernelInfo {
            params_size: 6,
            ..SAXPY
        };
        let six = |_: &[u32]| vec![1u8; 6];
        assert_eq!(
            params_bytes(Backend::Ash, &odd, &six, &lens).unwrap(),
            [1, 1, 1, 1, 1, 1, 0, 0]
        );
    }

    #[test]
    fn the_cpu_device_is_not_launched_through_launch() {
        let device = Device::open(Backend::Cpu).unwrap();
        let x = [1.0f32; 16];
        let mut y = [0.0f32; 16];
        let mut args = [
            Arg::In(Src::Host(bytemuck::cast_slice(&x))),
            Arg::InOut(Dst::Host(bytemuck::cast_slice_mut(&mut y))),
        ];
        let e = launch(&device, &SAXPY, &[], 16, &mut args, &saxpy_params).unwrap_err();
        assert!(matches!(e, Error::Launch { .. }), "{e}");
    }

    #[test]
    fn a_buffer_of_another_device_is_wrong_device() {
        let a = Device::open(Backend::Cpu).unwrap();
        let b = Device::open(Backend::Cpu).unwrap();
        let x = b.upload(&[1.0f32; 16]).unwrap();
        let mut y = [0.0f32; 16];
        let mut args = [
            Arg::In(Src::Buffer(x.raw())),
            Arg::InOut(Dst::Host(bytemuck::cast_slice_mut(&mut y))),
        ];
        let e = launch(&a, &SAXPY, &[], 16, &mut args, &saxpy_params).unwrap_err();
        assert!(matches!(e, Error::WrongDevice { .. }), "{e}");
    }
}
