//! The kernel artifacts embedded in this binary (PTX, SPIR-V), as listed by rgpu's manifest.

/// One embedded kernel artifact.
#[derive(Debug)]
pub struct Kernel {
    /// `"ptx"` or `"spirv"`.
    pub kind: &'static str,
    /// `"sm_80"`, `"spirv-unknown-vulkan1.2"`, ...
    pub target: &'static str,
    /// The codegen that made it (`"nvptx"`, `"nvvm"`, `"spirv"`, or `"external"`).
    pub codegen: &'static str,
    pub entry_points: &'static [&'static str],
    pub sha256: &'static str,
    pub bytes: &'static [u8],
}

/// Every embedded artifact; empty when the binary was built without rgpu.
pub static KERNELS: &[Kernel] = include!(env!("RGPU_KERNELS_RS"));

/// The embedded artifacts of one kind.
pub fn of_kind(kind: &str) -> impl Iterator<Item = &'static Kernel> + '_ {
    KERNELS.iter().filter(move |k| k.kind == kind)
}
