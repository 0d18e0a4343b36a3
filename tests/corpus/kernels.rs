//! The portability corpus's own kernels: small kernels of the shapes users write, each the
//! smallest form of one construct (loop shapes, narrow integers in memory, structs, closures,
//! helper functions, subgroup operations), plus those whose only home is text (the README's,
//! the docs', variants of a test's). A kernel that a Rust file of the repository defines is
//! not copied here: the corpus includes that file (tests/corpus_table.py's INCLUDED: the
//! minimal template's kernel, the benchmarks' kernel files, and tests/kernels/ and
//! benchmarks/startup_and_launch_overhead_kernel.rs, the kernels that tests and the start-up
//! benchmark write into a kernel crate), and the sort demo's own kernels, and those of
//! rgpu-primitives that its kernel crate depends on, come with the workspace (`rgpu new`,
//! template bitonic). tests/unit/test_corpus_coverage.py fails on a copy.
//!
//! tests/corpus_table.py writes this file into the kernel crate of a fresh sort demo as
//! `mod corpus`, beside the included files' modules; tests/integration/test_corpus.py builds
//! it for every backend and checks each kernel against the cpu backend (tests/corpus/main.rs
//! runs them) and in the portability table of docs/portability.md. Every result is a
//! function of the inputs that each backend must compute bit for bit (integers; floats
//! rounded once per operation, rgpu marks every float result NoContraction; f64 kernels
//! exact), and none depends on the subgroup size (the cpu backend's is 1, lavapipe's 8, a
//! GPU's 32 or 64).

use rgpu::prelude::*;

// --- kernels whose only home is text: the README, the docs, a test's Python --------------

/// One invocation per pixel of a `width`-wide image: the README's `gradient` in one
/// dimension (the README's launches `Item<2>`).
#[rgpu::kernel]
pub fn gradient(item: Item, width: u32, #[item] pixel: &mut u32) {
    let (x, y) = (item.index() % width, item.index() / width);
    *pixel = (x * 255 / width) | ((y & 0xff) << 8);
}

/// A whole read-only slice and a Global written at the item's index (tests/integration/
/// test_spirv_shader_crate.py's `scale`, its product wrapping).
#[rgpu::kernel(threads = 64)]
pub fn scale(t: Item, a: u32, x: &[u32], y: Global<u32>) {
    let i = t.index();
    // SAFETY: i < n <= y.len(); each i is written by one invocation.
    unsafe { y.write(i, a.wrapping_mul(x[i as usize])) }
}

/// Reverses each 64-key tile through workgroup memory (test_spirv_shader_crate.py's
/// `reverse`, also safe for a last tile that is not full).
#[rgpu::kernel(threads = 64)]
pub fn reverse(g: Group, keys: Global<u32>, tile: Shared<u32, 64>) {
    let (base, t) = (g.id() * 64, g.thread());
    if base + t < keys.len() {
        // SAFETY: in bounds; this invocation's own element.
        tile.store(t, unsafe { keys.read(base + t) });
    }
    g.barrier();
    if base + t < keys.len() && base + 63 - t < keys.len() {
        // SAFETY: as above.
        unsafe { keys.write(base + t, tile.load(63 - t)) };
    }
}

/// A kernel of a library crate (the README's `mylib`, "Kernels in library crates"): here in
/// the kernel crate itself, the same body.
#[rgpu::kernel]
pub fn mylib_scale(s: f32, #[item] x: &mut f32) {
    *x *= s;
}

// --- kernels first written for rgpu's portability tests, now the corpus's own -----------

/// Escape counts of z -> z^2 + c in f64 with a u8 count (first in test_portability.py):
/// every value an integer below 2^53, so every backend computes them exactly.
#[rgpu::kernel]
pub fn escape(item: Item, width: u32, limit: u32, #[item] out: &mut u32) {
    let i = item.index();
    let cx = (i % width) as f64 - 40.0;
    let cy = (i / width) as f64 - 24.0;
    let (mut x, mut y) = (0.0f64, 0.0f64);
    let mut n: u8 = 0;
    while (n as u32) < limit && x * x + y * y <= 16777216.0 {
        let t = x * x - y * y + cx;
        y = 2.0 * x * y + cy;
        x = t;
        n = n.wrapping_add(1);
    }
    *out = n as u32;
}

/// The same map with a u32 count: f64 alone.
#[rgpu::kernel]
pub fn escape_wide(item: Item, width: u32, limit: u32, #[item] out: &mut u32) {
    let i = item.index();
    let cx = (i % width) as f64 - 40.0;
    let cy = (i / width) as f64 - 24.0;
    let (mut x, mut y) = (0.0f64, 0.0f64);
    let mut n: u32 = 0;
    while n < limit && x * x + y * y <= 16777216.0 {
        let t = x * x - y * y + cx;
        y = 2.0 * x * y + cy;
        x = t;
        n += 1;
    }
    *out = n;
}

