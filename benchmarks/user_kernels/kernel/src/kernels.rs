//! The crate's kernels but two, as the portability corpus includes them: tests/corpus_table.py
//! copies this file, as it is, into the corpus workspace's kernel crate as the module
//! `user_kernels`. `saxpy` and `histogram` are in lib.rs, which re-exports everything here:
//! the corpus has other kernels of those names (the README's `saxpy`, an atomics
//! `histogram`), and kernel names are one namespace.

use rgpu::prelude::*;

/// Invocations per workgroup of the group kernels below (each attribute repeats the literal).
pub const THREADS: u32 = 256;
const _: () = assert!(THREADS == 256);

/// Items each workgroup of the scan covers: `THREADS` invocations, `SCAN_ROUNDS` rounds.
pub const SCAN_ROUNDS: u32 = 8;
pub const SCAN_TILE: u32 = THREADS * SCAN_ROUNDS;
const _: () = assert!(SCAN_ROUNDS == 8); // the literal of `unroll!(R in 0..8)` in scan_tile_sums

/// Side of a square SGEMM tile (`TILE * TILE == THREADS`).
pub const TILE: u32 = 16;
const _: () = assert!(TILE * TILE == THREADS);

/// Adds `value` over the workgroup: each subgroup's sum goes to `sums`, then invocation 0
/// adds those. Returns the total on invocation 0 (and something else elsewhere).
#[inline(always)]
fn workgroup_sum(group: Group, value: u32, sums: Shared<u32, 256>) -> u32 {
    let subgroup_sum = group.subgroup_add(value);
    if group.subgroup_lane() == 0 {
        sums.store(group.subgroup_id(), subgroup_sum);
    }
    group.barrier();
    let mut total = 0u32;
    if group.thread() == 0 {
        let subgroups = group.size().div_ceil(group.subgroup_size());
        let mut s = 0;
        while s < subgroups {
            total = total.wrapping_add(sums.load(s));
            s += 1;
        }
    }
    total
}

/// `out[0] += x[0] + x[1] + ...` (wrapping): every invocation adds a grid-strided share of
/// `x`, four loads in flight per step, then its workgroup's sum is added to `out[0]`.
#[rgpu::kernel(threads = 256)]
pub fn reduce_sum(group: Group, x: &[u32], sums: Shared<u32, 256>, out: Global<u32>) {
    let n = x.len() as u32;
    let stride = group.count() * group.size();
    let mut i = group.global_thread();
    let mut acc = 0u32;
    while i + 3 * stride < n {
        // SAFETY: i + 3 * stride < n = x.len().
        let (a, b, c, d) = unsafe {
            (
                x.load_unchecked(i),
                x.load_unchecked(i + stride),
                x.load_unchecked(i + 2 * stride),
                x.load_unchecked(i + 3 * stride),
            )
        };
        acc = acc
            .wrapping_add(a)
            .wrapping_add(b)
            .wrapping_add(c)
            .wrapping_add(d);
        i += 4 * stride;
    }
    while i < n {
        // SAFETY: i < n.
        acc = acc.wrapping_add(unsafe { x.load_unchecked(i) });
        i += stride;
    }
    let total = workgroup_sum(group, acc, sums);
    if group.thread() == 0 {
        out.atomic_add(0, total);
    }
}

/// The same sum as the first version a user writes: one load per step of a plain
/// grid-stride loop, `x[i]` with its bounds check, no unrolling by hand.
#[rgpu::kernel(threads = 256)]
pub fn reduce_sum_plain(group: Group, x: &[u32], sums: Shared<u32, 256>, out: Global<u32>) {
    let n = x.len() as u32;
    let stride = group.count() * group.size();
    let mut i = group.global_thread();
    let mut acc = 0u32;
    while i < n {
        acc = acc.wrapping_add(x[i as usize]);
        i += stride;
    }
    let total = workgroup_sum(group, acc, sums);
    if group.thread() == 0 {
        out.atomic_add(0, total);
    }
}

