//! User-style kernels, each written plainly with rgpu's public kernel API as the README
//! teaches it: a SAXPY, a sum (also as the plain first version, and as a looped two-level
//! sum), an exclusive scan, a byte histogram, a tiled SGEMM, a 2-D blur, a gather and a
//! scatter, an n-body step (`rsqrt`, `mul_add`) and a row softmax (`exp`, f32 subgroup
//! max and add). benchmarks/user_kernels_twins.py has the same algorithms in CUDA C++ (the
//! twins the GPU machine compares against); the host program (src/main.rs) checks every
//! backend against a plain-Rust reference (bit for bit, or within a stated tolerance where
//! the float functions' precision is the backend's).
#![no_std]

rgpu::embed_kernels!();

use rgpu::prelude::*;

// Every kernel but the two below, in the file the portability corpus includes as it is
// (tests/corpus_table.py); these two have the names of other corpus kernels.
mod kernels;
pub use kernels::*;

/// `y = a * x + y`, one rounding (`mul_add`).
#[rgpu::kernel]
pub fn saxpy(a: f32, #[item] x: &f32, #[item] y: &mut f32) {
    *y = a.mul_add(*x, *y);
}

/// `hist[b]` += how many bytes of `words` (4 per word, little end first) equal `b`:
/// per-workgroup counts in workgroup memory (atomics), then one global atomic per bin.
#[rgpu::kernel(threads = 256)]
pub fn histogram(group: Group, words: &[u32], bins: Shared<u32, 256>, hist: Global<u32>) {
    bins.store(group.thread(), 0);
    group.barrier();
    let n = words.len() as u32;
    let stride = group.count() * group.size();
    let mut i = group.global_thread();
    while i < n {
        // SAFETY: i < n.
        let w = unsafe { words.load_unchecked(i) };
        bins.atomic_add(w & 0xff, 1);
        bins.atomic_add((w >> 8) & 0xff, 1);
        bins.atomic_add((w >> 16) & 0xff, 1);
        bins.atomic_add(w >> 24, 1);
        i += stride;
    }
    group.barrier();
    let count = bins.load(group.thread());
    if count != 0 {
        hist.atomic_add(group.thread(), count);
    }
}
