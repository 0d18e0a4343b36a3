//! `rgpu::embed_kernels!()`: the kernel crate's table of the artifacts rgpu built.
//!
//! rgpu writes them, and `manifest.json` listing them, to `<workspace>/target/rgpu/kernels/`.
//! This macro reads that manifest while the crate compiles and expands to a static table of
//! `include_bytes!` over every file it lists, plus an `include_str!` of the manifest itself:
//! rustc records all of them as inputs, so cargo rebuilds the crate when, and only when, rgpu
//! writes different kernels. Without a manifest (a plain `cargo build` before any `rgpu
//! build`) it writes an empty one first, so the crate is rebuilt once kernels appear.

use std::fs;
use std::path::{Path, PathBuf};

use proc_macro2::TokenStream;
use quote::quote;
use serde_json::Value;

const KERNELS_DIR: &str = "target/rgpu/kernels";
const MANIFEST: &str = "manifest.json";
const EMPTY: &str = "{\n  \"artifacts\": [],\n  \"version\": 2\n}\n";

/// The rgpu workspace root above `start`: a Cargo.toml with `[workspace.metadata.rgpu]`.
fn workspace_root(start: &Path) -> Option<PathBuf> {
    start.ancestors().find_map(|dir| {
        let text = fs::read_to_string(dir.join("Cargo.toml")).ok()?;
        let has_table = text.lines().any(|l| {
            let l = l.trim();
            l == "[workspace.metadata.rgpu]" || l.starts_with("[workspace.metadata.rgpu.")
        });
        has_table.then(|| dir.to_path_buf())
    })
}

fn text(value: &Value, key: &str) -> Result<String, String> {
    value
        .get(key)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| format!("an artifact has no `{key}`"))
}

fn artifact(dir: &Path, value: &Value) -> Result<TokenStream, String> {
    let path = dir.join(text(value, "path")?);
    let path = path
        .to_str()
        .ok_or_else(|| format!("{} is not a UTF-8 path", path.display()))?
        .to_string();
    let (kind, target, codegen, sha) = (
        text(value, "kind")?,
        text(value, "target")?,
        text(value, "codegen")?,
        text(value, "sha256")?,
    );
    let entries: Vec<String> = value
        .get("entry_points")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    Ok(quote! {
        ::rgpu::__private::Artifact {
            kind: #kind,
            target: #target,
            codegen: #codegen,
            entry_points: &[#(#entries),*],
            sha256: #sha,
            bytes: include_bytes!(#path),
        }
    })
}

fn table(root: &Path) -> Result<TokenStream, String> {
    let dir = root.join(KERNELS_DIR);
    let manifest = dir.join(MANIFEST);
    if !manifest.is_file() {
        fs::create_dir_all(&dir)
            .and_then(|()| fs::write(&manifest, EMPTY))
            .map_err(|e| format!("cannot create {}: {e}", manifest.display()))?;
    }
    let raw = fs::read_to_string(&manifest)
        .map_err(|e| format!("cannot read {}: {e}", manifest.display()))?;
    let data: Value = serde_json::from_str(&raw)
        .map_err(|e| format!("{} is not JSON: {e}", manifest.display()))?;
    let artifacts = data
        .get("artifacts")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("{} has no `artifacts` list", manifest.display()))?;
    let items = artifacts
        .iter()
        .map(|a| artifact(&dir, a))
        .collect::<Result<Vec<_>, _>>()?;
    let manifest = manifest
        .to_str()
        .ok_or("the workspace path is not UTF-8")?
        .to_string();
    Ok(quote! {
        #[doc(hidden)]
        pub static __RGPU_ARTIFACTS: &[::rgpu::__private::Artifact] = &[#(#items),*];
        // Makes the manifest an input of this crate: cargo rebuilds it when rgpu rewrites it.
        const _: &str = include_str!(#manifest);
    })
}

pub fn expand() -> TokenStream {
    let start = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from);
    let body = match start.as_deref().and_then(workspace_root) {
        Some(root) => match table(&root) {
            Ok(tokens) => tokens,
            Err(message) => {
                let message = format!(
                    "rgpu::embed_kernels!(): {message}; fix: rebuild the kernels with `rgpu build`"
                );
                return quote! { ::core::compile_error!(#message); };
            }
        },
        // Not inside an rgpu workspace (e.g. the crate is used as a dependency): no kernels.
        None => quote! {
            #[doc(hidden)]
            pub static __RGPU_ARTIFACTS: &[::rgpu::__private::Artifact] = &[];
        },
    };
    quote! { ::rgpu::__host! { #body } }
}