/// 8-bit integer values: a loop-carried u8 hash, wrapping u8/i8 arithmetic, shifts, signed
/// and unsigned comparisons, widening conversions (test_portability.py).
#[rgpu::kernel]
pub fn bytes_mix(item: Item, seed: u32, #[item] out: &mut u32) {
    let i = item.index().wrapping_mul(2654435761) ^ seed;
    let a = i as u8;
    let b = (i >> 8) as u8;
    let s = (i >> 16) as i8;
    let mut acc: u8 = a;
    let mut k: u8 = 0;
    while k < b % 13 {
        acc = acc.wrapping_mul(31).wrapping_add(b ^ k);
        k = k.wrapping_add(1);
    }
    let sa = (a as i8).wrapping_sub(s);
    let shifted = (sa >> 2) as u8 ^ (b << 3) ^ (a >> 5);
    let less = if (a as i8) < s { 1u32 } else { 0 };
    let below = if sa < -5 { 1u32 } else { 0 };
    let wide = (sa as i32).wrapping_mul(3) as u32;
    *out = u32::from(acc)
        | (u32::from(shifted) << 8)
        | (u32::from(k) << 16)
        | (less << 24)
        | (below << 25)
        | ((wide & 0x1f) << 26);
}

/// The smallest kernel found that made naga 30.0.1's SPIR-V reader panic (a subgroup
/// operation reading a value from another block): ballots in one unrolled block, barrier
/// loops in the other (test_portability.py's, made independent of the subgroup size: each
/// ballot is of a uniform predicate, each shuffle reads the invocation's own lane).
#[rgpu::kernel(threads = 32)]
pub fn branchy(group: Group, n: u32, out: Global<u32>) {
    let mut acc = [0u32; 4];
    if n == 1 {
        rgpu::unroll!(J in 0..4 => {
            let v = group.subgroup_ballot(J as u32 == n);
            if v & 1 == 0 {
                acc[J] = group.subgroup_shuffle(J as u32 + 7, group.subgroup_lane());
            }
        });
    } else {
        rgpu::unroll!(J in 0..4 => {
            let mut old = 0;
            for t in 0..n {
                if t == group.thread() % 4 {
                    old = t + J as u32;
                }
                group.barrier();
            }
            acc[J] = group.subgroup_shuffle(old, group.subgroup_lane());
        });
    }
    // SAFETY: thread < 32 <= out.len(), the host's promise; one invocation per index.
    unsafe { out.write(group.thread(), acc[0] + acc[1] + acc[2] + acc[3]) };
}

// --- loop shapes ---------------------------------------------------------------------------

/// A `while` loop: the Collatz steps of i + 1, capped.
#[rgpu::kernel]
pub fn loop_while(item: Item, cap: u32, #[item] out: &mut u32) {
    let mut x = item.index() + 1;
    let mut steps = 0;
    while x != 1 && steps < cap {
        x = if x % 2 == 0 { x / 2 } else { 3 * x + 1 };
        steps += 1;
    }
    *out = steps;
}

/// `for` over a range: a sum of squares mod 2^32.
#[rgpu::kernel]
pub fn loop_for_range(item: Item, #[item] out: &mut u32) {
    let mut acc = 0u32;
    for k in 0..(item.index() % 97) {
        acc = acc.wrapping_add(k.wrapping_mul(k));
    }
    *out = acc;
}

/// `break` and `continue` in one loop.
#[rgpu::kernel]
pub fn loop_break_continue(item: Item, #[item] out: &mut u32) {
    let limit = item.index() % 50;
    let mut acc = 0u32;
    let mut k = 0u32;
    loop {
        k += 1;
        if k > 60 {
            break;
        }
        if k % 3 == 0 {
            continue;
        }
        acc += k;
        if acc > limit * 7 {
            break;
        }
    }
    *out = acc * 100 + k;
}

/// Nested loops with barriers: each round every thread adds its neighbour's value through
/// workgroup memory (64 threads, `rounds` rounds of `steps` steps).
#[rgpu::kernel(threads = 64)]
pub fn loop_nested_barriers(
    group: Group,
    rounds: u32,
    steps: u32,
    data: Global<u32>,
    tile: Shared<u32, 64>,
) {
    let t = group.thread();
    let at = group.id() * 64 + t;
    // SAFETY: the host passes groups * 64 elements; one invocation per index.
    let mut v = unsafe { data.read(at) };
    for _ in 0..rounds {
        let mut s = 0;
        while s < steps {
            tile.store(t, v);
            group.barrier();
            v = v.wrapping_add(tile.load((t + 1) % 64));
            group.barrier();
            s += 1;
        }
    }
    // SAFETY: as above.
    unsafe { data.write(at, v) };
}

/// An early `return` from the kernel body.
#[rgpu::kernel]
pub fn early_return(item: Item, #[item] x: &u32, #[item] out: &mut u32) {
    if *x % 5 == 0 {
        *out = 0;
        return;
    }
    let mut v = *x;
    for _ in 0..3 {
        v = v.wrapping_mul(2654435761).rotate_left(5);
    }
    *out = v ^ item.index();
}

/// A two-level sum, as a new user writes it: a `while` loop over this thread's items, then
/// subgroup adds and a barrier, then the first subgroup adds the partial sums. 256 threads;
/// `sums[group]` gets the workgroup's sum (Global's atomic add, so any subgroup size works).
#[rgpu::kernel(threads = 256)]
pub fn two_level_sum(group: Group, x: &[u32], sums: Global<u32>, partial: Shared<u32, 256>) {
    let t = group.thread();
    let mut i = group.id() * 1024 + t;
    let end = (group.id() + 1) * 1024;
    let mut acc = 0u32;
    while i < end && (i as usize) < x.len() {
        acc = acc.wrapping_add(x[i as usize]);
        i += 256;
    }
    let s = group.subgroup_add(acc);
    if group.subgroup_lane() == 0 {
        partial.store(group.subgroup_id(), s);
    }
    group.barrier();
    let subgroups = (256 + group.subgroup_size() - 1) / group.subgroup_size();
    if group.subgroup_id() == 0 {
        let mut part = 0u32;
        let mut k = group.subgroup_lane();
        while k < subgroups {
            part = part.wrapping_add(partial.load(k));
            k += group.subgroup_size();
        }
        let total = group.subgroup_add(part);
        if group.subgroup_lane() == 0 {
            sums.atomic_add(group.id(), total);
        }
    }
}