/// Scan, step 1: `tile_sums[g]` = the sum of tile `g` (`SCAN_TILE` items) of `x`.
#[rgpu::kernel(threads = 256)]
pub fn scan_tile_sums(group: Group, x: &[u32], sums: Shared<u32, 256>, tile_sums: Global<u32>) {
    let n = x.len() as u32;
    let base = group.id() * SCAN_TILE;
    let mut acc = 0u32;
    rgpu::unroll!(R in 0..8 => {
        let i = base + R as u32 * THREADS + group.thread();
        if i < n {
            // SAFETY: i < n.
            acc = acc.wrapping_add(unsafe { x.load_unchecked(i) });
        }
    });
    let total = workgroup_sum(group, acc, sums);
    if group.thread() == 0 {
        // SAFETY: one invocation writes element `id`, which exists (one per workgroup).
        unsafe { tile_sums.write(group.id(), total) };
    }
}

/// The exclusive prefix sum of `value` over the workgroup, in invocation order, and the
/// workgroup's total: each subgroup scans itself, invocation 0 scans the subgroups' totals
/// in `totals` (`totals[subgroups]` is the workgroup's total).
#[inline(always)]
fn workgroup_exclusive_scan(group: Group, value: u32, totals: Shared<u32, 257>) -> (u32, u32) {
    let prefix = group.subgroup_exclusive_add(value);
    let last = group.subgroup_size() - 1;
    if group.subgroup_lane() == last || group.thread() == group.size() - 1 {
        totals.store(group.subgroup_id(), prefix.wrapping_add(value));
    }
    group.barrier();
    let subgroups = group.size().div_ceil(group.subgroup_size());
    if group.thread() == 0 {
        let mut running = 0u32;
        let mut s = 0;
        while s < subgroups {
            let t = totals.load(s);
            totals.store(s, running);
            running = running.wrapping_add(t);
            s += 1;
        }
        totals.store(subgroups, running);
    }
    group.barrier();
    let result = (
        prefix.wrapping_add(totals.load(group.subgroup_id())),
        totals.load(subgroups),
    );
    // The next scan writes `totals` again only after every invocation has read it.
    group.barrier();
    result
}

/// Scan, step 2 (one workgroup): `tile_sums` becomes its exclusive prefix sum.
#[rgpu::kernel(threads = 256)]
pub fn scan_tile_offsets(group: Group, tile_sums: Global<u32>, totals: Shared<u32, 257>) {
    let n = tile_sums.len();
    let mut carry = 0u32;
    let mut base = 0u32;
    while base < n {
        let i = base + group.thread();
        let value = if i < n {
            // SAFETY: i < n; invocation `thread` alone reads and writes element i this round.
            unsafe { tile_sums.read(i) }
        } else {
            0
        };
        let (prefix, total) = workgroup_exclusive_scan(group, value, totals);
        if i < n {
            // SAFETY: as above.
            unsafe { tile_sums.write(i, carry.wrapping_add(prefix)) };
        }
        carry = carry.wrapping_add(total);
        base += THREADS;
    }
}

/// Scan, step 3: `out[i]` = the sum of `x[..i]` (wrapping), each tile from its offset.
#[rgpu::kernel(threads = 256)]
pub fn scan_tiles(
    group: Group,
    x: &[u32],
    tile_offsets: &[u32],
    out: Global<u32>,
    totals: Shared<u32, 257>,
) {
    let n = x.len() as u32;
    let base = group.id() * SCAN_TILE;
    // SAFETY: one offset per workgroup (step 2 wrote them).
    let mut carry = unsafe { tile_offsets.load_unchecked(group.id()) };
    let mut round = 0;
    while round < SCAN_ROUNDS {
        let i = base + round * THREADS + group.thread();
        let value = if i < n {
            // SAFETY: i < n.
            unsafe { x.load_unchecked(i) }
        } else {
            0
        };
        let (prefix, total) = workgroup_exclusive_scan(group, value, totals);
        if i < n {
            // SAFETY: i < n = out.len(); element i is this invocation's alone.
            unsafe { out.write(i, carry.wrapping_add(prefix)) };
        }
        carry = carry.wrapping_add(total);
        round += 1;
    }
}

