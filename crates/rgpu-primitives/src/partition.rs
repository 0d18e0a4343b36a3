//! The kernels that split sorted shards for the multi-device sort (`crate::multi` on the
//! host side): an evenly spaced sample of a shard's keys ([`prim_sample`],
//! [`prim_sample_wide`]), from which the host chooses the splitters, and where each splitter
//! falls in a sorted shard ([`prim_search`], [`prim_search_wide`]: a lower and an upper bound
//! by binary search), which cuts the shard into the contiguous ranges the devices exchange.

use rgpu::Item;

use crate::key::{KeyKind, KeyMap, Order};

/// The most devices a multi-device sort spreads over.
pub const MAX_DEVICES: u32 = 256;

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

/// [`prim_sample`] for `u64` keys: `out[i]` = key `first + i * step` of `src` (`width` is
/// not read; launched over `samples` items).
#[rgpu::kernel]
pub fn prim_sample_wide(
    item: Item,
    params: SampleParams,
    src: &[[u32; 2]],
    #[item] out: &mut [u32; 2],
) {
    let key = params.first + item.index() * params.step;
    if key < params.len && (key as usize) < src.len() {
        // SAFETY: key < src.len() (checked just above).
        *out = unsafe { *src.get_unchecked(key as usize) };
    }
}

/// How [`prim_search`] and [`prim_search_wide`] read a sorted shard: `len` keys, `splitters`
/// splitters, and the key map (`kind`, `order`: a `KeyKind` and an `Order` as `u32`).
///
/// 16 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SearchParams {
    pub len: u32,
    pub splitters: u32,
    pub kind: u32,
    pub order: u32,
}

// SAFETY: `#[repr(C)]`, four `u32`s: no padding, every bit pattern (all-zero too) is valid.
unsafe impl bytemuck::Zeroable for SearchParams {}
// SAFETY: as above; `Copy` and `'static`.
unsafe impl bytemuck::Pod for SearchParams {}

impl SearchParams {
    /// `splitters` ordered words (ascending) to find in `len` keys of `kind` sorted in
    /// `order` (a `u64`'s words map as `KeyKind::U32`).
    pub const fn new(len: u32, splitters: u32, kind: KeyKind, order: Order) -> Self {
        Self {
            len,
            splitters,
            kind: kind as u32,
            order: order as u32,
        }
    }

    /// The key map, or `None` for values no host writes.
    #[inline(always)]
    pub fn key_map(&self) -> Option<KeyMap> {
        match (KeyKind::from_u32(self.kind), Order::from_u32(self.order)) {
            (Some(kind), Some(order)) => Some(KeyMap::new(kind, order)),
            _ => None,
        }
    }
}

/// `out[i]` = where splitter `i / 2` (`splitters[i / 2]`, an ordered word) falls in `keys`,
/// sorted in the params' order: for even `i` the first key whose ordered word is not below
/// it (a lower bound), for odd `i` the first key whose ordered word is above it (an upper
/// bound). Launched over `2 * params.splitters` items; each is one binary search.
#[rgpu::kernel]
pub fn prim_search(
    item: Item,
    params: SearchParams,
    keys: &[u32],
    splitters: &[u32],
    #[item] out: &mut u32,
) {
    let Some(map) = params.key_map() else {
        return;
    };
    let s = item.index() / 2;
    let upper = item.index() % 2 == 1;
    if s >= params.splitters || s as usize >= splitters.len() || keys.len() < params.len as usize {
        return; // not the host's launch
    }
    // SAFETY: s < splitters.len() (checked above).
    let target = unsafe { *splitters.get_unchecked(s as usize) };
    let (mut lo, mut hi) = (0u32, params.len);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        // SAFETY: mid < hi <= params.len <= keys.len().
        let k = map.encode(unsafe { *keys.get_unchecked(mid as usize) });
        if k < target || (upper && k == target) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    *out = lo;
}

/// [`prim_search`] for `u64` keys (`[low, high]` words, each mapped as `KeyKind::U32` in the
/// order, the high word's compared first): `splitters` holds each splitter's ordered `[low,
/// high]` words.
#[rgpu::kernel]
pub fn prim_search_wide(
    item: Item,
    params: SearchParams,
    keys: &[[u32; 2]],
    splitters: &[u32],
    #[item] out: &mut u32,
) {
    let Some(map) = params.key_map() else {
        return;
    };
    let s = item.index() / 2;
    let upper = item.index() % 2 == 1;
    if s >= params.splitters
        || 2 * s as usize + 1 >= splitters.len()
        || keys.len() < params.len as usize
    {
        return; // not the host's launch
    }
    // SAFETY: 2 * s + 1 < splitters.len() (checked above).
    let (t_lo, t_hi) = unsafe {
        (
            *splitters.get_unchecked(2 * s as usize),
            *splitters.get_unchecked(2 * s as usize + 1),
        )
    };
    let (mut lo, mut hi) = (0u32, params.len);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        // SAFETY: mid < hi <= params.len <= keys.len().
        let key = unsafe { *keys.get_unchecked(mid as usize) };
        let (k_lo, k_hi) = (map.encode(key[0]), map.encode(key[1]));
        let below = k_hi < t_hi || (k_hi == t_hi && k_lo < t_lo);
        let equal = k_hi == t_hi && k_lo == t_lo;
        if below || (upper && equal) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    *out = lo;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_say_what_the_kernels_read() {
        assert_eq!(core::mem::size_of::<SampleParams>(), 16);
        assert_eq!(core::mem::size_of::<SearchParams>(), 16);
        let p = SearchParams::new(10, 3, KeyKind::F32, Order::Descending);
        assert_eq!(
            p.key_map(),
            Some(KeyMap::new(KeyKind::F32, Order::Descending))
        );
        assert_eq!(SearchParams { kind: 7, ..p }.key_map(), None);
    }
}