/// A `match` (an OpSwitch) in a loop.
#[rgpu::kernel]
pub fn loop_match(item: Item, #[item] out: &mut u32) {
    let mut state = item.index() % 4;
    let mut acc = 0u32;
    for k in 0..16u32 {
        state = match state {
            0 => (state + k) % 4,
            1 => 3,
            2 => {
                acc = acc.wrapping_add(k);
                0
            }
            _ => 2,
        };
        acc = acc.wrapping_mul(3).wrapping_add(state);
    }
    *out = acc;
}

// --- narrow integers in memory ------------------------------------------------------------

/// u8 in and out, one byte an item: neighbouring invocations write bytes of one word.
#[rgpu::kernel]
pub fn u8_items(item: Item, #[item] x: &u8, #[item] out: &mut u8) {
    *out = x.wrapping_mul(3) ^ (item.index() as u8);
}

/// i8 in and out: sign matters in the arithmetic (arithmetic shift, signed compare).
#[rgpu::kernel]
pub fn i8_items(#[item] x: &i8, #[item] out: &mut i8) {
    let v = *x;
    *out = if v < 0 {
        (v >> 1).wrapping_sub(3)
    } else {
        v.wrapping_mul(2)
    };
}

/// u16 slice read at a neighbour's index (its `len()` is the host's 1001, not the 1002
/// elements of the buffer's whole 4-byte words), u16 written. The rotation is written out:
/// rust-gpu 0.11's `rotate_left` on a u8, u16 or u64 rotates by the width of the shift's
/// type, 32 (docs/reference.md, rust-gpu).
#[rgpu::kernel]
pub fn u16_slice(item: Item, x: &[u16], #[item] out: &mut u16) {
    let i = item.index() as usize;
    let j = (i + 1) % x.len();
    let v = x[i].wrapping_add(x[j]);
    *out = (v << 3) | (v >> 13);
}

/// i16 through a Global: read one element, write another (each written by one invocation).
#[rgpu::kernel]
pub fn i16_global(item: Item, values: &[i16], out: Global<i16>) {
    let i = item.index();
    let v = values[i as usize];
    let n = out.len();
    // SAFETY: (i * 7) % n is a permutation of 0..n when 7 does not divide n (the host's
    // promise), so each index is written once.
    unsafe { out.write((i * 7) % n, v.wrapping_neg().wrapping_sub(1)) };
}

/// u8 through a Global: each invocation writes 4 bytes of its own 4-byte word, plus the
/// first byte of a word another invocation also writes into (bytes 4i + 1 .. 4i + 4 and
/// 4(i + 1)). Byte stores must not lose a neighbour's update.
#[rgpu::kernel]
pub fn u8_global_bytes(item: Item, out: Global<u8>) {
    let i = item.index();
    let n = out.len();
    let base = 4 * i;
    let mut k = 1;
    while k <= 4 {
        if base + k < n {
            // SAFETY: in bounds; byte 4i + k (k = 1..=4) belongs to invocation i alone.
            unsafe { out.write(base + k, (i as u8).wrapping_add(k as u8)) };
        }
        k += 1;
    }
}

/// The paper's Mandelbrot moved onto the GPU: f64 math, one `u8` a pixel.
#[rgpu::kernel]
pub fn mandelbrot_u8(item: Item, width: u32, height: u32, #[item] pixel: &mut u8) {
    let (px, py) = (item.index() % width, item.index() / width);
    let cx = px as f64 / width as f64 * 3.0 - 2.0;
    let cy = py as f64 / height as f64 * 2.0 - 1.0;
    let (mut x, mut y) = (0.0f64, 0.0f64);
    let mut n = 0u32;
    while n < 255 && x * x + y * y <= 4.0 {
        let t = x * x - y * y + cx;
        y = 2.0 * x * y + cy;
        x = t;
        n += 1;
    }
    *pixel = n as u8;
}

/// The same escape-time map in f32 with a u8 output: what reaches Metal and WebGPU.
#[rgpu::kernel]
pub fn escape_u8(item: Item, width: u32, #[item] pixel: &mut u8) {
    let cx = (item.index() % width) as f32 - 20.0;
    let cy = (item.index() / width) as f32 - 12.0;
    let (mut x, mut y) = (0.0f32, 0.0f32);
    let mut n: u8 = 0;
    while n < 200 && x * x + y * y <= 4096.0 {
        let t = x * x - y * y + cx;
        y = 2.0 * x * y + cy;
        x = t;
        n += 1;
    }
    *pixel = n;
}

