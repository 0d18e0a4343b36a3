//! Finding a kernel's SPIR-V among the embedded artifacts, and reading it as words.

use crate::backend::Backend;
use crate::error::Error;
use crate::kernel::{Artifact, KernelInfo};

/// What identifies an embedded module: its sha256, and its address for artifacts without
/// one.
pub(crate) type ModuleKey = (&'static str, usize);

pub(crate) fn module_key(artifact: &'static Artifact) -> ModuleKey {
    (artifact.sha256, artifact.bytes.as_ptr() as usize)
}

/// The SPIR-V artifact whose entry points include the kernel (one module may hold all).
pub(crate) fn artifact_for(
    backend: Backend,
    kernel: &KernelInfo,
    artifacts: &'static [Artifact],
) -> Result<&'static Artifact, Error> {
    artifacts
        .iter()
        .find(|a| a.kind == "spirv" && a.entry_points.contains(&kernel.name))
        .ok_or_else(|| {
            let spirv = artifacts.iter().filter(|a| a.kind == "spirv").count();
            Error::missing_artifact(
                backend,
                kernel.name,
                format!(
                    "none of its {spirv} SPIR-V modules has the entry point `{}`",
                    kernel.name
                ),
            )
        })
}

/// The module as 32-bit words (`include_bytes!` gives no 4-byte alignment, so this copies).
pub(crate) fn words(
    backend: Backend,
    kernel: &KernelInfo,
    artifact: &Artifact,
) -> Result<Vec<u32>, Error> {
    let bytes = artifact.bytes;
    let bad = |what: &str| {
        Error::missing_artifact(
            backend,
            kernel.name,
            format!(
                "the embedded {} module ({} bytes) {what}",
                artifact.target,
                bytes.len()
            ),
        )
    };
    if bytes.len() % 4 != 0 || bytes.len() < 20 {
        return Err(bad("is not a whole SPIR-V module"));
    }
    let words: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    if words[0] != 0x0723_0203 {
        return Err(bad("does not start with the SPIR-V magic number"));
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::Mode;

    static KERNEL: KernelInfo = KernelInfo {
        name: "saxpy",
        threads: 64,
        mode: Mode::Items,
        buffers: &[],
        params_size: 4,
        shared_bytes: 0,
        places: &[],
    };

    const HEADER: [u8; 20] = [
        0x03, 0x02, 0x23, 0x07, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0,
    ];

    fn spirv(entry_points: &'static [&'static str], bytes: &'static [u8]) -> Artifact {
        Artifact {
            kind: "spirv",
            target: "spirv-unknown-vulkan1.2",
            codegen: "spirv",
            entry_points,
            sha256: "",
            bytes,
            faults: &[],
        }
    }

    #[test]
    fn finds_the_module_with_the_entry_point() {
        static ARTIFACTS: [Artifact; 2] = [
            Artifact {
                kind: "spirv",
                target: "spirv-unknown-vulkan1.2",
                codegen: "spirv",
                entry_points: &["other"],
                sha256: "",
                bytes: &HEADER,
                faults: &[],
            },
            Artifact {
                kind: "spirv",
                target: "spirv-unknown-vulkan1.2",
                codegen: "spirv",
                entry_points: &["other", "saxpy"],
                sha256: "",
                bytes: &HEADER,
                faults: &[],
            },
        ];
        let found = artifact_for(Backend::Ash, &KERNEL, &ARTIFACTS).unwrap();
        assert_eq!(found.entry_points, ["other", "saxpy"]);
        let e = artifact_for(Backend::Wgpu, &KERNEL, &ARTIFACTS[..1]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "kernel `saxpy` has no SPIR-V in this binary (none of its 1 SPIR-V modules has the \
             entry point `saxpy`): run rgpu build --backend wgpu"
        );
        assert_eq!(words(Backend::Ash, &KERNEL, found).unwrap()[0], 0x0723_0203);
    }

    #[test]
    fn rejects_what_is_not_spirv() {
        let short = spirv(&["saxpy"], &[3, 2, 0x23, 7]);
        assert!(words(Backend::Ash, &KERNEL, &short).is_err());
        let wrong = spirv(&["saxpy"], &[0; 20]);
        let e = words(Backend::Ash, &KERNEL, &wrong).unwrap_err();
        assert!(e.to_string().contains("magic number"), "{e}");
    }
}
