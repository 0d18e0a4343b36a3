//! `Error`: every way the runtime can fail, each a value with a one-line message that says
//! what went wrong and how to fix it.

use std::fmt;

use crate::backend::Backend;

/// Why an operation of the runtime failed.
///
/// `Debug` prints the same one line as `Display` (the message and its fix), so a `main`
/// that returns `Result<_, rgpu::Error>` ends with `Error: <message>` rather than the
/// variant's fields; `{:#?}` shows the variant and its fields.
#[non_exhaustive]
#[derive(Clone, PartialEq, Eq)]
pub enum Error {
    /// The binary was built without the backend's cargo feature.
    NotBuilt { backend: Backend },
    /// The backend is built in, but this machine cannot run it (no driver, no device, ...).
    Unavailable { backend: Backend, reason: String },
    /// The binary embeds no PTX / SPIR-V for the kernel that this device can run.
    MissingArtifact {
        backend: Backend,
        kernel: &'static str,
        reason: String,
    },
    /// The GPU API refused the launch (or a pipeline for it).
    Launch {
        backend: Backend,
        kernel: &'static str,
        reason: String,
    },
    /// A kernel argument does not fit the kernel (too short, wrong kind, ...).
    Argument {
        kernel: &'static str,
        param: &'static str,
        reason: String,
    },
    /// A buffer of one device (or backend) was used with another: `found` is the buffer's
    /// device, `expected` the one it was used on.
    WrongDevice { expected: String, found: String },
    /// The device asked for (by index or name, in code or `RGPU_DEVICE`) is not one the
    /// backend can open: `reason` says why and lists the devices it has.
    NoDevice {
        backend: Backend,
        asked: String,
        reason: String,
    },
    /// More elements than a kernel can index with a `u32`.
    TooLarge { what: String, len: u64, limit: u64 },
    /// The device could not allocate a buffer.
    OutOfMemory {
        backend: Backend,
        bytes: u64,
        reason: String,
    },
    /// Copying between host and device failed, or waiting for the device did.
    Transfer { backend: Backend, reason: String },
    /// A configuration value (an environment variable) is invalid.
    Config { reason: String },
    /// The backend or its driver cannot report per-kernel statistics
    /// (`Device::kernel_stats`), and why.
    NoKernelStats { backend: Backend, reason: String },
    /// A launch, or a wait for the launches queued before it (`sync`, a read), took longer
    /// than the device's launch timeout (`DeviceOptions::launch_timeout`,
    /// `RGPU_LAUNCH_TIMEOUT_MS`). `kernel` is the kernel launched, or the last one queued
    /// before the wait. A GPU device is unusable afterwards (every call returns this error).
    Timeout {
        backend: Backend,
        kernel: &'static str,
        after_ms: u64,
    },
    /// The driver lost the device (Vulkan's `VK_ERROR_DEVICE_LOST`, wgpu's `device.lost`, a
    /// sticky CUDA error): `reason` is the driver's own text. The device is unusable
    /// afterwards; open a new one.
    DeviceLost { backend: Backend, reason: String },
    /// In a checked build (`rgpu build --checked`), a kernel panicked: an index out of
    /// range of a buffer, or another panic. `kernels`: the kernel launched, or on cuda those
    /// launched since the last wait when there were several (the GPU records the first
    /// fault, not whose it was); `location` is `file:line:column` in the kernel's source,
    /// `message` the panic's (for an index, its value and the buffer's length). The device
    /// stays usable.
    OutOfRange {
        backend: Backend,
        kernels: Vec<&'static str>,
        location: String,
        message: String,
        /// The buffer parameter the kernel's source indexes at `location`, where that is a
        /// parameter's index or method call (`x[i]`, `x.atomic_add(i, v)`).
        parameter: Option<&'static str>,
    },
    /// A collective operation (`Collective`, over NCCL) did not complete on rank `rank` of a
    /// job of `ranks`: NCCL reported an error, or a wait for it ran past the launch timeout
    /// (a rank died, or did not make the same call). Its communicators are aborted (their
    /// kernels end) and the device is unusable afterwards.
    Collective {
        rank: usize,
        ranks: usize,
        reason: String,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NotBuilt { backend } => write!(
                f,
                "built without the {backend} feature: run rgpu build --backend {backend}"
            ),
            Error::Unavailable { backend, reason } => {
                write!(f, "{backend} backend unavailable: {reason}")
            }
            Error::MissingArtifact {
                backend,
                kernel,
                reason,
            } => write!(
                f,
                "kernel `{kernel}` has no {} in this binary ({reason}): run rgpu build \
                 --backend {backend}",
                backend.kernel_code()
            ),
            Error::Launch {
                backend,
                kernel,
                reason,
            } => write!(
                f,
                "kernel `{kernel}` failed to launch on {backend}: {reason}"
            ),
            // A method's arguments (`Collective::all_reduce`), not a kernel's.
            Error::Argument {
                kernel,
                param,
                reason,
            } if kernel.contains("::") => write!(f, "`{kernel}`, argument `{param}`: {reason}"),
            Error::Argument {
                kernel,
                param,
                reason,
            } => write!(f, "kernel `{kernel}`, parameter `{param}`: {reason}"),
            Error::WrongDevice { expected, found } if expected == found => write!(
                f,
                "a buffer of {found} was used on another opening of the same device (each \
                 Device::open is a device of its own): clone the Device to share its buffers, \
                 or copy the data over (Device::copy_from)"
            ),
            Error::WrongDevice { expected, found } => write!(
                f,
                "a buffer of {found} was used on {expected}: upload the data to that device \
                 (Device::upload, Device::copy_from) or pass a host slice"
            ),
            Error::NoDevice {
                backend,
                asked,
                reason,
            } => write!(f, "{backend}: {asked}: {reason}"),
            Error::TooLarge { what, len, limit } => write!(
                f,
                "{what}: {len} elements is more than the {limit} a kernel indexes: split the \
                 data across launches"
            ),
            Error::OutOfMemory {
                backend,
                bytes,
                reason,
            } => write!(
                f,
                "{backend}: cannot allocate {bytes} bytes ({reason}): free buffers or use \
                 smaller ones"
            ),
            Error::Transfer { backend, reason } => {
                write!(
                    f,
                    "{backend}: moving data to or from the device failed: {reason}"
                )
            }
            Error::Config { reason } => f.write_str(reason),
            Error::NoKernelStats { backend, reason } => {
                write!(f, "{backend}: no per-kernel statistics: {reason}")
            }
            // A collective's wait for the other ranks (`Collective::join`), not a kernel.
            Error::Timeout {
                backend,
                kernel,
                after_ms,
            } if kernel.contains("::") => write!(
                f,
                "`{kernel}` on {backend} waited {after_ms} ms (the launch timeout) and not \
                 every rank came: start every process of the job with the same RGPU_NCCL_ID \
                 and its own rank, or raise the limit (RGPU_LAUNCH_TIMEOUT_MS)"
            ),
            Error::Timeout {
                backend,
                kernel,
                after_ms,
            } => write!(
                f,
                "kernel `{kernel}` did not finish on {backend} within {after_ms} ms (the launch \
                 timeout): look for a loop that never ends in it, or raise the limit \
                 (RGPU_LAUNCH_TIMEOUT_MS, DeviceOptions::launch_timeout){}",
                if *backend == Backend::Cpu {
                    // The cpu stops the kernel at its next barrier, atomic or fence and goes on.
                    ""
                } else {
                    "; the device is unusable now, open a new one"
                }
            ),
            Error::DeviceLost { backend, reason } => write!(
                f,
                "{backend}: the driver lost the device ({reason}): open a new Device; if it \
                 happens again, run the kernel on another backend or device to find the fault"
            ),
            Error::OutOfRange {
                backend,
                kernels,
                location,
                message,
                parameter,
            } => {
                let names: Vec<String> = kernels.iter().map(|k| format!("`{k}`")).collect();
                let who = match names.as_slice() {
                    [one] => format!("kernel {one}"),
                    _ => format!(
                        "one of the kernels {} (launched since the last wait)",
                        names.join(", ")
                    ),
                };
                let fix = if ["out of bounds", "out of range", "is past the"]
                    .iter()
                    .any(|m| message.contains(m))
                {
                    "keep the index below the buffer's length"
                } else {
                    "the kernel panicked there"
                };
                let of = parameter.map_or(String::new(), |p| format!(" of parameter `{p}`"));
                write!(
                    f,
                    "{who} failed on {backend} at {location}: {message}{of} (checked launch): \
                     fix the kernel at {location} ({fix})"
                )
            }
            Error::Collective {
                rank,
                ranks,
                reason,
            } => write!(
                f,
                "rank {rank} of {ranks}: a collective operation did not complete ({reason}); \
                 its NCCL communicator is aborted and the device unusable: another rank \
                 failed, exited or did not make the same call (look at the other ranks' \
                 output), then start the job again on new Devices"
            ),
        }
    }
}

