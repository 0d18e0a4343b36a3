//! The kernels of the multi-device sort's partition (`crate::multi` on the host side): an
//! evenly spaced sample of a shard's keys ([`prim_sample`]), and each key's bucket, the
//! number of splitters below it ([`prim_bucket`], [`prim_bucket_wide`]). The keys then
//! move to their bucket's run by one stable radix pass over the bucket words (the sort's
//! own `prim_radix_upsweep`, `_scan`, `_downsweep_pairs`, digit = bucket), whose totals
//! are the buckets' sizes.

use rgpu::Item;

use crate::key::{KeyKind, KeyMap, Order};

/// The most devices (buckets) a multi-device sort spreads over: one radix digit each.
pub const MAX_BUCKETS: u32 = crate::radix::RADIX;

/// Which keys [`prim_sample`] reads: key `first + i * step` for item `i`, each key `width`
/// words (1, or 2 for a `u64`).
///
/// 16 bytes: a CUDA by-value argument and a Vulkan push constant alike.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SampleParams {
    pub first: u32,
    pub step: u32,
    pub width: u32,
    /// Keys in the source (reads at or past it are not made).
    pub len: u32,
}

// SAFETY: `#[repr(C)]`, four `u32`s: no padding, every bit pattern (all-zero too) is valid.
unsafe impl bytemuck::Zeroable for SampleParams {}
// SAFETY: as above; `Copy` and `'static`.
unsafe impl bytemuck::Pod for SampleParams {}

/// `out[i]` = word `i % width` of key `first + (i / width) * step` of `src`: the evenly
/// spaced sample the host chooses the splitters from (launched over `width * samples`
/// items).
#[rgpu::kernel]
pub fn prim_sample(item: Item, params: SampleParams, src: &[u32], #[item] out: &mut u32) {
    let width = params.width.max(1);
    let i = item.index();
    let key = params.first + (i / width) * params.step;
    let index = key as usize * width as usize + (i % width) as usize;
    if key < params.len && index < src.len() {
        // SAFETY: index < src.len() (checked just above).
        *out = unsafe { *src.get_unchecked(index) };
    }
}

/// How [`prim_bucket`] and [`prim_bucket_wide`] read the keys: `splitters` of them in the
/// buffer, and the key map (`KeyKind` in bits 0..8 of `flags`, `Order` in bit 8).
///
/// 8 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BucketParams {
    pub splitters: u32,
    pub flags: u32,
}

// SAFETY: `#[repr(C)]`, two `u32`s: no padding, every bit pattern (all-zero too) is valid.
unsafe impl bytemuck::Zeroable for BucketParams {}
// SAFETY: as above; `Copy` and `'static`.
unsafe impl bytemuck::Pod for BucketParams {}

impl BucketParams {
    /// `splitters` ordered words (ascending) between the buckets of keys of `kind` in
    /// `order` (a `u64`'s words map as `KeyKind::U32`).
    pub const fn new(splitters: u32, kind: KeyKind, order: Order) -> Self {
        Self {
            splitters,
            flags: kind as u32 | (order as u32) << 8,
        }
    }

    /// The key map, or `None` for flags no host writes.
    #[inline(always)]
    pub fn key_map(&self) -> Option<KeyMap> {
        match (
            KeyKind::from_u32(self.flags & 0xff),
            Order::from_u32((self.flags >> 8) & 1),
        ) {
            (Some(kind), Some(order)) => Some(KeyMap::new(kind, order)),
            _ => None,
        }
    }
}

/// `bucket[i]` = how many of the ordered words `splitters` (ascending, `params.splitters`
/// of them) are below key `i`'s ordered word: keys equal to a splitter go to the bucket
/// above it, all of them.
#[rgpu::kernel]
pub fn prim_bucket(
    params: BucketParams,
    #[item] key: &u32,
    splitters: &[u32],
    #[item] bucket: &mut u32,
) {
    let Some(map) = params.key_map() else {
        return;
    };
    let n = (params.splitters as usize).min(splitters.len());
    let k = map.encode(*key);
    let mut below = 0u32;
    let mut s = 0usize;
    while s < n {
        // SAFETY: s < n <= splitters.len().
        if unsafe { *splitters.get_unchecked(s) } < k {
            below += 1;
        }
        s += 1;
    }
    *bucket = below;
}

/// [`prim_bucket`] for `u64` keys (`[low, high]` words, each mapped as `KeyKind::U32` in
/// the order): `splitters` holds each splitter's ordered `[low, high]` words.
#[rgpu::kernel]
pub fn prim_bucket_wide(
    params: BucketParams,
    #[item] key: &[u32; 2],
    splitters: &[u32],
    #[item] bucket: &mut u32,
) {
    let Some(map) = params.key_map() else {
        return;
    };
    let n = (params.splitters as usize).min(splitters.len() / 2);
    let (lo, hi) = (map.encode(key[0]), map.encode(key[1]));
    let mut below = 0u32;
    let mut s = 0usize;
    while s < n {
        // SAFETY: 2 * s + 1 < 2 * n <= splitters.len().
        let (s_lo, s_hi) = unsafe {
            (
                *splitters.get_unchecked(2 * s),
                *splitters.get_unchecked(2 * s + 1),
            )
        };
        if s_hi < hi || (s_hi == hi && s_lo < lo) {
            below += 1;
        }
        s += 1;
    }
    *bucket = below;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_say_what_the_kernels_read() {
        assert_eq!(core::mem::size_of::<SampleParams>(), 16);
        let p = BucketParams::new(3, KeyKind::F32, Order::Descending);
        assert_eq!(
            p.key_map(),
            Some(KeyMap::new(KeyKind::F32, Order::Descending))
        );
        assert_eq!(
            BucketParams {
                splitters: 1,
                flags: 7
            }
            .key_map(),
            None
        );
    }
}