/// `c = a * b` for row-major `a` (`m x k`) and `b` (`k x n`), each workgroup one 16x16 tile
/// of `c` through 16x16 tiles of `a` and `b` in workgroup memory; `m`, `n`, `k` multiples
/// of 16, launched with `(n / 16, m / 16)` workgroups.
#[rgpu::kernel(threads = 256)]
pub fn sgemm(
    group: Group<2>,
    n: u32,
    k: u32,
    a: &[f32],
    b: &[f32],
    c: Global<f32>,
    tile_a: Shared<f32, 256>,
    tile_b: Shared<f32, 256>,
) {
    let (tx, ty) = (group.thread() % TILE, group.thread() / TILE);
    let row = group.y() * TILE + ty;
    let col = group.x() * TILE + tx;
    let mut acc = 0.0f32;
    let mut t = 0;
    while t < k {
        // SAFETY: row < m and t + tx < k; t + ty < k and col < n.
        unsafe {
            tile_a.store(ty * TILE + tx, a.load_unchecked(row * k + t + tx));
            tile_b.store(ty * TILE + tx, b.load_unchecked((t + ty) * n + col));
        }
        group.barrier();
        rgpu::unroll!(J in 0..16 => {
            let j = J as u32;
            acc = tile_a.load(ty * TILE + j).mul_add(tile_b.load(j * TILE + tx), acc);
        });
        group.barrier();
        t += TILE;
    }
    // SAFETY: row < m, col < n; one invocation per element of c.
    unsafe { c.write(row * n + col, acc) };
}

/// A 5-point blur of a `width x height` image: `0.5 * centre + 0.125 * (left + right + up +
/// down)`, edges repeating the border pixel.
#[rgpu::kernel]
pub fn blur(item: Item<2>, src: &[f32], #[item] dst: &mut f32) {
    let (x, y, i) = (item.x(), item.y(), item.index());
    let left = if x > 0 { i - 1 } else { i };
    let right = if x + 1 < item.width() { i + 1 } else { i };
    let up = if y > 0 { i - item.width() } else { i };
    let down = if y + 1 < item.height() {
        i + item.width()
    } else {
        i
    };
    // SAFETY: every neighbour index is a pixel of the image (src holds width * height).
    let (c, l, r, u, d) = unsafe {
        (
            src.load_unchecked(i),
            src.load_unchecked(left),
            src.load_unchecked(right),
            src.load_unchecked(up),
            src.load_unchecked(down),
        )
    };
    *dst = 0.5 * c + 0.125 * (((l + r) + u) + d);
}

/// `out[i] = src[index[i]]` (every index below `src.len()`).
#[rgpu::kernel]
pub fn gather(#[item] index: &u32, src: &[f32], #[item] out: &mut f32) {
    // SAFETY: the caller passes indices below src.len().
    *out = unsafe { src.load_unchecked(*index) };
}

/// `dst[index[i]] = value[i]` (the indices a permutation of `0..dst.len()`).
#[rgpu::kernel]
pub fn scatter(#[item] index: &u32, #[item] value: &f32, dst: Global<f32>) {
    // SAFETY: a permutation: each element of dst is written by one invocation.
    unsafe { dst.write(*index, *value) };
}

// --- kernels that need the float functions and subgroup operations on any type ------------

/// Softening of the n-body step (added to every squared distance).
pub const NBODY_EPS2: f32 = 1e-4;