/// The one-line message (as `Display`), what `main` prints for an error it returns; the
/// alternate form (`{:#?}`) is the variant with its fields.
impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !f.alternate() {
            return fmt::Display::fmt(self, f);
        }
        match self {
            Error::NotBuilt { backend } => f
                .debug_struct("NotBuilt")
                .field("backend", backend)
                .finish(),
            Error::Unavailable { backend, reason } => f
                .debug_struct("Unavailable")
                .field("backend", backend)
                .field("reason", reason)
                .finish(),
            Error::MissingArtifact {
                backend,
                kernel,
                reason,
            } => f
                .debug_struct("MissingArtifact")
                .field("backend", backend)
                .field("kernel", kernel)
                .field("reason", reason)
                .finish(),
            Error::Launch {
                backend,
                kernel,
                reason,
            } => f
                .debug_struct("Launch")
                .field("backend", backend)
                .field("kernel", kernel)
                .field("reason", reason)
                .finish(),
            Error::Argument {
                kernel,
                param,
                reason,
            } => f
                .debug_struct("Argument")
                .field("kernel", kernel)
                .field("param", param)
                .field("reason", reason)
                .finish(),
            Error::WrongDevice { expected, found } => f
                .debug_struct("WrongDevice")
                .field("expected", expected)
                .field("found", found)
                .finish(),
            Error::NoDevice {
                backend,
                asked,
                reason,
            } => f
                .debug_struct("NoDevice")
                .field("backend", backend)
                .field("asked", asked)
                .field("reason", reason)
                .finish(),
            Error::TooLarge { what, len, limit } => f
                .debug_struct("TooLarge")
                .field("what", what)
                .field("len", len)
                .field("limit", limit)
                .finish(),
            Error::OutOfMemory {
                backend,
                bytes,
                reason,
            } => f
                .debug_struct("OutOfMemory")
                .field("backend", backend)
                .field("bytes", bytes)
                .field("reason", reason)
                .finish(),
            Error::Transfer { backend, reason } => f
                .debug_struct("Transfer")
                .field("backend", backend)
                .field("reason", reason)
                .finish(),
            Error::Config { reason } => f.debug_struct("Config").field("reason", reason).finish(),
            Error::NoKernelStats { backend, reason } => f
                .debug_struct("NoKernelStats")
                .field("backend", backend)
                .field("reason", reason)
                .finish(),
            Error::Timeout {
                backend,
                kernel,
                after_ms,
            } => f
                .debug_struct("Timeout")
                .field("backend", backend)
                .field("kernel", kernel)
                .field("after_ms", after_ms)
                .finish(),
            Error::DeviceLost { backend, reason } => f
                .debug_struct("DeviceLost")
                .field("backend", backend)
                .field("reason", reason)
                .finish(),
            Error::OutOfRange {
                backend,
                kernels,
                location,
                message,
                parameter,
            } => f
                .debug_struct("OutOfRange")
                .field("backend", backend)
                .field("kernels", kernels)
                .field("location", location)
                .field("message", message)
                .field("parameter", parameter)
                .finish(),
            Error::Collective {
                rank,
                ranks,
                reason,
            } => f
                .debug_struct("Collective")
                .field("rank", rank)
                .field("ranks", ranks)
                .field("reason", reason)
                .finish(),
        }
    }
}