/// Narrow scalar parameters (the params block) and a per-thread byte table.
#[rgpu::kernel]
pub fn narrow_params(item: Item, add: u8, mul: u16, shift: i8, #[item] out: &mut u32) {
    let mut table = [0u8; 16];
    let mut k = 0;
    while k < 16 {
        table[k] = (k as u8).wrapping_mul(add);
        k += 1;
    }
    let pick = table[(item.index() % 16) as usize];
    let wide = u32::from(pick) * u32::from(mul);
    *out = if shift < 0 {
        wide >> (-shift) as u32
    } else {
        wide << shift as u32
    };
}

/// A pixel of four bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Rgba {
    pub r: u8,
    pub g: u8,
    pub b: u8,
    pub a: u8,
}

// SAFETY: repr(C), four u8 fields: no padding, every bit pattern valid.
unsafe impl bytemuck::Zeroable for Rgba {}
// SAFETY: as above.
unsafe impl bytemuck::Pod for Rgba {}

/// A struct of bytes an item: read whole, fields changed, written whole.
#[rgpu::kernel]
pub fn rgba_items(#[item] px: &mut Rgba) {
    let p = *px;
    *px = Rgba {
        r: p.g,
        g: p.b.wrapping_add(p.r),
        b: 255 - p.b,
        a: p.a | 1,
    };
}

/// Three bytes an item (`[u8; 3]`: an element straddles 4-byte words), reversed in place.
#[rgpu::kernel]
pub fn rgb_items(item: Item, #[item] px: &mut [u8; 3]) {
    let p = *px;
    px[0] = p[2];
    px[1] = p[1] ^ (item.index() as u8);
    px[2] = p[0];
}

/// Mixed widths in a struct: u16, u8, u8 and f32 fields in one 8-byte element.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Texel {
    pub id: u16,
    pub flags: u8,
    pub level: i8,
    pub weight: f32,
}

// SAFETY: repr(C): 2 + 1 + 1 + 4 bytes, no padding; every bit pattern valid.
unsafe impl bytemuck::Zeroable for Texel {}
// SAFETY: as above.
unsafe impl bytemuck::Pod for Texel {}

/// A buffer of mixed-width structs, one field updated from the others.
#[rgpu::kernel]
pub fn texel_items(#[item] t: &mut Texel) {
    let mut v = *t;
    v.level = v.level.wrapping_sub(1);
    v.flags ^= (v.id & 0xff) as u8;
    v.id = v.id.wrapping_mul(3);
    v.weight = v.weight * 0.5 + f32::from(v.flags);
    *t = v;
}

/// A per-thread u16 array indexed at run time (narrow Function memory).
#[rgpu::kernel]
pub fn u16_local_array(item: Item, #[item] out: &mut u32) {
    let mut hist = [0u16; 8];
    let mut v = item.index().wrapping_mul(2654435761);
    for _ in 0..40 {
        let slot = (v >> 29) as usize;
        hist[slot] = hist[slot].wrapping_add(1);
        v = v.wrapping_mul(1664525).wrapping_add(1013904223);
    }
    let mut acc = 0u32;
    for k in 0..8 {
        acc = acc.wrapping_mul(41).wrapping_add(u32::from(hist[k]));
    }
    *out = acc;
}

// The kernels of benchmarks/narrow_memory_words.sh (the cost of 8-bit memory as 32-bit words).

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

// --- structs, closures, helper functions ----------------------------------------------------

/// A `#[repr(C)]` value parameter.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Affine {
    pub scale: f32,
    pub offset: f32,
    pub every: u32,
    pub bias: u32,
}

// SAFETY: repr(C), four 4-byte fields: no padding, every bit pattern valid.
unsafe impl bytemuck::Zeroable for Affine {}
// SAFETY: as above.
unsafe impl bytemuck::Pod for Affine {}

/// A struct parameter (the params block holds it).
#[rgpu::kernel]
pub fn struct_param(item: Item, f: Affine, #[item] x: &f32, #[item] out: &mut f32) {
    let bump = if item.index() % f.every == 0 {
        f.bias as f32
    } else {
        0.0
    };
    *out = *x * f.scale + f.offset + bump;
}

/// A buffer of `#[repr(C)]` structs, read and written an element a time.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Particle {
    pub pos: [f32; 2],
    pub vel: [f32; 2],
    pub id: u32,
    pub hits: u32,
}

// SAFETY: repr(C), 4-byte fields only: no padding, every bit pattern valid.
unsafe impl bytemuck::Zeroable for Particle {}
// SAFETY: as above.
unsafe impl bytemuck::Pod for Particle {}

/// One step of particles bouncing in a 0..64 box (integer-valued floats).
#[rgpu::kernel]
pub fn struct_items(#[item] p: &mut Particle) {
    let mut q = *p;
    for axis in 0..2 {
        let next = q.pos[axis] + q.vel[axis];
        if next < 0.0 || next > 64.0 {
            q.vel[axis] = -q.vel[axis];
            q.hits += 1;
        } else {
            q.pos[axis] = next;
        }
    }
    *p = q;
}

/// A struct with methods, built and used inside the kernel.
#[derive(Clone, Copy)]
struct Lcg {
    state: u32,
}

impl Lcg {
    fn new(seed: u32) -> Self {
        Self {
            state: seed ^ 0x9e37_79b9,
        }
    }

    fn next(&mut self) -> u32 {
        self.state = self.state.wrapping_mul(1664525).wrapping_add(1013904223);
        self.state >> 8
    }
}