/// One all-pairs gravity step: for each body `i` (`pos[4i..4i+4]` = x, y, z, mass), its
/// acceleration `sum_j m_j d / (|d|^2 + eps^2)^(3/2)` with `d = p_j - p_i`, into
/// `acc[4i..4i+3]`. One invocation per body; the workgroup brings 256 bodies at a time into
/// workgroup memory and every invocation reads them from there. The body count is a
/// multiple of 256.
#[rgpu::kernel(threads = 256)]
pub fn nbody(group: Group, pos: &[f32], tile: Shared<f32, 1024>, acc: Global<f32>) {
    let n = pos.len() as u32 / 4;
    let i = group.global_thread();
    let t = group.thread();
    let (px, py, pz) = (
        pos[4 * i as usize],
        pos[4 * i as usize + 1],
        pos[4 * i as usize + 2],
    );
    let (mut ax, mut ay, mut az) = (0.0f32, 0.0f32, 0.0f32);
    let mut start = 0;
    while start < n {
        let j = (start + t) as usize;
        tile.store(4 * t, pos[4 * j]);
        tile.store(4 * t + 1, pos[4 * j + 1]);
        tile.store(4 * t + 2, pos[4 * j + 2]);
        tile.store(4 * t + 3, pos[4 * j + 3]);
        group.barrier();
        let mut k = 0;
        while k < 256 {
            let dx = tile.load(4 * k) - px;
            let dy = tile.load(4 * k + 1) - py;
            let dz = tile.load(4 * k + 2) - pz;
            let d2 = dx.mul_add(dx, dy.mul_add(dy, dz.mul_add(dz, NBODY_EPS2)));
            let inv = d2.rsqrt();
            let s = tile.load(4 * k + 3) * (inv * inv * inv);
            ax = dx.mul_add(s, ax);
            ay = dy.mul_add(s, ay);
            az = dz.mul_add(s, az);
            k += 1;
        }
        group.barrier();
        start += 256;
    }
    // SAFETY: each invocation writes the four words of its own body.
    unsafe {
        acc.write(4 * i, ax);
        acc.write(4 * i + 1, ay);
        acc.write(4 * i + 2, az);
        acc.write(4 * i + 3, 0.0);
    }
}

/// `nbody` with the two levers docs/kernel-api.md names for a kernel whose launch has few
/// workgroups (16,384 bodies: 64 workgroups, one per SM on an H200, so each SM must hide its
/// latencies inside one workgroup): a CUDA register budget (`registers = 64`: ptxas then
/// overlaps four bodies' loads and square roots instead of fitting in 32 registers) and the
/// inner loop written four bodies a step with `rgpu::unroll!`. Same results as `nbody`.
#[rgpu::kernel(threads = 256, registers = 64)]
pub fn nbody_tuned(group: Group, pos: &[f32], tile: Shared<f32, 1024>, acc: Global<f32>) {
    let n = pos.len() as u32 / 4;
    let i = group.global_thread();
    let t = group.thread();
    let (px, py, pz) = (
        pos[4 * i as usize],
        pos[4 * i as usize + 1],
        pos[4 * i as usize + 2],
    );
    let (mut ax, mut ay, mut az) = (0.0f32, 0.0f32, 0.0f32);
    let mut start = 0;
    while start < n {
        let j = (start + t) as usize;
        tile.store(4 * t, pos[4 * j]);
        tile.store(4 * t + 1, pos[4 * j + 1]);
        tile.store(4 * t + 2, pos[4 * j + 2]);
        tile.store(4 * t + 3, pos[4 * j + 3]);
        group.barrier();
        let mut k = 0;
        while k < 256 {
            rgpu::unroll!(U in 0..4 => {
                let b = 4 * (k + U as u32);
                let dx = tile.load(b) - px;
                let dy = tile.load(b + 1) - py;
                let dz = tile.load(b + 2) - pz;
                let d2 = dx.mul_add(dx, dy.mul_add(dy, dz.mul_add(dz, NBODY_EPS2)));
                let inv = d2.rsqrt();
                let s = tile.load(b + 3) * (inv * inv * inv);
                ax = dx.mul_add(s, ax);
                ay = dy.mul_add(s, ay);
                az = dz.mul_add(s, az);
            });
            k += 4;
        }
        group.barrier();
        start += 256;
    }
    // SAFETY: each invocation writes the four words of its own body.
    unsafe {
        acc.write(4 * i, ax);
        acc.write(4 * i + 1, ay);
        acc.write(4 * i + 2, az);
        acc.write(4 * i + 3, 0.0);
    }
}