impl std::error::Error for Error {}

/// The constructors the backends use, one for each kind of failure they report, so the
/// same failure reads the same on every backend (but for the backend's name).
// Which are called depends on the backends built.
#[allow(dead_code)]
impl Error {
    pub(crate) fn unavailable(backend: Backend, reason: impl Into<String>) -> Self {
        Error::Unavailable {
            backend,
            reason: reason.into(),
        }
    }

    pub(crate) fn transfer(backend: Backend, reason: impl Into<String>) -> Self {
        Error::Transfer {
            backend,
            reason: reason.into(),
        }
    }

    /// A call of the GPU API that failed while moving data or waiting: "what: error".
    pub(crate) fn api_call(backend: Backend, what: &str, error: impl fmt::Display) -> Self {
        Error::transfer(backend, format!("{what}: {error}"))
    }

    /// Errors the GPU reported on its own (outside a call that returns one), joined.
    pub(crate) fn gpu_reported(backend: Backend, errors: &str) -> Self {
        Error::transfer(backend, format!("the GPU reported: {errors}"))
    }

    pub(crate) fn launch(
        backend: Backend,
        kernel: &'static str,
        reason: impl Into<String>,
    ) -> Self {
        Error::Launch {
            backend,
            kernel,
            reason: reason.into(),
        }
    }