/// Helper functions and a local struct.
#[rgpu::kernel]
pub fn helpers(item: Item, rolls: u32, #[item] out: &mut u32) {
    let mut rng = Lcg::new(item.index());
    let mut best = 0;
    for _ in 0..rolls {
        best = max3(best, rng.next() % 1000, rng.next() % 1000);
    }
    *out = best;
}

#[inline(never)]
fn max3(a: u32, b: u32, c: u32) -> u32 {
    a.max(b).max(c)
}

/// A closure capturing a buffer and a value, called in a loop.
#[rgpu::kernel]
pub fn closures(item: Item, k: u32, table: &[u32], #[item] out: &mut u32) {
    let n = table.len() as u32;
    let look = |at: u32| table[((at + k) % n) as usize];
    let mut acc = 0u32;
    let mut j = 0;
    while j < 4 {
        acc = acc.wrapping_mul(7).wrapping_add(look(item.index() + j));
        j += 1;
    }
    *out = acc;
}

// --- subgroup operations and atomics ------------------------------------------------------

/// Ballots counted over the workgroup: how many threads of each workgroup see an odd value
/// (the count does not depend on the subgroup size).
#[rgpu::kernel(threads = 128)]
pub fn ballot_count(group: Group, x: &[u32], counts: Global<u32>) {
    let i = group.global_thread() as usize;
    let odd = i < x.len() && x[i] % 2 == 1;
    let bits = group.subgroup_ballot(odd);
    if group.subgroup_lane() == 0 {
        counts.atomic_add(group.id(), bits.count_ones());
    }
}

/// Every workgroup of a launch exactly once: each one's first thread adds 1 and its id + 1
/// to two counters. The GPU tier launches it with more workgroups than a CUDA grid row holds
/// (2^31 - 1; the runtime then launches rows of them), corpus's `RGPU_CORPUS_GROUPS`.
#[rgpu::kernel(threads = 32)]
pub fn grid_cover(group: Group, counts: Global<u32>) {
    if group.thread() == 0 {
        counts.atomic_add(0, 1);
        counts.atomic_add(1, group.id().wrapping_add(1));
    }
}

/// Exclusive and inclusive subgroup scans checked against each other, the subgroup's first
/// lane broadcast: every thread writes a value that is the same for any subgroup size.
#[rgpu::kernel(threads = 64)]
pub fn subgroup_scan(group: Group, out: Global<u32>) {
    let v = group.thread() % 7 + 1;
    let before = group.subgroup_exclusive_add(v);
    let total = group.subgroup_add(v);
    let first = group.subgroup_broadcast(group.thread(), 0);
    let mine = group.subgroup_shuffle(before + v, group.subgroup_lane());
    // first + lane is this thread's index; the scan's last lane holds the total.
    let ok = first + group.subgroup_lane() == group.thread() && mine <= total;
    // SAFETY: one invocation per index, groups * 64 <= out.len().
    unsafe { out.write(group.global_thread(), if ok { v } else { 1000 + v }) };
}

/// The 64-bit subgroup operations (u64, i64, f64; two 32-bit shuffles each on CUDA): scans
/// against the reduction, broadcast, shuffles, min/max and the bitwise reductions, each
/// checked per thread in a way that holds for any subgroup size. A thread writes its value
/// when every check holds, else 1000 + the failed checks' bits.
#[rgpu::kernel(threads = 64)]
pub fn subgroup_wide(group: Group, out: Global<u32>) {
    let t = group.thread();
    let lane = group.subgroup_lane();
    let v = ((t as u64) << 33) | 5;
    let f = (t + 1) as f64 * 4096.0;
    let mut failed = 0u32;
    // Scans and the sum: exclusive + own = inclusive <= total (no wrap at these values).
    let before = group.subgroup_exclusive_add(v);
    let inclusive = group.subgroup_inclusive_add(v);
    if before + v != inclusive || inclusive > group.subgroup_add(v) {
        failed |= 1;
    }
    let fbefore = group.subgroup_exclusive_add(f);
    if fbefore + f != group.subgroup_inclusive_add(f) || group.subgroup_add(f) < f {
        failed |= 2;
    }
    // Lane 0's values: the broadcast, the min of increasing values, the max of negated ones.
    let first = group.subgroup_broadcast(v, 0);
    if first + ((lane as u64) << 33) != v || group.subgroup_min(v) != first {
        failed |= 4;
    }
    if group.subgroup_min(f) != group.subgroup_broadcast(f, 0) || group.subgroup_max(f) < f {
        failed |= 8;
    }
    if group.subgroup_max(-(v as i64)) != -(first as i64) {
        failed |= 16;
    }
    // Shuffles move both words: own lane, the lane below (lane 0 keeps its own), xor 0.
    let up = group.subgroup_shuffle_up(v, 1);
    let want_up = if lane == 0 { v } else { v - (1u64 << 33) };
    if group.subgroup_shuffle(v, lane) != v
        || up != want_up
        || group.subgroup_shuffle_xor(f, 0) != f
    {
        failed |= 32;
    }
    // Bitwise: every lane's bit 32 + lane % 31 is in the OR; the AND keeps the common high bit.
    let bit = 1u64 << (32 + lane % 31);
    let high = 1u64 << 63;
    if group.subgroup_or(bit) & bit == 0 || group.subgroup_and(bit | high) & high == 0 {
        failed |= 64;
    }
    if group.subgroup_xor(-1i64)
        != if group.subgroup_size() % 2 == 0 {
            0
        } else {
            -1
        }
    {
        failed |= 128;
    }
    let value = if failed == 0 { t } else { 1000 + failed };
    // SAFETY: one invocation per index, groups * 64 <= out.len().
    unsafe { out.write(group.global_thread(), value) };
}

