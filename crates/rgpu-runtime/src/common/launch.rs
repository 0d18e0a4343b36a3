//! What every GPU backend does the same way around a launch: the device limits a launch and
//! an allocation are checked against (one message per mistake, on every backend), buffer
//! sizes in whole words, and the temporaries that carry host-slice arguments.

use crate::api::{Arg, DeviceBuffer, Dst, MemoryOf, Src};
use crate::backend::Backend;
use crate::error::Error;
use crate::kernel::KernelInfo;

/// GPU buffers are whole 4-byte words (copies and fills work on words), and at least one
/// word, so an empty buffer can still be bound.
pub(crate) fn padded_bytes(bytes: usize) -> u64 {
    (bytes.max(4) as u64).next_multiple_of(4)
}

/// What a device allows a launch and a buffer, in the terms every backend shares. Each
/// backend fills it from its API's limits when it opens; `u32::MAX`/`u64::MAX` where the
/// API sets no limit of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Limits {
    /// Bytes of workgroup (shared) memory a kernel may declare.
    pub(crate) max_shared: u32,
    /// Invocations per workgroup.
    pub(crate) max_threads: u32,
    /// Bytes of push constants, where the params travel as push constants (Vulkan); `None`
    /// where they travel another way (CUDA's by-value argument, WebGPU's storage buffer).
    pub(crate) max_params: Option<u32>,
    /// Buffers one kernel may bind (WebGPU: one fewer than its storage buffers, for the
    /// params block).
    pub(crate) max_buffers: u32,
    /// Bytes one buffer binding may cover.
    pub(crate) max_binding: u64,
    /// Workgroups of one dispatch (in x): the kernels grid-stride past it.
    pub(crate) max_groups: u32,
    /// Bytes of one buffer.
    pub(crate) max_buffer: u64,
}

impl Limits {
    /// Checks `kernel` and its arguments against the limits, before anything reaches the
    /// device (and before its code is looked up: the same launch fails the same way
    /// everywhere).
    pub(crate) fn check_launch<B: DeviceBuffer>(
        &self,
        backend: Backend,
        kernel: &KernelInfo,
        args: &[Arg<'_, B>],
    ) -> Result<(), Error> {
        let refuse = |reason: String| Err(Error::launch(backend, kernel.name, reason));
        if kernel.shared_bytes > self.max_shared {
            return refuse(format!(
                "it declares {} bytes of workgroup memory, the device allows {}: use less",
                kernel.shared_bytes, self.max_shared
            ));
        }
        if kernel.threads > self.max_threads {
            return refuse(format!(
                "{} threads per workgroup, the device allows {}: use fewer",
                kernel.threads, self.max_threads
            ));
        }
        if let Some(max) = self.max_params.filter(|&max| kernel.params_size > max) {
            return refuse(format!(
                "its params are {} bytes, the device's push constants hold {max}: pass fewer \
                 scalars",
                kernel.params_size
            ));
        }
        if kernel.buffers.len() as u64 > u64::from(self.max_buffers) {
            return refuse(format!(
                "{} buffers, the device binds at most {}: pass fewer",
                kernel.buffers.len(),
                self.max_buffers
            ));
        }
        for (info, arg) in kernel.buffers.iter().zip(args) {
            let bytes = arg.bytes();
            if padded_bytes(bytes) > self.max_binding {
                return Err(Error::Argument {
                    kernel: kernel.name,
                    param: info.name,
                    reason: format!(
                        "{bytes} bytes, the device binds at most {} bytes: split the data",
                        self.max_binding
                    ),
                });
            }
        }
        Ok(())
    }

    /// The size of a new buffer of `bytes` (whole words), or `Error::OutOfMemory` when the
    /// device cannot have a buffer that large.
    pub(crate) fn check_buffer(&self, backend: Backend, bytes: usize) -> Result<u64, Error> {
        let size = padded_bytes(bytes);
        if size > self.max_buffer {
            return Err(Error::out_of_memory(
                backend,
                bytes as u64,
                format!("the device's largest buffer is {} bytes", self.max_buffer),
            ));
        }
        Ok(size)
    }
}

/// The bytes of each host-slice argument (to upload into a temporary), `None` for device
/// buffers, in argument order.
pub(crate) fn host_inputs<'a, B>(args: &'a [Arg<'_, B>]) -> impl Iterator<Item = Option<&'a [u8]>> {
    args.iter().map(|arg| match arg {
        Arg::In(Src::Host(data)) => Some(&**data),
        Arg::InOut(Dst::Host(data)) => Some(&**data),
        _ => None,
    })
}

/// The memory each argument is bound with: its temporary where it has one (a host slice),
/// else its device buffer's.
// Not cuda's: it takes its read-write buffers' pointers through `&mut` (cudarc's records).
#[cfg_attr(
    not(any(feature = "wgpu", feature = "ash", target_arch = "wasm32")),
    allow(dead_code)
)]
pub(crate) fn bound<'a, M, B: MemoryOf<M>>(
    backend: Backend,
    kernel: &KernelInfo,
    args: &'a [Arg<'_, B>],
    temporaries: &'a [Option<M>],
) -> Result<Vec<&'a M>, Error> {
    args.iter()
        .zip(temporaries)
        .map(|(arg, temporary)| {
            let memory = match (arg, temporary) {
                (_, Some(t)) => Some(t),
                (Arg::In(Src::Buffer(b)), None) => b.memory(),
                (Arg::InOut(Dst::Buffer(b)), None) => b.memory(),
                _ => None,
            };
            memory.ok_or_else(|| Error::foreign_buffer(backend, kernel.name))
        })
        .collect()
}

