//! What the Vulkan backends (wgpu, ash) share besides the SPIR-V lookup: the runtime
//! directory Mesa wants. Both run the embedded SPIR-V with the same interface (descriptor set 0,
//! binding i = buffer i, the params struct as push constants at offset 0).

/// Before the Vulkan loader is first opened: when `XDG_RUNTIME_DIR` is unset or empty (a
/// container, ssh, CI), point it at a private directory, `<temp>/rgpu-runtime-<uid>` (mode
/// 0700, ours, as the XDG spec asks; the same one `rgpu run` gives its children). Mesa's
/// drivers print "XDG_RUNTIME_DIR is invalid or not set in the environment" otherwise,
/// though compute works. Done once per process; nothing is changed when the variable is
/// set or the directory cannot be had.
pub(crate) fn ensure_runtime_dir() {
    #[cfg(target_os = "linux")]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            const VAR: &str = "XDG_RUNTIME_DIR";
            if std::env::var_os(VAR).is_some_and(|v| !v.is_empty()) {
                return;
            }
            if let Some(dir) = private_runtime_dir() {
                // Set before any Vulkan code runs (the loader reads the environment when it
                // initialises, and this is the first Vulkan call of the process).
                std::env::set_var(VAR, dir);
            }
        });
    }
}

#[cfg(target_os = "linux")]
fn private_runtime_dir() -> Option<std::path::PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};

    let uid = std::fs::metadata("/proc/self").ok()?.uid();
    let dir = std::env::temp_dir().join(format!("rgpu-runtime-{uid}"));
    let _ = std::fs::DirBuilder::new().mode(0o700).create(&dir);
    let meta = std::fs::symlink_metadata(&dir).ok()?;
    let private = meta.is_dir() && meta.uid() == uid && meta.permissions().mode() & 0o077 == 0;
    private.then_some(dir)
}
