//! `Backend`: which API runs a launch, by name, built into this binary or not. The list of
//! backends below is the one place outside a backend's folder that names it.

use std::fmt;

/// Every backend, one line each (after its doc comment): the `Backend` variant, its name,
/// the `cfg` under which it is built, what its kernels are embedded as (for
/// `Error::MissingArtifact`), and its folder's device type, which implements `api::Api`.
///
/// `backends!(make)` hands the list to `make!`: `Backend` is made from it here, the enums
/// that dispatch to the folders in `registry.rs`. A new backend is its folder, a line here,
/// and its `mod` in `lib.rs`.
macro_rules! backends {
    ($make:ident) => {
        $make! {
            /// The CPU: rayon over items, coroutines for workgroups. Always built.
            Cpu "cpu" (all()) "code for the cpu" cpu::CpuDevice;
            /// NVIDIA GPUs through the CUDA driver API (cudarc), running embedded PTX.
            Cuda "cuda" (feature = "cuda") "PTX for this GPU" cuda::CudaDevice;
            /// Vulkan (or Metal/DX12) through wgpu, running embedded SPIR-V.
            Wgpu "wgpu" (feature = "wgpu") "SPIR-V" wgpu::WgpuDevice;
            /// Vulkan 1.2 through ash, running embedded SPIR-V.
            Ash "ash" (feature = "ash") "SPIR-V" ash::AshDevice;
            /// The browser's WebGPU (wasm32, through wgpu), running embedded WGSL.
            WebGpu "webgpu" (all(feature = "webgpu", target_arch = "wasm32")) "WGSL" webgpu::WebGpuDevice;
        }
    };
}
pub(crate) use backends;

macro_rules! define_backend {
    ($($(#[$doc:meta])* $variant:ident $name:literal ($($cfg:tt)*) $code:literal
        $folder:ident :: $device:ident;)*) => {
        /// How many backends there are.
        const COUNT: usize = [$(Backend::$variant),*].len();

        /// Every backend the runtime knows, built into this binary or not.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Backend {
            $($(#[$doc])* $variant,)*
        }

        impl Backend {
            pub const ALL: [Backend; COUNT] = [$(Backend::$variant),*];

            pub const fn name(self) -> &'static str {
                match self {
                    $(Backend::$variant => $name,)*
                }
            }

            /// Whether this binary was built with the backend's cargo feature (cpu always
            /// is).
            pub const fn is_built(self) -> bool {
                match self {
                    $(Backend::$variant => cfg!($($cfg)*),)*
                }
            }

            /// What its kernels are embedded as: "PTX for this GPU", "SPIR-V", ...
            pub(crate) const fn kernel_code(self) -> &'static str {
                match self {
                    $(Backend::$variant => $code,)*
                }
            }
        }
    };
}

backends!(define_backend);

impl Backend {
    /// The order `Device::auto` tries them in: the GPU backends in `ALL`'s order, then the
    /// cpu (it always opens).
    pub const AUTO_ORDER: [Backend; COUNT] = {
        let mut order = [Backend::Cpu; COUNT];
        let (mut i, mut at) = (0, 0);
        while i < COUNT {
            if !matches!(Backend::ALL[i], Backend::Cpu) {
                order[at] = Backend::ALL[i];
                at += 1;
            }
            i += 1;
        }
        order
    };

    /// Whether a binary for the target being compiled can have this backend at all: the
    /// browser's WebGPU only on wasm32, the native GPU APIs everywhere but there, the cpu
    /// everywhere. `Device::auto` passes over the others without a word (on a native binary,
    /// "webgpu: not built" would send the user to a build that cannot add it).
    pub const fn for_this_target(self) -> bool {
        match self {
            Backend::Cpu => true,
            Backend::WebGpu => cfg!(target_arch = "wasm32"),
            _ => !cfg!(target_arch = "wasm32"),
        }
    }

    /// `"cpu"`, `"cuda"`, `"wgpu"`, `"ash"`, ...: a name of `ALL`.
    pub fn parse(s: &str) -> Option<Backend> {
        Backend::ALL.into_iter().find(|b| b.name() == s)
    }

    /// "cpu, cuda, wgpu, ash": the names, for messages that list them.
    pub(crate) fn names() -> String {
        Backend::ALL.map(Backend::name).join(", ")
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A backend `Device::auto` passed over, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    pub backend: Backend,
    pub reason: String,
}

impl fmt::Display for Skipped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.backend, self.reason)
    }
}

/// The environment variable through which rgpu (`rgpu run --backend X`) picks a backend.
pub const BACKEND_VAR: &str = "RGPU_BACKEND";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for b in Backend::ALL {
            assert_eq!(Backend::parse(b.name()), Some(b));
            assert_eq!(b.to_string(), b.name());
        }
        assert_eq!(Backend::parse("CUDA"), None);
        assert_eq!(Backend::parse("vulkan"), None);
        assert!(Backend::Cpu.is_built());
        assert_eq!(Backend::Cuda.is_built(), cfg!(feature = "cuda"));
        assert_eq!(
            Backend::ALL,
            [
                Backend::Cpu,
                Backend::Cuda,
                Backend::Wgpu,
                Backend::Ash,
                Backend::WebGpu
            ]
        );
        assert_eq!(
            Backend::AUTO_ORDER,
            [
                Backend::Cuda,
                Backend::Wgpu,
                Backend::Ash,
                Backend::WebGpu,
                Backend::Cpu
            ]
        );
    }
}
