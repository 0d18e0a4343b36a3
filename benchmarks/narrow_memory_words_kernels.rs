//! Kernels of benchmarks/narrow_memory_words.sh: the cost of rgpu moving 8-bit memory into
//! 32-bit words (rgpu/artifacts/spirv_narrow_memory.py: a byte load is a word load, a shift
//! and a mask; a byte store an atomic AND and an atomic OR on its word) against the same
//! kernels with Vulkan's native 8-bit storage, and against 32-bit data. Appended to the
//! corpus workspace's kernel crate as `mod bench`.

use rgpu::Item;

/// One byte in, one byte out per item: every store shares its word with three neighbours.
#[rgpu::kernel]
pub fn bytes_map(item: Item, #[item] x: &u8, #[item] out: &mut u8) {
    *out = x.wrapping_mul(3) ^ (item.index() as u8);
}

/// The same map on u32 items (four times the bytes, no narrow memory): the baseline.
#[rgpu::kernel]
pub fn words_map(item: Item, #[item] x: &u32, #[item] out: &mut u32) {
    *out = x.wrapping_mul(3) ^ item.index();
}

/// Sixteen bytes read per item from a slice, one u32 written: narrow loads only.
#[rgpu::kernel]
pub fn bytes_sum16(item: Item, x: &[u8], #[item] out: &mut u32) {
    let base = item.index() as usize * 16;
    let mut sum = 0u32;
    let mut k = 0;
    while k < 16 {
        sum += u32::from(x[base + k]);
        k += 1;
    }
    *out = sum;
}
