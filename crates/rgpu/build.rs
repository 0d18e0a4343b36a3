//! Which implementation of the device API this build uses, as one cfg:
//! `rgpu_codegen = "host" | "nvptx" | "nvvm" | "spirv"`.
//!
//! rustc's nvptx64 target and Rust-CUDA's nvvm codegen compile for the same target, so the
//! `nvvm` feature (set by rgpu's generated nvvm package) tells them apart. The `check-*`
//! features select a GPU implementation on the host, for type-checking only.

use std::env;

fn main() {
    // Only this file decides the cfg (with the target and the features, which cargo tracks
    // itself). Without this line cargo reruns the script whenever any file of the package
    // is newer, and names that file by its absolute path in the fingerprint: every workspace
    // vendoring these crates would then rebuild `rgpu` in a shared CARGO_TARGET_DIR.
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rustc-check-cfg=cfg(rgpu_codegen, values(\"host\", \"nvptx\", \"nvvm\", \"spirv\"))");
    let arch = env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let feature = |name: &str| env::var_os(format!("CARGO_FEATURE_{name}")).is_some();
    let codegen = match arch.as_str() {
        "nvptx64" if feature("NVVM") => "nvvm",
        "nvptx64" => "nvptx",
        "spirv" => "spirv",
        _ if feature("CHECK_NVVM") => "nvvm",
        _ if feature("CHECK_SPIRV") => "spirv",
        _ => "host",
    };
    println!("cargo::rustc-cfg=rgpu_codegen=\"{codegen}\"");
}