/// A histogram with workgroup atomics, then global atomics (add, max, min).
#[rgpu::kernel(threads = 256)]
pub fn histogram(group: Group, x: &[u32], bins: Global<u32>, local: Shared<u32, 16>) {
    let t = group.thread();
    if t < 16 {
        local.store(t, 0);
    }
    group.barrier();
    let i = group.global_thread() as usize;
    if i < x.len() {
        local.atomic_add(x[i] % 16, 1);
        bins.atomic_max(16, x[i]);
        bins.atomic_min(17, x[i]);
    }
    group.barrier();
    if t < 16 {
        bins.atomic_add(t, local.load(t));
    }
}

// --- atomics ------------------------------------------------------------------------------

/// Every integer atomic operation on `Global` (u32 and i32, each ordering) and `Shared`,
/// with results that do not depend on the order the invocations run in: sums, min/max,
/// and/or/xor of known sets, the count of successful compare-exchanges, and an exchange
/// chain whose returned values and last value add up to a known total. `acc` starts as
/// the host sets it (see main.rs: `atomic_ops`).
#[rgpu::kernel(threads = 64)]
pub fn atomic_ops(
    group: Group,
    acc: Global<u32>,
    sacc: Global<i32>,
    tile: Shared<u32, 8>,
    stile: Shared<i32, 2>,
) {
    use core::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release, SeqCst};
    let t = group.global_thread();
    let s = t as i32 - 128;
    let local = group.thread();
    if local == 0 {
        tile.store(0, 0);
        tile.store(1, u32::MAX);
        tile.store(2, 0);
        tile.store(3, u32::MAX);
        tile.store(4, 0);
        tile.store(5, 0);
        tile.store(6, 0);
        tile.store(7, 0);
        stile.store(0, i32::MAX);
        stile.store(1, i32::MIN);
    }
    group.barrier();

    // The relaxed methods.
    acc.atomic_add(0, t);
    acc.atomic_max(1, t.wrapping_mul(2_654_435_761) >> 8);
    acc.atomic_min(2, t.wrapping_mul(2_654_435_761) >> 8);
    if t < 20 {
        acc.atomic_and(3, !(1 << t));
    }
    acc.atomic_or(4, 1 << (t % 29));
    acc.atomic_xor(5, t.wrapping_mul(0x9e37_79b9));
    let old = acc.atomic_exchange(6, t + 1);
    acc.atomic_add(7, old);
    if acc.atomic_compare_exchange(8, 0, t + 1).is_ok() {
        acc.atomic_add(9, 1);
    }
    // The ordered handle.
    acc.atomic(10).fetch_add(t, Release);
    acc.atomic(11).fetch_sub(t, AcqRel);
    acc.atomic(12).fetch_or(1 << (t % 31), Acquire);
    acc.atomic(13).fetch_xor(t, SeqCst);
    acc.atomic(14).fetch_and(!(1 << (t % 32)), SeqCst);
    acc.atomic(15).fetch_max(t ^ 0x55, Acquire);
    acc.atomic(16).fetch_min(t ^ 0x55, Release);
    let old = acc.atomic(17).swap(t + 1, AcqRel);
    acc.atomic(18).fetch_add(old, Relaxed);
    // A compare-exchange loop: an increment by every invocation.
    let counter = acc.atomic(19);
    let mut seen = counter.load(Acquire);
    loop {
        match counter.compare_exchange(seen, seen + 1, AcqRel, Acquire) {
            Ok(_) => break,
            Err(now) => seen = now,
        }
    }
    if acc
        .atomic(20)
        .compare_exchange(7, t, SeqCst, Relaxed)
        .is_ok()
    {
        acc.atomic(21).fetch_add(1, SeqCst);
    }
    acc.atomic(22).store(5, Release);
    acc.atomic(23)
        .fetch_add(acc.atomic(22).load(SeqCst), Relaxed);

    // i32: signed min and max, subtraction below zero.
    sacc.atomic_add(0, s);
    sacc.atomic_min(1, s);
    sacc.atomic_max(2, s);
    sacc.atomic(3).fetch_sub(s, SeqCst);
    sacc.atomic(4).fetch_min(s * 3, Acquire);
    sacc.atomic(5).fetch_max(-s * 3, Release);
    sacc.atomic_xor(6, s);

    // Workgroup memory.
    tile.atomic_add(0, local);
    tile.atomic_min(1, local ^ 0x2a);
    tile.atomic_max(2, local ^ 0x2a);
    tile.atomic_and(3, !(1 << (local % 32)));
    tile.atomic_or(4, 1 << (local % 30));
    tile.atomic_xor(5, local * 3);
    if tile.atomic_compare_exchange(6, 0, local + 1).is_ok() {
        tile.atomic(7).fetch_add(1, AcqRel);
    }
    stile.atomic(0).fetch_min(-(local as i32), SeqCst);
    stile.atomic(1).fetch_max(-(local as i32), Relaxed);
    // SAFETY: index 7 < 8.
    unsafe { tile.atomic_add_unchecked(7, 2) };
    group.barrier();
    if local == 0 {
        for i in 0..8 {
            acc.atomic(24 + i)
                .fetch_add(tile.atomic(i).load(Relaxed), Relaxed);
        }
        sacc.atomic_add(7, stile.atomic(0).load(Acquire));
        sacc.atomic_add(8, stile.atomic(1).load(SeqCst));
    }
}

