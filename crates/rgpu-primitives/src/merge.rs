//! The merge of sorted runs, for the multi-device sort (`crate::multi` on the host side):
//! each device receives one sorted run from every device and merges them by rounds of
//! pairwise merges, one launch a round, from one buffer to another.
//!
//! A round's runs lie one after another in `src`, between the round's `runs + 1` bounds
//! (`bounds[at..=at + runs]`: `0`, the end of run 0, ..., `len`); the round merges runs
//! `2q` and `2q + 1` into the same place of `dst` (a last run without a partner is copied),
//! so the next round's bounds are every other one of this round's.
//!
//! Each invocation writes [`MERGE_ITEMS`] consecutive keys of `dst` (a *merge path*): for
//! its first output `o`, `d = o - start` keys of the pair's merge come before it, and a
//! binary search over the diagonal `i + j = d` finds how many of them are run A's (`i`, the
//! first `i` with `A[i] > B[d - 1 - i]`); from `(i, j)` it merges sequentially (where its
//! outputs cross into the next pair's, it searches again there). Keys compare
//! by their ordered words ([`KeyMap`]), and A's key goes first of two equal ones: the merge
//! is stable (keys alone, equal ordered words are equal bits anyway).

use rgpu::{Global, Item};

use crate::key::{KeyKind, KeyMap, Order};

/// Output keys per invocation of [`prim_merge`] and [`prim_merge_wide`].
pub const MERGE_ITEMS: u32 = 8;

/// One round of the merge: `len` keys in `runs` sorted runs, whose bounds are
/// `bounds[at..=at + runs]`, and the key map (`KeyKind` in bits 0..8 of `flags`, `Order` in
/// bit 8).
///
/// 16 bytes: a CUDA by-value argument and a Vulkan push constant alike.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MergeParams {
    pub len: u32,
    pub runs: u32,
    pub at: u32,
    pub flags: u32,
}

// SAFETY: `#[repr(C)]`, four `u32`s: no padding, every bit pattern (all-zero too) is valid.
unsafe impl bytemuck::Zeroable for MergeParams {}
// SAFETY: as above; `Copy` and `'static`.
unsafe impl bytemuck::Pod for MergeParams {}

impl MergeParams {
    /// A round over `len` keys of `kind` sorted in `order` (a `u64`'s words map as
    /// `KeyKind::U32`), in `runs` runs whose bounds start at `bounds[at]`.
    pub const fn new(len: u32, runs: u32, at: u32, kind: KeyKind, order: Order) -> Self {
        Self {
            len,
            runs,
            at,
            flags: kind as u32 | (order as u32) << 8,
        }
    }

    /// The key map, or `None` for flags no host writes.
    #[inline(always)]
    pub fn key_map(&self) -> Option<KeyMap> {
        match (
            KeyKind::from_u32(self.flags & 0xff),
            Order::from_u32(self.flags >> 8),
        ) {
            (Some(kind), Some(order)) => Some(KeyMap::new(kind, order)),
            _ => None,
        }
    }

    /// Invocations of a round's launch: one per [`MERGE_ITEMS`] keys.
    pub const fn invocations(len: u32) -> u32 {
        len.div_ceil(MERGE_ITEMS)
    }
}

/// The pair of runs output `o` belongs to, `(start of A, start of B, end of B)` (B empty
/// for a last run without a partner), or `None` where the bounds are not the host's (out of
/// `bounds`, decreasing, or past `len`).
#[inline(always)]
fn pair(params: &MergeParams, bounds: &[u32], o: u32) -> Option<(u32, u32, u32)> {
    let (runs, at) = (params.runs, params.at as usize);
    if runs == 0 || at + runs as usize >= bounds.len() {
        return None;
    }
    let bound = |k: u32| {
        // SAFETY: at + min(k, runs) <= at + runs < bounds.len().
        unsafe { *bounds.get_unchecked(at + k.min(runs) as usize) }
    };
    let mut q = 0;
    while 2 * q + 2 < runs && bound(2 * q + 2) <= o {
        q += 1;
    }
    let (a0, a1, b1) = (bound(2 * q), bound(2 * q + 1), bound(2 * q + 2));
    if a0 <= o && o < b1 && a0 <= a1 && a1 <= b1 && b1 <= params.len {
        Some((a0, a1, b1))
    } else {
        None
    }
}

/// `a <= b` in ordered words.
#[inline(always)]
fn word_le(map: KeyMap, a: u32, b: u32) -> bool {
    map.encode(a) <= map.encode(b)
}

