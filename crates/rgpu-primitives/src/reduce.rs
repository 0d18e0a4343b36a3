//! The reduction's kernels: by an operation that gives the same bits on every backend.
//!
//! - [`ReduceParams::SUM`]: the wrapping sum of `u32` words (`i32`: the same bits).
//! - [`ReduceParams::MIN`], [`ReduceParams::MAX`]: of the words' order-preserving encoding
//!   ([`KeyMap`]: `u32`, `i32`, or `f32` in IEEE 754 total order), encoded on the first
//!   level only ([`ReduceParams::ENCODE`]); the host decodes the result.
//! - [`ReduceParams::SUM_F32`]: `f32` addition in one fixed order, whatever the subgroup
//!   size: thread `t` of a tile adds items `t, t + 256, .., t + 15 * 256` in turn to `-0.0`
//!   (the identity of `+`, so a missing item changes nothing), then a pairwise tree over
//!   the 256 threads' sums (`s[t] += s[t + k]` for k = 128, 64, .., 1). The cpu backend adds
//!   in the same order ([`tile_sum_f32`]), so every backend gives the same bits (given
//!   subnormals are kept: a Vulkan driver may flush them to zero).
//!
//! Two kernels:
//! - [`prim_reduce_unordered`], the order-free operations (SUM, MIN, MAX: exact in any
//!   order): a grid of few workgroups (the host's table, `host::gpu::reduce_plan`), each
//!   thread striding over the input with [`UnorderedParams::items`] loads in flight, then a
//!   subgroup reduction (any subgroup size, 1 to 128 lanes) and one word per workgroup; the
//!   host launches it once more, one workgroup, on the workgroups' words.
//! - [`prim_reduce`], the fixed order of `SUM_F32`: each tile of [`TILE`] words to one word
//!   through a workgroup tree without subgroup operations, launched again on the tiles'
//!   results until one word is left.

use rgpu::{Global, Group, Shared};

use crate::group::{Lanes, THREADS, TILE};
use crate::key::{KeyKind, KeyMap, Order};

/// The parameters of one level of a reduction. 16 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReduceParams {
    /// Words to reduce (`input`'s first `len`).
    pub len: u32,
    /// Tiles, `len.div_ceil(TILE)`: the workgroups, and the words written to `partials`.
    pub tiles: u32,
    /// [`ReduceParams::SUM`], [`ReduceParams::MIN`], [`ReduceParams::MAX`] or
    /// [`ReduceParams::SUM_F32`].
    pub op: u32,
    /// `KeyKind` in bits 0..8 (what MIN/MAX encode), [`ReduceParams::ENCODE`].
    pub flags: u32,
}

// SAFETY: `#[repr(C)]`, four `u32`s: no padding, every bit pattern is valid.
unsafe impl bytemuck::Zeroable for ReduceParams {}
// SAFETY: as above.
unsafe impl bytemuck::Pod for ReduceParams {}

impl ReduceParams {
    pub const SUM: u32 = 0;
    pub const MIN: u32 = 1;
    pub const MAX: u32 = 2;
    pub const SUM_F32: u32 = 3;
    /// The words are raw values: encode them for MIN/MAX (the first level).
    pub const ENCODE: u32 = 1 << 9;

    pub const fn new(len: u32, op: u32, kind: KeyKind, first: bool) -> Self {
        Self {
            len,
            tiles: crate::group::tiles(len),
            op,
            flags: kind as u32 | if first { Self::ENCODE } else { 0 },
        }
    }

    fn map(&self) -> Option<KeyMap> {
        let kind = KeyKind::from_u32(self.flags & 0xff)?;
        Some(KeyMap::new(kind, Order::Ascending))
    }
}

/// `a op b` (for `SUM_F32`: the `f32` sum of the two words' floats).
#[inline(always)]
fn combine(op: u32, a: u32, b: u32) -> u32 {
    if op == ReduceParams::MIN {
        a.min(b)
    } else if op == ReduceParams::MAX {
        a.max(b)
    } else if op == ReduceParams::SUM_F32 {
        (f32::from_bits(a) + f32::from_bits(b)).to_bits()
    } else {
        a.wrapping_add(b)
    }
}

