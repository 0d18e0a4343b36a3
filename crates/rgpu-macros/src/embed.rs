//! `rgpu::embed_kernels!()`: a crate's table of the artifacts rgpu built for its kernels.
//!
//! rgpu writes them, and `manifest.json` listing them, to `<workspace>/target/rgpu/kernels/`.
//! This macro reads that manifest while the crate compiles and expands to a static table of
//! `include_bytes!` over the files that hold this crate's kernels, plus an `include_str!` of
//! the manifest itself: rustc records all of them as inputs, so cargo rebuilds the crate
//! when, and only when, rgpu writes different kernels. Without a manifest (a plain `cargo
//! build` before any `rgpu build`) it writes an empty one first, so the crate is rebuilt once
//! kernels appear.
//!
//! Which workspace: the rgpu workspace above the crate's own directory (the kernel crate, a
//! library of kernels inside the workspace or vendored into it); for a crate outside every
//! rgpu workspace (a published library in cargo's registry, a path dependency elsewhere),
//! the one `RGPU_WORKSPACE` names, which the workspace's `.cargo/config.toml` sets for every
//! crate cargo compiles (`[env] RGPU_WORKSPACE = { value = ".", relative = true }`). The
//! expansion reads that variable with `option_env!`, so cargo rebuilds the crate when it
//! changes: a library shared by two workspaces in one CARGO_TARGET_DIR never keeps the other
//! workspace's kernels.
//!
//! Which artifacts: the manifest's `kernels` list says which package each kernel belongs to;
//! the table holds the artifacts with an entry point of this package's (`CARGO_PKG_NAME`)
//! kernels. A manifest without that list (written by an older rgpu) gives every artifact.

use std::fs;
use std::path::{Path, PathBuf};

use proc_macro2::TokenStream;
use quote::quote;
use serde_json::Value;

const KERNELS_DIR: &str = "target/rgpu/kernels";
const MANIFEST: &str = "manifest.json";
const EMPTY: &str = "{\n  \"artifacts\": [],\n  \"version\": 2\n}\n";
/// The workspace of crates outside every rgpu workspace (set by its `.cargo/config.toml`).
const WORKSPACE_VAR: &str = "RGPU_WORKSPACE";

/// Whether `dir` is an rgpu workspace root: a Cargo.toml with `[workspace.metadata.rgpu]`.
fn is_workspace(dir: &Path) -> bool {
    let Ok(text) = fs::read_to_string(dir.join("Cargo.toml")) else {
        return false;
    };
    text.lines().any(|l| {
        let l = l.trim();
        l == "[workspace.metadata.rgpu]" || l.starts_with("[workspace.metadata.rgpu.")
    })
}

/// The rgpu workspace whose kernels this crate embeds: the one above `start`, else the
/// one `RGPU_WORKSPACE` names; `Err` when that variable names no rgpu workspace.
fn workspace_root(start: Option<&Path>) -> Result<Option<PathBuf>, String> {
    if let Some(found) = start.and_then(|s| s.ancestors().find(|d| is_workspace(d))) {
        return Ok(Some(found.to_path_buf()));
    }
    match std::env::var_os(WORKSPACE_VAR) {
        Some(named) if !named.is_empty() => {
            let dir = PathBuf::from(named);
            if is_workspace(&dir) {
                Ok(Some(dir))
            } else {
                Err(format!(
                    "{WORKSPACE_VAR}={} is not an rgpu workspace (no Cargo.toml with \
                     [workspace.metadata.rgpu] there); fix: set it to the workspace's root \
                     (the `[env]` table of its .cargo/config.toml: `{WORKSPACE_VAR} = {{ \
                     value = \".\", relative = true }}`)",
                    dir.display()
                ))
            }
        }
        _ => Ok(None),
    }
}