/// The host-slice outputs of a launch with the temporaries that hold their results, to
/// read back after it.
pub(crate) fn host_outputs<'a, M, B>(
    args: &'a mut [Arg<'_, B>],
    temporaries: &'a [Option<M>],
) -> Vec<(&'a M, &'a mut [u8])> {
    args.iter_mut()
        .zip(temporaries)
        .filter_map(|(arg, temporary)| match (arg, temporary) {
            (Arg::InOut(Dst::Host(out)), Some(t)) => Some((t, &mut **out)),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::tests::SAXPY;

    struct Bytes(usize);

    impl DeviceBuffer for Bytes {
        fn bytes(&self) -> usize {
            self.0
        }
    }

    const LIMITS: Limits = Limits {
        max_shared: 1024,
        max_threads: 64,
        max_params: Some(16),
        max_buffers: 2,
        max_binding: 64,
        max_groups: 65535,
        max_buffer: 128,
    };

    fn check(kernel: &KernelInfo, x: usize) -> String {
        let (x, y) = (Bytes(x), Bytes(4));
        let args = [Arg::In(Src::Buffer(&x)), Arg::In(Src::Buffer(&y))];
        match LIMITS.check_launch(Backend::Ash, kernel, &args) {
            Ok(()) => "ok".into(),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn buffers_are_whole_words() {
        assert_eq!(padded_bytes(0), 4);
        assert_eq!(padded_bytes(3), 4);
        assert_eq!(padded_bytes(4), 4);
        assert_eq!(padded_bytes(5), 8);
    }

    #[test]
    fn each_limit_has_one_message() {
        assert_eq!(check(&SAXPY, 64), "ok");
        let shared = KernelInfo {
            shared_bytes: 2048,
            ..SAXPY
        };
        assert_eq!(
            check(&shared, 4),
            "kernel `saxpy` failed to launch on ash: it declares 2048 bytes of workgroup \
             memory, the device allows 1024: use less"
        );
        let threads = KernelInfo {
            threads: 128,
            ..SAXPY
        };
        assert_eq!(
            check(&threads, 4),
            "kernel `saxpy` failed to launch on ash: 128 threads per workgroup, the device \
             allows 64: use fewer"
        );
        let params = KernelInfo {
            params_size: 20,
            ..SAXPY
        };
        assert_eq!(
            check(&params, 4),
            "kernel `saxpy` failed to launch on ash: its params are 20 bytes, the device's \
             push constants hold 16: pass fewer scalars"
        );
        let no_push_constants = Limits {
            max_params: None,
            ..LIMITS
        };
        let (x, y) = (Bytes(4), Bytes(4));
        let args = [Arg::In(Src::Buffer(&x)), Arg::In(Src::Buffer(&y))];
        assert!(no_push_constants
            .check_launch(Backend::Cuda, &params, &args)
            .is_ok());
        let one = Limits {
            max_buffers: 1,
            ..LIMITS
        };
        assert_eq!(
            one.check_launch(Backend::Wgpu, &SAXPY, &args)
                .unwrap_err()
                .to_string(),
            "kernel `saxpy` failed to launch on wgpu: 2 buffers, the device binds at most 1: \
             pass fewer"
        );
        assert_eq!(
            check(&SAXPY, 65),
            "kernel `saxpy`, parameter `x`: 65 bytes, the device binds at most 64 bytes: split \
             the data"
        );
    }

    #[test]
    fn a_buffer_beyond_the_largest_is_out_of_memory() {
        assert_eq!(LIMITS.check_buffer(Backend::Wgpu, 0), Ok(4));
        assert_eq!(LIMITS.check_buffer(Backend::Wgpu, 127), Ok(128));
        assert_eq!(
            LIMITS
                .check_buffer(Backend::Wgpu, 129)
                .unwrap_err()
                .to_string(),
            "wgpu: cannot allocate 129 bytes (the device's largest buffer is 128 bytes): free \
             buffers or use smaller ones"
        );
    }
}