/// The identity of `op` (of `+` on floats: `-0.0`).
#[inline(always)]
pub fn identity(op: u32) -> u32 {
    if op == ReduceParams::MIN {
        u32::MAX
    } else if op == ReduceParams::SUM_F32 {
        0x8000_0000
    } else {
        0
    }
}

/// Each tile's reduction to `partials[tile]`. One workgroup per tile (`groups =
/// params.tiles`). Every operation in the fixed order `SUM_F32` needs (each thread's items
/// in turn from the identity, then the pairwise tree in workgroup memory): no subgroup
/// operation, so the same on every subgroup size.
#[rgpu::kernel(threads = 256)]
pub fn prim_reduce(
    group: Group,
    params: ReduceParams,
    input: &[u32],
    partials: Global<u32>,
    tree: Shared<u32, { THREADS as usize }>,
) {
    let Some(map) = params.map() else {
        return;
    };
    if input.len() < params.len as usize || partials.len() < params.tiles {
        return; // not the host's launch
    }
    let (op, len) = (params.op, params.len);
    let lanes = Lanes::of(&group);
    let tile = group.id();
    let start = tile * TILE;
    let full = len - start >= TILE;
    let encode = params.flags & ReduceParams::ENCODE != 0
        && (op == ReduceParams::MIN || op == ReduceParams::MAX);
    // All the thread's loads first, so they are in flight together; past the end the
    // operation's identity. (Each element is stored once, from a scalar `if`: an array
    // assigned in branches becomes whole-array values in rust-gpu's SPIR-V, which browsers'
    // shader compilers take far longer to compile.)
    let mut words = [0u32; 16];
    rgpu::unroll!(J in 0..16 => {
        let index = start + J as u32 * THREADS + lanes.place;
        words[J] = if full || index < len {
            // SAFETY: index < len <= input.len() (checked above).
            let raw = unsafe { *input.get_unchecked(index as usize) };
            if encode { map.encode(raw) } else { raw }
        } else {
            identity(op)
        };
    });
    // The thread's items in turn from the identity (for SUM_F32 a missing item is -0.0,
    // which leaves a sum as it was), then the pairwise tree over the threads' values.
    let mut value = identity(op);
    rgpu::unroll!(J in 0..16 => {
        value = combine(op, value, words[J]);
    });
    let t = lanes.place;
    tree.store(t, value);
    let mut half = THREADS / 2;
    while half > 0 {
        group.barrier();
        if t < half {
            tree.store(t, combine(op, tree.load(t), tree.load(t + half)));
        }
        half /= 2;
    }
    if t == 0 {
        // SAFETY: tile < tiles <= partials.len(); one invocation writes it.
        unsafe { partials.write(tile, tree.load(0)) };
    }
}

/// The f32 sum of one tile of `items` (at most [`TILE`]) in the kernel's order: what the
/// cpu backend computes for each tile, so its result has the kernel's bits. Thread `t`'s
/// sum gets items `t, t + 256, ..` in turn: row by row here, which vectorizes.
pub fn tile_sum_f32(items: &[f32]) -> f32 {
    let mut tree = [-0.0f32; THREADS as usize];
    let mut rows = items.chunks_exact(THREADS as usize);
    for row in &mut rows {
        for (sum, &item) in tree.iter_mut().zip(row) {
            *sum += item;
        }
    }
    for (sum, &item) in tree.iter_mut().zip(rows.remainder()) {
        *sum += item;
    }
    let mut half = THREADS as usize / 2;
    while half > 0 {
        let (low, high) = tree.split_at_mut(half);
        for (a, &b) in low.iter_mut().zip(high.iter()) {
            *a += b;
        }
        half /= 2;
    }
    tree[0]
}