/// The largest (`max`) or the sum (otherwise) of `value` over the workgroup, on every
/// invocation: the subgroup's first, then every invocation combines the subgroups' results.
#[inline(always)]
fn workgroup_reduce(group: Group, value: f32, max: bool, part: Shared<f32, 256>) -> f32 {
    let mine = if max {
        group.subgroup_max(value)
    } else {
        group.subgroup_add(value)
    };
    if group.subgroup_lane() == 0 {
        part.store(group.subgroup_id(), mine);
    }
    group.barrier();
    let subgroups = group.size().div_ceil(group.subgroup_size());
    let mut all = part.load(0);
    let mut s = 1;
    while s < subgroups {
        let p = part.load(s);
        all = if max { all.max(p) } else { all + p };
        s += 1;
    }
    group.barrier(); // `part` is written again by the next reduction
    all
}

/// Row softmax: `out[r][c] = exp(x[r][c] - max_r) / sum_c exp(x[r][c] - max_r)` for rows of
/// `cols` floats, one workgroup per row, each invocation a strided share of the columns.
#[rgpu::kernel(threads = 256)]
pub fn softmax(group: Group, x: &[f32], cols: u32, part: Shared<f32, 256>, out: Global<f32>) {
    let base = group.id() * cols;
    let mut c = group.thread();
    // Start from the row's first value: naga refuses an infinite constant (NEG_INFINITY: the
    // build's portability report says so for WebGPU, Metal and DX12), and Chromium's WGSL
    // compiler refuses the literal naga writes for f32::MIN (-3402823500...0f, 39 digits).
    let mut max = x[base as usize];
    while c < cols {
        max = max.max(x[(base + c) as usize]);
        c += group.size();
    }
    let max = workgroup_reduce(group, max, true, part);
    let mut c = group.thread();
    let mut sum = 0.0f32;
    while c < cols {
        sum += (x[(base + c) as usize] - max).exp();
        c += group.size();
    }
    let scale = 1.0 / workgroup_reduce(group, sum, false, part);
    let mut c = group.thread();
    while c < cols {
        // SAFETY: each invocation writes its own columns of its workgroup's row.
        unsafe { out.write(base + c, (x[(base + c) as usize] - max).exp() * scale) };
        c += group.size();
    }
}

/// The two-level sum as a first version is written: each invocation adds `per_thread` items
/// strided by the workgroup size, `x[i]` guarded by `i < n`; then the workgroup's sum is added
/// to `out[0]`.
#[rgpu::kernel(threads = 256)]
pub fn reduce_sum_looped(
    group: Group,
    x: &[u32],
    n: u32,
    per_thread: u32,
    sums: Shared<u32, 256>,
    out: Global<u32>,
) {
    let base = group.id() * group.size() * per_thread + group.thread();
    let mut acc = 0u32;
    let mut k = 0;
    while k < per_thread {
        let i = base + k * group.size();
        if i < n {
            acc = acc.wrapping_add(x[i as usize]);
        }
        k += 1;
    }
    let total = workgroup_sum(group, acc, sums);
    if group.thread() == 0 {
        out.atomic_add(0, total);
    }
}

/// The same loop guarded by `i < x.len()`: the bounds check of `x[i]` is then the guard
/// itself, so no trap path is left in the loop and the compiler unrolls it, several loads
/// in flight (docs/kernel-api.md, "Loops").
#[rgpu::kernel(threads = 256)]
pub fn reduce_sum_looped_len(
    group: Group,
    x: &[u32],
    per_thread: u32,
    sums: Shared<u32, 256>,
    out: Global<u32>,
) {
    let base = group.id() * group.size() * per_thread + group.thread();
    let mut acc = 0u32;
    let mut k = 0;
    while k < per_thread {
        let i = (base + k * group.size()) as usize;
        if i < x.len() {
            acc = acc.wrapping_add(x[i]);
        }
        k += 1;
    }
    let total = workgroup_sum(group, acc, sums);
    if group.thread() == 0 {
        out.atomic_add(0, total);
    }
}