    /// A call of the GPU API that failed while preparing or recording a launch.
    pub(crate) fn launch_call(
        backend: Backend,
        kernel: &'static str,
        what: &str,
        error: impl fmt::Display,
    ) -> Self {
        Error::launch(backend, kernel, format!("{what}: {error}"))
    }

    /// A buffer argument whose memory belongs to another backend reached a backend's
    /// launch: `launch` refuses buffers of other devices first, so this is a bug.
    pub(crate) fn foreign_buffer(backend: Backend, kernel: &'static str) -> Self {
        Error::launch(
            backend,
            kernel,
            format!("a buffer of another backend reached {backend}: report this as an rgpu bug"),
        )
    }

    pub(crate) fn missing_artifact(
        backend: Backend,
        kernel: &'static str,
        reason: impl Into<String>,
    ) -> Self {
        Error::MissingArtifact {
            backend,
            kernel,
            reason: reason.into(),
        }
    }

    pub(crate) fn out_of_memory(backend: Backend, bytes: u64, reason: impl Into<String>) -> Self {
        Error::OutOfMemory {
            backend,
            bytes,
            reason: reason.into(),
        }
    }

    /// A wait longer than the launch timeout; `kernel` the last one launched.
    /// A checked launch's fault (`Error::OutOfRange`).
    pub(crate) fn out_of_range(
        backend: Backend,
        kernels: Vec<&'static str>,
        location: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Error::OutOfRange {
            backend,
            kernels,
            location: location.into(),
            message: message.into(),
            parameter: None,
        }
    }

    /// An `OutOfRange` whose location is one of `places` (the faulting kernel's buffer
    /// indexes) with that place's parameter; any other error as it is.
    #[doc(hidden)]
    pub fn with_places(mut self, places: &[crate::kernel::Place]) -> Self {
        if let Error::OutOfRange {
            location,
            parameter: parameter @ None,
            ..
        } = &mut self
        {
            *parameter = line_column(location).and_then(|(line, column)| {
                places
                    .iter()
                    .find(|p| (p.line, p.column) == (line, column))
                    .map(|p| p.param)
            });
        }
        self
    }

    pub(crate) fn timeout(
        backend: Backend,
        kernel: &'static str,
        limit: std::time::Duration,
    ) -> Self {
        Error::Timeout {
            backend,
            kernel,
            after_ms: u64::try_from(limit.as_millis()).unwrap_or(u64::MAX),
        }
    }

    /// The driver lost the device; `reason` is its text.
    pub(crate) fn device_lost(backend: Backend, reason: impl Into<String>) -> Self {
        Error::DeviceLost {
            backend,
            reason: reason.into(),
        }
    }

    pub(crate) fn no_kernel_stats(backend: Backend, reason: impl Into<String>) -> Self {
        Error::NoKernelStats {
            backend,
            reason: reason.into(),
        }
    }

    /// `Device::timed` inside `Device::timed` (on a backend whose timing is a state).
    pub(crate) fn nested_timing() -> Self {
        Error::Config {
            reason: "Device::timed was called inside Device::timed: time the outer call only"
                .into(),
        }
    }

    /// Why a backend was skipped, without the "<backend> backend unavailable" prefix that
    /// `Skipped`'s own Display adds.
    pub(crate) fn skip_reason(&self) -> String {
        match self {
            Error::Unavailable { reason, .. } => reason.clone(),
            other => other.to_string(),
        }
    }
}

