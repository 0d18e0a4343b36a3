//! The procedural macros of [rgpu](https://crates.io/crates/rgpu): `#[rgpu::kernel]` and
//! `rgpu::embed_kernels!()`. Use them through the `rgpu` crate, which re-exports them and
//! provides everything their expansions name.
//!
//! `#[rgpu::kernel]` turns one plain Rust function into:
//! - the entry point of each GPU codegen: `extern "ptx-kernel"` for rustc's nvptx64 target,
//!   cuda_std's `#[kernel]` for Rust-CUDA's nvvm, `#[spirv(compute(threads(N)))]` for
//!   rust-gpu (buffers bound in declaration order, values as one push-constant block);
//! - on the host, a typed launcher of the same name that runs it on any `rgpu::Device`,
//!   the CPU included (where the same body runs over the same index space).

use proc_macro::TokenStream;
use syn::ItemFn;

mod embed;
mod expand;
mod model;

/// Makes a plain function a kernel. See the `rgpu` crate's documentation.
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    let function = match syn::parse::<ItemFn>(item) {
        Ok(f) => f,
        Err(e) => return e.to_compile_error().into(),
    };
    match model::parse(attr.into(), function) {
        Ok(kernel) => expand::expand(&kernel).into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// Embeds the kernels rgpu built for this crate (once, in the kernel crate's lib.rs).
#[proc_macro]
pub fn embed_kernels(input: TokenStream) -> TokenStream {
    if !input.is_empty() {
        return syn::Error::new(
            proc_macro2::Span::call_site(),
            "rgpu::embed_kernels!() takes no arguments",
        )
        .to_compile_error()
        .into();
    }
    embed::expand().into()
}