/// `a <= b` for `u64` keys' `[low, high]` words (the high word's order first).
#[inline(always)]
fn wide_le(map: KeyMap, a: [u32; 2], b: [u32; 2]) -> bool {
    let (a_hi, b_hi) = (map.encode(a[1]), map.encode(b[1]));
    a_hi < b_hi || (a_hi == b_hi && map.encode(a[0]) <= map.encode(b[0]))
}

/// The outputs `o..o + MERGE_ITEMS` (below `params.len`) of one round: pair by pair (an
/// invocation's outputs may end one pair's merge and begin the next's), each from its
/// merge path. `le(a, b)`: key `a` goes before key `b` (or with it).
#[inline(always)]
fn merge_items<T: bytemuck::Pod>(
    params: &MergeParams,
    src: &[T],
    bounds: &[u32],
    dst: &Global<T>,
    o: u32,
    le: impl Fn(T, T) -> bool,
) {
    let stop = (o + MERGE_ITEMS).min(params.len);
    let mut o = o;
    while o < stop {
        let Some((a0, a1, b1)) = pair(params, bounds, o) else {
            return;
        };
        let (na, nb) = (a1 - a0, b1 - a1);
        let d = o - a0;
        let a = |i: u32| {
            // SAFETY: A's reads are at i < na: a0 + i < a1 <= len <= src.len() (the kernels
            // check it).
            unsafe { *src.get_unchecked((a0 + i) as usize) }
        };
        let b = |j: u32| {
            // SAFETY: B's reads are at j < nb: a1 + j < b1 <= len <= src.len().
            unsafe { *src.get_unchecked((a1 + j) as usize) }
        };
        // (d - min(d, nb): the first possible i, without a saturating op in the kernel.)
        let (mut lo, mut hi) = (d - d.min(nb), d.min(na));
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            // mid < na, and d - 1 - mid < nb (mid >= lo >= d - nb).
            if le(a(mid), b(d - 1 - mid)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let (mut i, mut j) = (lo, d - lo);
        let end = stop.min(b1);
        while o < end {
            let from_a = j >= nb || (i < na && le(a(i), b(j)));
            let key = if from_a { a(i) } else { b(j) };
            if from_a {
                i += 1;
            } else {
                j += 1;
            }
            // SAFETY: o < b1 <= len <= dst.len() (the kernels check it); each output is
            // one invocation's.
            unsafe { dst.write(o, key) };
            o += 1;
        }
    }
}

/// One round of the merge of `u32` key words (`src` to `dst`, the module's doc): launched
/// over `MergeParams::invocations(len)` items.
#[rgpu::kernel]
pub fn prim_merge(item: Item, params: MergeParams, src: &[u32], bounds: &[u32], dst: Global<u32>) {
    let Some(map) = params.key_map() else {
        return;
    };
    let len = params.len;
    if src.len() < len as usize || dst.len() < len || item.index() >= len.div_ceil(MERGE_ITEMS) {
        return; // not the host's launch
    }
    let o = item.index() * MERGE_ITEMS;
    merge_items(&params, src, bounds, &dst, o, |a, b| word_le(map, a, b));
}

/// [`prim_merge`] for `u64` keys (`[low, high]` words, each mapped as `KeyKind::U32` in the
/// order, the high word's compared first).
#[rgpu::kernel]
pub fn prim_merge_wide(
    item: Item,
    params: MergeParams,
    src: &[[u32; 2]],
    bounds: &[u32],
    dst: Global<[u32; 2]>,
) {
    let Some(map) = params.key_map() else {
        return;
    };
    let len = params.len;
    if src.len() < len as usize || dst.len() < len || item.index() >= len.div_ceil(MERGE_ITEMS) {
        return; // not the host's launch
    }
    let o = item.index() * MERGE_ITEMS;
    merge_items(&params, src, bounds, &dst, o, |a, b| wide_le(map, a, b));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_say_what_the_kernels_read() {
        assert_eq!(core::mem::size_of::<MergeParams>(), 16);
        let p = MergeParams::new(100, 3, 4, KeyKind::I32, Order::Descending);
        assert_eq!(
            p.key_map(),
            Some(KeyMap::new(KeyKind::I32, Order::Descending))
        );
        assert_eq!(MergeParams { flags: 3, ..p }.key_map(), None);
        assert_eq!(MergeParams::invocations(17), 3);
        assert_eq!(MergeParams::invocations(0), 0);
    }
}
