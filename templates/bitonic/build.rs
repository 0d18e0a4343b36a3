//! Points the host at the kernels rgpu built.
//!
//! `rgpu build` writes `target/rgpu/manifest.json` and, beside it, `kernels.rs`: a table of
//! `include_bytes!` over every artifact, and sets `RGPU_MANIFEST` for the host build. A plain
//! `cargo build` (no rgpu, CPU only) gets an empty table.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=RGPU_MANIFEST");
    let generated = std::env::var_os("RGPU_MANIFEST")
        .map(|manifest| PathBuf::from(manifest).with_file_name("kernels.rs"))
        .filter(|table| table.is_file());
    let table = match generated {
        Some(table) => {
            println!("cargo:rerun-if-changed={}", table.display());
            table
        }
        None => {
            let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
            let empty = out.join("no_kernels.rs");
            std::fs::write(&empty, "&[]\n").expect("OUT_DIR is writable");
            empty
        }
    };
    println!("cargo:rustc-env=RGPU_KERNELS_RS={}", table.display());
}