/// Loads in flight per thread and round of [`prim_reduce_unordered`] at most (the kernel
/// unrolls this many; [`UnorderedParams::items`] of them load).
pub const MAX_ITEMS: u32 = 8;

/// The parameters of one launch of [`prim_reduce_unordered`]. 16 bytes.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnorderedParams {
    /// Words to reduce (`input`'s first `len`).
    pub len: u32,
    /// The launch's workgroups, and the words written to `partials`.
    pub groups: u32,
    /// [`ReduceParams::SUM`], [`ReduceParams::MIN`] or [`ReduceParams::MAX`].
    pub op: u32,
    /// `KeyKind` in bits 0..8 (what MIN/MAX encode), [`ReduceParams::ENCODE`], and the
    /// loads per thread and round (1 to [`MAX_ITEMS`]) in bits 16..24.
    pub flags: u32,
}

const _: () = assert!(core::mem::size_of::<UnorderedParams>() == 16);

// SAFETY: `#[repr(C)]`, four `u32`s: no padding, every bit pattern is valid.
unsafe impl bytemuck::Zeroable for UnorderedParams {}
// SAFETY: as above.
unsafe impl bytemuck::Pod for UnorderedParams {}

impl UnorderedParams {
    /// Words one workgroup reads a round with `items` loads a thread.
    pub const fn block(items: u32) -> u32 {
        THREADS * items
    }

    /// One launch over `len` words with at most `max_groups` workgroups (at least one, and
    /// no more than there are blocks of words), `items` loads a thread (clamped to 1 to
    /// [`MAX_ITEMS`]); `first`: the words are raw values (MIN/MAX encode them).
    pub const fn new(
        len: u32,
        max_groups: u32,
        items: u32,
        op: u32,
        kind: KeyKind,
        first: bool,
    ) -> Self {
        let items = if items < 1 {
            1
        } else if items > MAX_ITEMS {
            MAX_ITEMS
        } else {
            items
        };
        let blocks = len.div_ceil(Self::block(items));
        let groups = if blocks < max_groups {
            blocks
        } else {
            max_groups
        };
        Self {
            len,
            groups: if groups < 1 { 1 } else { groups },
            op,
            flags: kind as u32 | if first { ReduceParams::ENCODE } else { 0 } | items << 16,
        }
    }

    /// Loads per thread and round, 1 to [`MAX_ITEMS`].
    pub fn items(&self) -> u32 {
        ((self.flags >> 16) & 0xff).clamp(1, MAX_ITEMS)
    }

    fn map(&self) -> Option<KeyMap> {
        let kind = KeyKind::from_u32(self.flags & 0xff)?;
        Some(KeyMap::new(kind, Order::Ascending))
    }
}

/// `value` reduced over the subgroup by `op` (SUM, MIN or MAX); every lane gets it.
#[inline(always)]
fn subgroup_reduce(group: &Group, op: u32, value: u32) -> u32 {
    if op == ReduceParams::MIN {
        group.subgroup_min(value)
    } else if op == ReduceParams::MAX {
        group.subgroup_max(value)
    } else {
        group.subgroup_add(value)
    }
}

/// One invocation's walk over the input in [`prim_reduce_unordered`]: blocks `first, first +
/// stride, ..` below `len`, words `thread, thread + 256, ..` of each (`items` of them).
struct Walk {
    len: u32,
    first: u32,
    stride: u32,
    items: u32,
    thread: u32,
}

