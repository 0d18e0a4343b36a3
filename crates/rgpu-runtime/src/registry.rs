//! The enums that pick a backend at run time, made from the list in `backend.rs`: a
//! `DeviceKind` holds one backend's device, a `Memory` one backend's buffer memory. Each
//! operation is one `match` that hands the call to the backend's `Api` implementation; the
//! backends themselves never see these enums.

use crate::api::{Api, Arg, CopyPath, DeviceBuffer, MemoryOf};
use crate::backend::{backends, Backend};
use crate::devices::{DeviceInfo, Wanted};
use crate::error::Error;
use crate::kernel::{Artifact, KernelInfo};
use crate::stats::{DeviceFacts, KernelStats};

macro_rules! define_registry {
    ($($(#[$doc:meta])* $variant:ident $name:literal ($($cfg:tt)*) $code:literal
        $folder:ident :: $device:ident;)*) => {
        /// One opened backend.
        // One per `Device`, behind an `Arc`: the size difference of the variants costs
        // nothing.
        #[allow(clippy::large_enum_variant)]
        pub(crate) enum DeviceKind {
            $(#[cfg($($cfg)*)] $variant(crate::$folder::$device),)*
        }

        /// A buffer's memory, of the backend of the device that made it.
        pub(crate) enum Memory {
            $(#[cfg($($cfg)*)] $variant(<crate::$folder::$device as Api>::Memory),)*
        }

        // Each folder's device says it is the backend its line names.
        $(#[cfg($($cfg)*)] const _: () = assert!(matches!(
            <crate::$folder::$device as Api>::BACKEND,
            Backend::$variant
        ));)*

        /// Opens the device of `backend` that `wanted` names; `Error::NotBuilt` when this
        /// binary was built without the backend.
        pub(crate) fn open(backend: Backend, wanted: &Wanted) -> Result<DeviceKind, Error> {
            match backend {
                $(#[cfg($($cfg)*)] Backend::$variant => Ok(DeviceKind::$variant(
                    <crate::$folder::$device as Api>::open(wanted)?,
                )),)*
                #[allow(unreachable_patterns)]
                other => Err(Error::NotBuilt { backend: other }),
            }
        }

        /// The devices of `backend`, in its order; `Error::NotBuilt` when this binary was
        /// built without it.
        pub(crate) fn list(backend: Backend) -> Result<Vec<DeviceInfo>, Error> {
            match backend {
                $(#[cfg($($cfg)*)]
                Backend::$variant => <crate::$folder::$device as Api>::list(),)*
                #[allow(unreachable_patterns)]
                other => Err(Error::NotBuilt { backend: other }),
            }
        }

        impl DeviceKind {
            pub(crate) fn backend(&self) -> Backend {
                match self {
                    $(#[cfg($($cfg)*)] DeviceKind::$variant(_) => Backend::$variant,)*
                }
            }

            pub(crate) fn info(&self) -> &DeviceInfo {
                match self {
                    $(#[cfg($($cfg)*)] DeviceKind::$variant(d) => &d.about().info,)*
                }
            }

            pub(crate) fn description(&self) -> String {
                match self {
                    $(#[cfg($($cfg)*)] DeviceKind::$variant(d) => d.description(),)*
                }
            }

            pub(crate) fn facts(&self) -> DeviceFacts {
                match self {
                    $(#[cfg($($cfg)*)] DeviceKind::$variant(d) => d.facts(),)*
                }
            }

            pub(crate) fn kernel_stats(&self) -> Result<Vec<KernelStats>, Error> {
                match self {
                    $(#[cfg($($cfg)*)] DeviceKind::$variant(d) => d.kernel_stats(),)*
                }
            }

            pub(crate) fn upload(&self, data: &[u8], align: usize) -> Result<Memory, Error> {
                match self {
                    $(#[cfg($($cfg)*)]
                    DeviceKind::$variant(d) => d.upload(data, align).map(Memory::$variant),)*
                }
            }

            pub(crate) fn zeros(&self, bytes: usize, align: usize) -> Result<Memory, Error> {
                match self {
                    $(#[cfg($($cfg)*)]
                    DeviceKind::$variant(d) => d.zeros(bytes, align).map(Memory::$variant),)*
                }
            }

            pub(crate) fn read(
                &self,
                memory: &Memory,
                offset: usize,
                out: &mut [u8],
            ) -> Result<(), Error> {
                match (self, memory) {
                    $(#[cfg($($cfg)*)]
                    (DeviceKind::$variant(d), Memory::$variant(m)) => d.read(m, offset, out),)*
                    #[allow(unreachable_patterns)]
                    _ => Err(self.foreign_memory()),
                }
            }

            pub(crate) fn write(
                &self,
                memory: &mut Memory,
                offset: usize,
                data: &[u8],
            ) -> Result<(), Error> {
                match (self, memory) {
                    $(#[cfg($($cfg)*)]
                    (DeviceKind::$variant(d), Memory::$variant(m)) => d.write(m, offset, data),)*
                    #[allow(unreachable_patterns)]
                    _ => Err(self.foreign_memory()),
                }
            }

            pub(crate) fn release(&self, memory: &mut Memory) {
                match (self, memory) {
                    $(#[cfg($($cfg)*)]
                    (DeviceKind::$variant(d), Memory::$variant(m)) => d.release(m),)*
                    #[allow(unreachable_patterns)]
                    _ => {}
                }
            }

            pub(crate) fn copy_path(&self, from: &DeviceKind) -> CopyPath {
                match (self, from) {
                    $(#[cfg($($cfg)*)]
                    (DeviceKind::$variant(d), DeviceKind::$variant(f)) => d.copy_path(f),)*
                    #[allow(unreachable_patterns)]
                    _ => CopyPath::Host,
                }
            }

            pub(crate) fn copy_from_device(
                &self,
                from: &DeviceKind,
                src: &Memory,
                bytes: usize,
            ) -> Option<Result<Memory, Error>> {
                match (self, from, src) {
                    $(#[cfg($($cfg)*)]
                    (DeviceKind::$variant(d), DeviceKind::$variant(f), Memory::$variant(m)) => d
                        .copy_from_device(f, m, bytes)
                        .map(|r| r.map(Memory::$variant)),)*
                    #[allow(unreachable_patterns)]
                    _ => None,
                }
            }

            pub(crate) fn copy_between(
                &self,
                from: &DeviceKind,
                src: &Memory,
                dst: &mut Memory,
            ) -> Option<Result<(), Error>> {
                match (self, from, src, dst) {
                    $(#[cfg($($cfg)*)]
                    (
                        DeviceKind::$variant(d),
                        DeviceKind::$variant(f),
                        Memory::$variant(s),
                        Memory::$variant(m),
                    ) => d.copy_between(f, s, m),)*
                    #[allow(unreachable_patterns)]
                    _ => None,
                }
            }

            pub(crate) fn flush(&self) -> Result<(), Error> {
                match self {
                    $(#[cfg($($cfg)*)] DeviceKind::$variant(d) => d.flush(),)*
                }
            }

            pub(crate) fn sync(&self) -> Result<(), Error> {
                match self {
                    $(#[cfg($($cfg)*)] DeviceKind::$variant(d) => d.sync(),)*
                }
            }

            pub(crate) fn timed<R>(
                &self,
                f: impl FnOnce() -> Result<R, Error>,
            ) -> Result<(R, Option<f64>), Error> {
                match self {
                    $(#[cfg($($cfg)*)] DeviceKind::$variant(d) => d.timed(f),)*
                }
            }

            pub(crate) fn launch<B: HasMemory>(
                &self,
                kernel: &'static KernelInfo,
                artifacts: &'static [Artifact],
                count: u32,
                args: &mut [Arg<'_, B>],
                params: &[u8],
            ) -> Result<(), Error> {
                match self {
                    $(#[cfg($($cfg)*)]
                    DeviceKind::$variant(d) => d.launch(kernel, artifacts, count, args, params),)*
                }
            }
        }

        impl Memory {
            /// The bytes of host memory (a cpu buffer's), else `None`.
            pub(crate) fn host_bytes(&self) -> Option<&[u8]> {
                match self {
                    $(#[cfg($($cfg)*)]
                    Memory::$variant(m) => <crate::$folder::$device as Api>::host_bytes(m),)*
                }
            }

            pub(crate) fn host_bytes_mut(&mut self) -> Option<&mut [u8]> {
                match self {
                    $(#[cfg($($cfg)*)]
                    Memory::$variant(m) => <crate::$folder::$device as Api>::host_bytes_mut(m),)*
                }
            }
        }

        $(
            #[cfg($($cfg)*)]
            impl<B: HasMemory> MemoryOf<<crate::$folder::$device as Api>::Memory> for B {
                fn memory(&self) -> Option<&<crate::$folder::$device as Api>::Memory> {
                    match self.any_memory() {
                        Memory::$variant(m) => Some(m),
                        #[allow(unreachable_patterns)]
                        _ => None,
                    }
                }

                fn memory_mut(
                    &mut self,
                ) -> Option<&mut <crate::$folder::$device as Api>::Memory> {
                    match self.any_memory_mut() {
                        Memory::$variant(m) => Some(m),
                        #[allow(unreachable_patterns)]
                        _ => None,
                    }
                }
            }
        )*
    };
}

backends!(define_registry);

impl DeviceKind {
    /// A buffer's memory reached a device of another backend: cannot happen through the
    /// public API (buffers keep their device), but is a value anyway.
    fn foreign_memory(&self) -> Error {
        Error::transfer(
            self.backend(),
            "a buffer's memory belongs to another backend: report this as an rgpu bug",
        )
    }
}

/// A device buffer argument (the runtime's `RawBuffer`) as the registry sees it: through
/// its `Memory`, it is `MemoryOf` every backend's memory.
// Called through `MemoryOf`, by the backends built.
#[allow(dead_code)]
pub(crate) trait HasMemory: DeviceBuffer {
    fn any_memory(&self) -> &Memory;
    fn any_memory_mut(&mut self) -> &mut Memory;
}
