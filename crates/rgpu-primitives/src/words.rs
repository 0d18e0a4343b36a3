//! Item kernels that move words: a copy, and the split of `u64` keys (`[low, high]` word
//! pairs) into two word arrays and back, for the radix sort's wide keys.

/// `dst[i] = src[i]`.
#[rgpu::kernel]
pub fn prim_copy(#[item] src: &u32, #[item] dst: &mut u32) {
    *dst = *src;
}

/// `low[i], high[i] = wide[i]`.
#[rgpu::kernel]
pub fn prim_split(#[item] wide: &[u32; 2], #[item] low: &mut u32, #[item] high: &mut u32) {
    *low = wide[0];
    *high = wide[1];
}

/// `wide[i] = [low[i], high[i]]`.
#[rgpu::kernel]
pub fn prim_join(#[item] low: &u32, #[item] high: &u32, #[item] wide: &mut [u32; 2]) {
    *wide = [*low, *high];
}