/// Message passing between workgroups: a chained look-back. Each workgroup takes its
/// place from a ticket counter (so the one it waits for has started), waits (bounded) with
/// acquire loads for its predecessor's flag, reads the predecessor's running total, and
/// publishes its own with a release store of its flag. A wait that runs out counts in
/// `errors[0]` instead of hanging (forward progress between workgroups is not guaranteed
/// everywhere).
#[rgpu::kernel(threads = 32)]
pub fn message_passing(
    group: Group,
    ticket: Global<u32>,
    flags: Global<u32>,
    totals: Global<u32>,
    errors: Global<u32>,
    place: Shared<u32, 1>,
) {
    use core::sync::atomic::Ordering::{Acquire, Relaxed, Release};
    if group.thread() == 0 {
        place.store(0, ticket.atomic(0).fetch_add(1, Relaxed));
    }
    group.barrier();
    let g = place.load(0);
    if group.thread() == 0 && g < flags.len() {
        let mut total = 0;
        if g > 0 {
            let mut spins = 0u32;
            let mut ready = false;
            while spins < (1 << 24) {
                if flags.atomic(g - 1).load(Acquire) == 1 {
                    ready = true;
                    break;
                }
                spins += 1;
            }
            if ready {
                total = totals.atomic(g - 1).load(Relaxed);
            } else {
                errors.atomic_add(0, 1);
            }
        }
        totals.atomic(g).store(total + 3 * g + 1, Relaxed);
        flags.atomic(g).store(1, Release);
    }
}

// --- the float functions and subgroup operations -----------------------------------------

/// Identities of the float functions (`rgpu::Float`), checked with a tolerance each backend
/// meets (the Vulkan specification's bounds: sine and cosine within 2^-11, the rest a few
/// ulp), one bit per identity in `flags`; and the exact ones (`floor`, `ceil`, `round`,
/// `trunc`, `fract`, the trait's `powi`) as values in `exact`. Every backend that lowers
/// each function to the right instruction gives all 14 bits and the cpu's values. (`x.powi`
/// is an identity, not exact: on Vulkan it is spirv-std's own `f32::powi`, GLSL `Pow`;
/// `Float::powi(x, n)`, the trait's, is exact everywhere.)
#[rgpu::kernel]
pub fn float_functions(#[item] x: &f32, #[item] flags: &mut u32, #[item] exact: &mut [u32; 4]) {
    let x = *x;
    let y = x * 20.0 - 10.0; // [-10, 10)
    let p = x * 100.0 + 0.01; // (0, 100]
    let a = x * 2.4 - 1.2; // [-1.2, 1.2)
    let close = |got: f32, want: f32, rel: f32| (got - want).abs() <= rel * want.abs().max(1.0);
    let (s, c) = (y.sin(), y.cos());
    let checks = [
        close(p.sqrt() * p.sqrt(), p, 1e-5),
        close(p.rsqrt() * p.sqrt(), 1.0, 1e-5),
        close(y.exp().ln(), y, 1e-5),
        close(p.log2().exp2(), p, 1e-5),
        close(p.log10(), p.ln() / core::f32::consts::LN_10, 1e-5),
        close(s * s + c * c, 1.0, 2e-3),
        close(a.tan(), a.sin() / a.cos(), 2e-3),
        close(y.sin_cos().0, s, 1e-6) && close(y.sin_cos().1, c, 1e-6),
        close(p.powf(2.5), p * p * p.sqrt(), 1e-4),
        close(
            a.tanh(),
            (a.exp() - (-a).exp()) / (a.exp() + (-a).exp()),
            1e-4,
        ),
        close(
            (y * 0.5).exp2(),
            (y * 0.5 * core::f32::consts::LN_2).exp(),
            1e-5,
        ),
        close(p.ln(), p.log2() * core::f32::consts::LN_2, 1e-5),
        close(
            (x + 0.5).powi(5),
            (x + 0.5) * (x + 0.5) * (x + 0.5) * (x + 0.5) * (x + 0.5),
            1e-5,
        ),
        close(a.atan2(0.7).tan(), a / 0.7, 2e-3),
    ];
    let mut bits = 0u32;
    let mut k = 0;
    while k < checks.len() {
        bits |= (checks[k] as u32) << k;
        k += 1;
    }
    *flags = bits;
    // Each exact value from one multiplication at most before the function: through naga
    // (no NoContraction) a driver may fuse `x * a + b` into one rounding.
    let q = x * 1000.0; // [0, 1000)
    let f = q.floor();
    *exact = [
        f.to_bits() ^ (-q).ceil().to_bits().rotate_left(8) ^ q.ceil().to_bits().rotate_left(3),
        q.round().to_bits() ^ (-q).round().to_bits().rotate_left(16) ^ (f + 0.5).round().to_bits(),
        q.fract().to_bits() ^ (-q).trunc().to_bits().rotate_left(5) ^ (-f - 0.5).round().to_bits(),
        // A positive power: a negative one divides, and Vulkan's division need not be
        // correctly rounded (the Vulkan specification allows 2.5 ulp).
        Float::powi(x, 5).to_bits() ^ Float::powi(x + 1.0, 3).to_bits().rotate_left(4),
    ];
}