/// The kernels of `package`, from the manifest's `kernels` list; `None` without the list.
fn own_kernels(data: &Value, package: &str) -> Option<Vec<String>> {
    let list = data.get("kernels")?.as_array()?;
    Some(
        list.iter()
            .filter(|k| k.get("package").and_then(Value::as_str) == Some(package))
            .filter_map(|k| k.get("name").and_then(Value::as_str).map(str::to_string))
            .collect(),
    )
}

/// Whether an artifact has an entry point of `kernels` (every artifact, without a list).
fn holds(value: &Value, kernels: Option<&[String]>) -> bool {
    let Some(kernels) = kernels else {
        return true;
    };
    value
        .get("entry_points")
        .and_then(Value::as_array)
        .is_some_and(|entries| {
            entries
                .iter()
                .filter_map(Value::as_str)
                .any(|e| kernels.iter().any(|k| k == e))
        })
}

fn text(value: &Value, key: &str) -> Result<String, String> {
    value
        .get(key)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| format!("an artifact has no `{key}`"))
}

/// The strings of a JSON array (none where it is missing).
fn strings(array: Option<&Value>) -> Vec<String> {
    array
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
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
    let entries = strings(value.get("entry_points"));
    // A checked build's SPIR-V: each fault site's format string (rgpu/spirv/faults.py).
    let faults = strings(
        value
            .get("extra")
            .and_then(|e| e.get("checked_faults"))
            .and_then(|f| f.get("sites")),
    );
    Ok(quote! {
        ::rgpu::__private::Artifact {
            kind: #kind,
            target: #target,
            codegen: #codegen,
            entry_points: &[#(#entries),*],
            sha256: #sha,
            bytes: include_bytes!(#path),
            faults: &[#(#faults),*],
        }
    })
}

fn table(root: &Path, package: &str) -> Result<TokenStream, String> {
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
    let own = own_kernels(&data, package);
    let items = artifacts
        .iter()
        .filter(|a| holds(a, own.as_deref()))
        .map(|a| artifact(&dir, a))
        .collect::<Result<Vec<_>, _>>()?;
    // `rgpu build --checked` (rgpu/checked.py): the launchers return the kernel's panic.
    let checked = data
        .get("checked")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let manifest = manifest
        .to_str()
        .ok_or("the workspace path is not UTF-8")?
        .to_string();
    Ok(quote! {
        #[doc(hidden)]
        pub static __RGPU_ARTIFACTS: &[::rgpu::__private::Artifact] = &[#(#items),*];
        #[doc(hidden)]
        pub const __RGPU_CHECKED: bool = #checked;
        // Makes the manifest an input of this crate: cargo rebuilds it when rgpu rewrites it.
        const _: &str = include_str!(#manifest);
    })
}

pub fn expand() -> TokenStream {
    let start = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from);
    let package = std::env::var("CARGO_PKG_NAME").unwrap_or_default();
    let fail = |message: String| {
        let message = format!("rgpu::embed_kernels!(): {message}");
        quote! { ::core::compile_error!(#message); }
    };
    let body = match workspace_root(start.as_deref()) {
        Ok(Some(root)) => match table(&root, &package) {
            Ok(tokens) => tokens,
            Err(message) => {
                return fail(format!(
                    "{message}; fix: rebuild the kernels with `rgpu build`"
                ))
            }
        },
        // Outside every rgpu workspace and no RGPU_WORKSPACE: no kernels (the cpu backend
        // still runs them).
        Ok(None) => quote! {
            #[doc(hidden)]
            pub static __RGPU_ARTIFACTS: &[::rgpu::__private::Artifact] = &[];
            #[doc(hidden)]
            pub const __RGPU_CHECKED: bool = false;
        },
        Err(message) => return fail(message),
    };
    quote! {
        ::rgpu::__host! {
            #body
            // Makes RGPU_WORKSPACE an input of this crate: cargo rebuilds it when the
            // variable changes (another workspace's build in a shared target directory).
            const _: ::core::option::Option<&str> = ::core::option_env!(#WORKSPACE_VAR);
        }
    }
}
