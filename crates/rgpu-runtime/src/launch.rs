//! `launch`: the one entry of the `#[rgpu::kernel]` launchers into the GPU backends. It
//! checks the arguments (kinds, devices, sizes, the params struct) and hands the launch to
//! the device's backend.

use crate::api;
use crate::backend::Backend;
use crate::buffer::{Dst, RawBuffer, Src};
use crate::device::Device;
use crate::error::Error;
use crate::kernel::{check_lengths, Access, Artifact, KernelInfo};

/// One buffer argument of a launch, in `KernelInfo::buffers` order.
pub type Arg<'a> = api::Arg<'a, RawBuffer>;

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
        let bytes = arg.bytes();
        let buffer =
            match (info.access, arg) {
                (Access::Read, Arg::In(src)) => matches!(src, Src::Buffer(_)),
                (Access::ReadWrite, Arg::InOut(dst)) => matches!(dst, Dst::Buffer(_)),
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
    device
        .inner
        .kind
        .launch(kernel, artifacts, count, args, &params)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::tests::{saxpy_params, SAXPY};

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