/// Every subgroup operation over 64-thread workgroups, combined over the workgroup so the
/// result does not depend on the subgroup size (32 on NVIDIA, others elsewhere, 1 on the
/// cpu): per workgroup, in `out[g * 16 ..]`, the sum, min (i32), max (f32), AND, OR, XOR
/// (i32), a shuffle-xor butterfly sum (f32), a shuffle-down sum, a count, all, any, and the
/// broadcast/shuffle mismatches (0); in `scans`, each thread's workgroup-inclusive prefix
/// sum from `subgroup_inclusive_add`, from `subgroup_exclusive_add` (f32) and from a
/// `subgroup_shuffle_up` ladder (i32), three words a thread. Subgroups are taken to hold
/// consecutive threads (as on every driver rgpu runs on).
#[rgpu::kernel(threads = 64)]
pub fn subgroup_ops(group: Group, out: Global<u32>, scans: Global<u32>, slots: Shared<u32, 1024>) {
    let t = group.thread();
    let gt = group.global_thread();
    let size = group.subgroup_size();
    let sid = group.subgroup_id();
    let lane = group.subgroup_lane();
    let v = gt.wrapping_mul(2_654_435_761) >> 7;
    let i = v as i32 - 8_000_000;
    let f = (v % 1000) as f32 - 500.0;
    // Butterfly and ladder by hand, from the shuffles.
    let mut fly = f;
    let mut off = size / 2;
    while off > 0 {
        fly += group.subgroup_shuffle_xor(fly, off);
        off /= 2;
    }
    let mut down = v;
    let mut off = size / 2;
    while off > 0 {
        down = down.wrapping_add(group.subgroup_shuffle_down(down, off));
        off /= 2;
    }
    let mut up = i;
    let mut d = 1;
    while d < size {
        let other = group.subgroup_shuffle_up(up, d);
        if lane >= d {
            up = up.wrapping_add(other);
        }
        d *= 2;
    }
    let mismatch = (group.subgroup_broadcast(v, 0) != group.subgroup_shuffle(v, 0)) as u32
        + (group.subgroup_shuffle(f, lane) != f) as u32;
    let metrics = [
        group.subgroup_add(v),
        group.subgroup_min(i) as u32,
        group.subgroup_max(f).to_bits(),
        group.subgroup_and(v | 0x0f0f_0000),
        group.subgroup_or(v & 0x00ff_00ff),
        group.subgroup_xor(i) as u32,
        fly.to_bits(),
        down,
        group.subgroup_count(v & 1 == 1),
        group.subgroup_all(v != 12_345) as u32,
        group.subgroup_any(v % 61 == 0) as u32,
        group.subgroup_add(mismatch),
        group.subgroup_add(f).to_bits(),
    ];
    let inclusive = group.subgroup_inclusive_add(v);
    let exclusive = group.subgroup_exclusive_add(f);
    if lane == 0 {
        let mut m = 0;
        while m < metrics.len() {
            slots.store(m as u32 * 64 + sid, metrics[m]);
            m += 1;
        }
    }
    group.barrier();
    // The prefix of the subgroups before this one (the sums in slots 0 and 12).
    let mut before = 0u32;
    let mut before_f = 0.0f32;
    let mut s = 0;
    while s < sid {
        before = before.wrapping_add(slots.load(s));
        before_f += f32::from_bits(slots.load(12 * 64 + s));
        s += 1;
    }
    // The i32 values before this subgroup: their u32 sum less 8,000,000 each.
    let before_i = (before as i32).wrapping_sub(8_000_000i32.wrapping_mul((sid * size) as i32));
    // SAFETY: one thread writes each of its own three words.
    unsafe {
        scans.write(gt * 3, before.wrapping_add(inclusive));
        scans.write(gt * 3 + 1, (before_f + exclusive).to_bits());
        scans.write(gt * 3 + 2, before_i.wrapping_add(up) as u32);
    }
    if t == 0 {
        let subgroups = 64u32.div_ceil(size);
        let mut m = 0u32;
        while m < 13 {
            let mut acc = slots.load(m * 64);
            let mut s = 1;
            while s < subgroups {
                let x = slots.load(m * 64 + s);
                acc = match m {
                    1 => (acc as i32).min(x as i32) as u32,
                    2 => f32::from_bits(acc).max(f32::from_bits(x)).to_bits(),
                    3 | 9 => acc & x,
                    4 | 10 => acc | x,
                    5 => acc ^ x,
                    6 | 12 => (f32::from_bits(acc) + f32::from_bits(x)).to_bits(),
                    _ => acc.wrapping_add(x),
                };
                s += 1;
            }
            // SAFETY: thread 0 of each workgroup writes its own 16 words.
            unsafe { out.write(group.id() * 16 + m, acc) };
            m += 1;
        }
    }
}

// --- what some platforms do not have -------------------------------------------------------

/// 64-bit integer arithmetic (no 64-bit integers on WebGPU).
#[rgpu::kernel]
pub fn u64_math(item: Item, #[item] out: &mut u32) {
    let v = u64::from(item.index()).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mixed = v ^ (v >> 29);
    *out = (mixed as u32) ^ ((mixed >> 32) as u32);
}
