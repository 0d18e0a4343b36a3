/// A per-thread array filled and read with `rgpu::unroll!`: out[i] = 7723 * i (wrapping).
#[rgpu::kernel]
pub fn unrolled(item: rgpu::Item, #[item] out: &mut u32) {
    let mut a = [0u32; 8];
    rgpu::unroll!(J in 0..8 => {
        a[J] = item.index().wrapping_mul(J as u32 + 1);
    });
    let mut acc = 0u32;
    rgpu::unroll!(J in [7, 0, 3] => {
        acc = acc.wrapping_mul(31).wrapping_add(a[J]);
    });
    *out = acc;
}