/// The line and column of a `file:line:column` location.
pub(crate) fn line_column(location: &str) -> Option<(u32, u32)> {
    let mut parts = location.rsplitn(3, ':');
    let column = parts.next()?.parse().ok()?;
    let line = parts.next()?.parse().ok()?;
    Some((line, column))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_is_the_message_main_prints_and_the_alternate_form_the_fields() {
        let error = Error::Argument {
            kernel: "oob",
            param: "out",
            reason: "is shorter than n".into(),
        };
        // What `fn main() -> Result<(), rgpu::Error>` prints after "Error: ".
        assert_eq!(format!("{error:?}"), error.to_string());
        assert!(!format!("{error:?}").contains("Argument {"));
        let fields = format!("{error:#?}");
        assert!(fields.starts_with("Argument {"), "{fields}");
        assert!(fields.contains("kernel: \"oob\"") && fields.contains("param: \"out\""));
        let every = [
            Error::NotBuilt {
                backend: Backend::Cuda,
            },
            Error::Config {
                reason: "RGPU_DEVICE=x".into(),
            },
            Error::TooLarge {
                what: "n".into(),
                len: 5,
                limit: 4,
            },
        ];
        for error in every {
            assert_eq!(format!("{error:?}"), error.to_string());
            assert!(!format!("{error:#?}").is_empty());
        }
    }

    #[test]
    fn messages_are_one_line_and_name_the_fix() {
        let cases = [
            (
                Error::NotBuilt {
                    backend: Backend::Cuda,
                },
                "built without the cuda feature: run rgpu build --backend cuda",
            ),
            (
                Error::Unavailable {
                    backend: Backend::Cuda,
                    reason: "no CUDA driver".into(),
                },
                "cuda backend unavailable: no CUDA driver",
            ),
            (
                Error::MissingArtifact {
                    backend: Backend::Cuda,
                    kernel: "saxpy",
                    reason: "embedded: sm_90".into(),
                },
                "kernel `saxpy` has no PTX for this GPU in this binary (embedded: sm_90): run \
                 rgpu build --backend cuda",
            ),
            (
                Error::MissingArtifact {
                    backend: Backend::Wgpu,
                    kernel: "saxpy",
                    reason: "no module lists it".into(),
                },
                "kernel `saxpy` has no SPIR-V in this binary (no module lists it): run rgpu \
                 build --backend wgpu",
            ),
            (
                Error::Argument {
                    kernel: "saxpy",
                    param: "y",
                    reason: "10 elements, the launch needs at least 16".into(),
                },
                "kernel `saxpy`, parameter `y`: 10 elements, the launch needs at least 16",
            ),
            (
                Error::TooLarge {
                    what: "x".into(),
                    len: 5_000_000_000,
                    limit: u64::from(u32::MAX),
                },
                "x: 5000000000 elements is more than the 4294967295 a kernel indexes: split the \
                 data across launches",
            ),
        ];
        for (error, text) in cases {
            assert_eq!(error.to_string(), text);
        }
        let all = [
            Error::Launch {
                backend: Backend::Ash,
                kernel: "k",
                reason: "vkQueueSubmit: ERROR_DEVICE_LOST".into(),
            },
            Error::WrongDevice {
                expected: "cuda device 1".into(),
                found: "wgpu device 2".into(),
            },
            Error::WrongDevice {
                expected: "cuda device 1".into(),
                found: "cuda device 1".into(),
            },
            Error::NoDevice {
                backend: Backend::Cuda,
                asked: "RGPU_DEVICE=2".into(),
                reason: "there is no device 2; cuda has one device, 0: A (discrete GPU): set \
                         RGPU_DEVICE to 0"
                    .into(),
            },
            Error::OutOfMemory {
                backend: Backend::Wgpu,
                bytes: 1 << 40,
                reason: "the largest buffer is 2 GiB".into(),
            },
            Error::Transfer {
                backend: Backend::Cuda,
                reason: "cuMemcpyDtoH: CUDA_ERROR_ILLEGAL_ADDRESS".into(),
            },
            Error::Config {
                reason: "RGPU_BACKEND=x: use cpu".into(),
            },
            Error::NoKernelStats {
                backend: Backend::Wgpu,
                reason: "wgpu 30 has no API for them: use the ash or cuda backend".into(),
            },
            Error::Timeout {
                backend: Backend::Ash,
                kernel: "spin",
                after_ms: 500,
            },
            Error::DeviceLost {
                backend: Backend::Ash,
                reason: "vkWaitForFences: ERROR_DEVICE_LOST".into(),
            },
        ];
        for error in all {
            let text = error.to_string();
            assert!(!text.contains('\n'), "{text}");
            assert!(text.contains(':'), "{text}");
        }
    }

    #[test]
    fn a_skip_reason_drops_the_unavailable_prefix() {
        let e = Error::Unavailable {
            backend: Backend::Ash,
            reason: "no Vulkan loader".into(),
        };
        assert_eq!(e.skip_reason(), "no Vulkan loader");
        let e = Error::NotBuilt {
            backend: Backend::Ash,
        };
        assert_eq!(
            e.skip_reason(),
            "built without the ash feature: run rgpu build --backend ash"
        );
    }
}