impl Walk {
    /// The invocation's words, `map`ped, reduced by `op` from `identity`.
    #[inline(always)]
    fn reduce(
        &self,
        input: &[u32],
        map: KeyMap,
        identity: u32,
        op: impl Fn(u32, u32) -> u32,
    ) -> u32 {
        let (len, items, t) = (self.len, self.items, self.thread);
        let mut value = identity;
        let mut base = self.first;
        while base < len {
            let left = len - base;
            // All the round's loads first, without a branch, so they are in flight together
            // (a load behind its own branch, its word combined at once, waits for the word):
            // past the end or past `items` a load of word `base` (in bounds, and one cached
            // word for the subgroup) whose word is replaced by the identity.
            let mut loaded = [0u32; MAX_ITEMS as usize];
            rgpu::unroll!(J in 0..8 => {
                let offset = J as u32 * THREADS + t;
                let wanted = (J as u32) < items && offset < left;
                let index = if wanted { base + offset } else { base };
                // SAFETY: index < len <= input.len() (the kernel checked): base < len, and
                // base + offset < len where it is wanted.
                let word = map.encode(unsafe { *input.get_unchecked(index as usize) });
                loaded[J] = if wanted { word } else { identity };
            });
            rgpu::unroll!(J in 0..8 => {
                value = op(value, loaded[J]);
            });
            if left <= self.stride {
                break; // (and `base + stride` stays below 2^32)
            }
            base += self.stride;
        }
        value
    }
}

/// The order-free reduction (SUM, MIN, MAX) of `input`'s first `params.len` words, one word
/// per workgroup to `partials[group]` (`groups = params.groups`). Workgroup `g` reads
/// blocks `g, g + groups, ..` of `256 * items` words, thread `t` words `t, t + 256, ..` of
/// each block with its loads in flight together; then the subgroup's reduction, the
/// subgroups' words in workgroup memory, and the first subgroup's reduction of those. Any
/// subgroup size (1 to 128 lanes) gives the same word: each operation is exact in any
/// order.
#[rgpu::kernel(threads = 256)]
pub fn prim_reduce_unordered(
    group: Group,
    params: UnorderedParams,
    input: &[u32],
    partials: Global<u32>,
    words: Shared<u32, { THREADS as usize }>,
) {
    let Some(map) = params.map() else {
        return;
    };
    let op = params.op;
    if input.len() < params.len as usize
        || partials.len() < params.groups
        || group.count() != params.groups
        || op == ReduceParams::SUM_F32
    {
        return; // not the host's launch
    }
    let items = params.items();
    let block = UnorderedParams::block(items);
    let walk = Walk {
        len: params.len,
        first: group.id() * block,
        stride: block * params.groups,
        items,
        thread: group.thread(),
    };
    // The first level's MIN/MAX encode the words; otherwise the map that leaves them as
    // they are (no branch per word).
    let map = if params.flags & ReduceParams::ENCODE != 0 && op != ReduceParams::SUM {
        map
    } else {
        KeyMap::new(KeyKind::U32, Order::Ascending)
    };
    // One loop per operation: no branch on the operation per word.
    let value = if op == ReduceParams::MIN {
        walk.reduce(input, map, u32::MAX, u32::min)
    } else if op == ReduceParams::MAX {
        walk.reduce(input, map, 0, u32::max)
    } else {
        walk.reduce(input, map, 0, u32::wrapping_add)
    };
    let t = group.thread();
    // Every invocation leaves the loop together with its workgroup (`base` is the
    // workgroup's): the subgroup operations below see whole subgroups.
    let value = subgroup_reduce(&group, op, value);
    words.store(t, identity(op));
    group.barrier();
    let size = group.subgroup_size().max(1);
    if group.subgroup_lane() == 0 {
        words.store(group.subgroup_id() % THREADS, value);
    }
    group.barrier();
    if group.subgroup_id() == 0 {
        // The first subgroup's lane `l` takes words `l, l + size, ..`: every one of the 256
        // (those no subgroup wrote hold the identity), whatever the subgroup size.
        let lane = group.subgroup_lane();
        let mut mine = identity(op);
        let mut i = lane;
        while i < THREADS {
            mine = combine(op, mine, words.load(i));
            i += size;
        }
        let total = subgroup_reduce(&group, op, mine);
        if lane == 0 {
            // SAFETY: group.id() < groups <= partials.len(); one invocation writes it.
            unsafe { partials.write(group.id(), total) };
        }
    }
}
