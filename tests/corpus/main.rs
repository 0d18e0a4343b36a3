//! Runs every kernel of the portability corpus (tests/corpus/kernels.rs, the module `corpus`,
//! and the real files tests/corpus_table.py's INCLUDED names, each its own module) on the
//! backend `RGPU_BACKEND` names and prints one line per kernel: `<kernel>: <checksum>`, or
//! `<kernel>: error: <rgpu::Error>` when the launch fails. The inputs are fixed, so every
//! backend that computes a kernel right prints the same line for it.
//!
//! Usage: `corpus [KERNEL ...]` (default: all of them).

use std::process::ExitCode;

use kernel::{
    brighten, corpus, mad_chain, mandelbrot, math_precision, minimal, norm, unrolled, user_kernels,
};

/// FNV-1a over the bytes of the output, with their count and their sum of words.
fn checksum(bytes: &[u8]) -> String {
    let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    let sum: u64 = bytes.iter().map(|&b| u64::from(b)).sum();
    format!("{} bytes, sum {sum}, fnv {hash:016x}", bytes.len())
}

fn bytes_of<T: bytemuck::Pod>(values: &[T]) -> Vec<u8> {
    bytemuck::cast_slice(values).to_vec()
}

/// A fixed pseudo-random sequence (the same on every backend and machine).
fn words(n: usize, seed: u32) -> Vec<u32> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            state ^ (state >> 15)
        })
        .collect()
}

type Run = fn(&rgpu::Device) -> Result<Vec<u8>, rgpu::Error>;

const N: u32 = 1001;

fn saxpy(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let x: Vec<f32> = (0..N).map(|i| (i % 1000) as f32).collect();
    let mut y: Vec<f32> = (0..N).map(|i| (i % 7) as f32).collect();
    minimal::saxpy(d, N, 2.0, &x, &mut y)?;
    Ok(bytes_of(&y))
}

fn gradient(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let mut image = vec![0u32; 40 * 25];
    corpus::gradient(d, 40 * 25, 40, &mut image)?;
    Ok(bytes_of(&image))
}

fn scale(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let x = words(N as usize, 1);
    let mut y = vec![0u32; N as usize];
    corpus::scale(d, N, 3, &x, &mut y)?;
    Ok(bytes_of(&y))
}

fn reverse(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let mut keys = words(64 * 5, 2);
    corpus::reverse(d, 5, &mut keys)?;
    Ok(bytes_of(&keys))
}

fn norm(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let x: Vec<f32> = (0..N).map(|i| (i % 97) as f32).collect();
    let y: Vec<f32> = (0..N).map(|i| (i % 89) as f32 - 40.0).collect();
    let mut out = vec![0.0f32; N as usize];
    norm::norm(d, N, &x, &y, &mut out)?;
    Ok(bytes_of(&out))
}

fn unrolled(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let mut out = vec![0u32; N as usize];
    unrolled::unrolled(d, N, &mut out)?;
    Ok(bytes_of(&out))
}

fn mylib_scale(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let mut x: Vec<f32> = words(N as usize, 20)
        .iter()
        .map(|&w| (w >> 8) as f32 / 65536.0 - 128.0)
        .collect();
    corpus::mylib_scale(d, N, 1.37, &mut x)?;
    Ok(bytes_of(&x))
}

fn mandelbrot(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    // The start-up benchmark's launch: a 64x64 image.
    let width = 64u32;
    let mut image = vec![0u32; (width * width) as usize];
    mandelbrot::mandelbrot(d, width * width, width, &mut image)?;
    Ok(bytes_of(&image))
}

fn brighten(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    // Multiples of 1/8 scaled by 2 and shifted by 1/4: exact in f32.
    let mut pixels: Vec<f32> = (0..N).map(|i| (i % 9) as f32 / 8.0).collect();
    brighten::brighten(d, N, 2.0, -0.25, &mut pixels)?;
    Ok(bytes_of(&pixels))
}

fn mad_chain(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let x: Vec<f32> = (0..N).map(|i| 0.5 + (i % 4099) as f32 / 4099.0).collect();
    let mut y: Vec<f32> = (0..N)
        .map(|i| ((i * 7919) % 10007) as f32 / 10007.0 - 0.5)
        .collect();
    mad_chain::mad_chain(d, N, 0.3127, &x, &mut y)?;
    Ok(bytes_of(&y))
}

fn escape(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let mut out = vec![0u32; 80 * 48];
    corpus::escape(d, 80 * 48, 80, 200, &mut out)?;
    Ok(bytes_of(&out))
}

fn escape_wide(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let mut out = vec![0u32; 80 * 48];
    corpus::escape_wide(d, 80 * 48, 80, 200, &mut out)?;
    Ok(bytes_of(&out))
}

fn bytes_mix(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let mut out = vec![0u32; 80 * 48];
    corpus::bytes_mix(d, 80 * 48, 0x9e37_79b9, &mut out)?;
    Ok(bytes_of(&out))
}

fn branchy(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let mut a = vec![0u32; 32];
    corpus::branchy(d, 1, 1, &mut a)?;
    let mut b = vec![0u32; 32];
    corpus::branchy(d, 1, 5, &mut b)?;
    a.extend(b);
    Ok(bytes_of(&a))
}

fn loop_while(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let mut out = vec![0u32; N as usize];
    corpus::loop_while(d, N, 100, &mut out)?;
    Ok(bytes_of(&out))
}

fn loop_for_range(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let mut out = vec![0u32; N as usize];
    corpus::loop_for_range(d, N, &mut out)?;
    Ok(bytes_of(&out))
}

fn loop_break_continue(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let mut out = vec![0u32; N as usize];
    corpus::loop_break_continue(d, N, &mut out)?;
    Ok(bytes_of(&out))
}

fn loop_nested_barriers(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let mut data = words(64 * 3, 3);
    corpus::loop_nested_barriers(d, 3, 3, 4, &mut data)?;
    Ok(bytes_of(&data))
}

fn early_return(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let x = words(N as usize, 4);
    let mut out = vec![7u32; N as usize];
    corpus::early_return(d, N, &x, &mut out)?;
    Ok(bytes_of(&out))
}

fn two_level_sum(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let x = words(5000, 5);
    let mut sums = vec![0u32; 5];
    corpus::two_level_sum(d, 5, &x, &mut sums)?;
    Ok(bytes_of(&sums))
}

fn loop_match(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let mut out = vec![0u32; N as usize];
    corpus::loop_match(d, N, &mut out)?;
    Ok(bytes_of(&out))
}

fn u8_items(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let x: Vec<u8> = words(N as usize, 6).iter().map(|&w| w as u8).collect();
    let mut out = vec![0xaau8; N as usize];
    corpus::u8_items(d, N, &x, &mut out)?;
    Ok(out)
}

fn i8_items(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let x: Vec<i8> = words(N as usize, 7).iter().map(|&w| w as i8).collect();
    let mut out = vec![0i8; N as usize];
    corpus::i8_items(d, N, &x, &mut out)?;
    Ok(bytes_of(&out))
}

fn u16_slice(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let x: Vec<u16> = words(N as usize, 8).iter().map(|&w| w as u16).collect();
    let mut out = vec![0u16; N as usize];
    corpus::u16_slice(d, N, &x, &mut out)?;
    Ok(bytes_of(&out))
}

fn i16_global(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    // An odd count that 7 does not divide (the kernel's promise: (i * 7) % n is then a
    // permutation). N = 1001 = 7 * 143 made invocations i, i + 143, ... write one element, a
    // race whose winner varied between runs on lavapipe and SwiftShader.
    const M: u32 = 1003;
    let values: Vec<i16> = words(M as usize, 9).iter().map(|&w| w as i16).collect();
    let mut out = vec![0i16; M as usize];
    corpus::i16_global(d, M, &values, &mut out)?;
    Ok(bytes_of(&out))
}

fn u8_global_bytes(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let mut out = vec![0x55u8; 4 * N as usize + 3];
    corpus::u8_global_bytes(d, N, &mut out)?;
    Ok(out)
}

fn mandelbrot_u8(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let (width, height) = (64u32, 40u32);
    let mut pixels = vec![0u8; (width * height) as usize];
    corpus::mandelbrot_u8(d, width * height, width, height, &mut pixels)?;
    Ok(pixels)
}

fn escape_u8(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let mut pixels = vec![0u8; 40 * 25];
    corpus::escape_u8(d, 40 * 25, 40, &mut pixels)?;
    Ok(pixels)
}

fn narrow_params(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let mut out = vec![0u32; 64];
    corpus::narrow_params(d, 64, 37, 1000, -3, &mut out)?;
    let mut more = vec![0u32; 64];
    corpus::narrow_params(d, 64, 251, 65535, 7, &mut more)?;
    out.extend(more);
    Ok(bytes_of(&out))
}

fn rgba_items(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let mut px: Vec<corpus::Rgba> = words(N as usize, 17)
        .iter()
        .map(|&w| {
            let [r, g, b, a] = w.to_le_bytes();
            corpus::Rgba { r, g, b, a }
        })
        .collect();
    corpus::rgba_items(d, N, &mut px)?;
    Ok(bytes_of(&px))
}

fn rgb_items(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let mut px: Vec<[u8; 3]> = words(N as usize, 18)
        .iter()
        .map(|&w| [w as u8, (w >> 8) as u8, (w >> 16) as u8])
        .collect();
    corpus::rgb_items(d, N, &mut px)?;
    Ok(bytes_of(&px))
}

fn texel_items(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let mut texels: Vec<corpus::Texel> = words(N as usize, 19)
        .iter()
        .map(|&w| corpus::Texel {
            id: w as u16,
            flags: (w >> 16) as u8,
            level: (w >> 24) as i8,
            weight: (w % 64) as f32,
        })
        .collect();
    corpus::texel_items(d, N, &mut texels)?;
    Ok(bytes_of(&texels))
}

fn u16_local_array(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let mut out = vec![0u32; N as usize];
    corpus::u16_local_array(d, N, &mut out)?;
    Ok(bytes_of(&out))
}

fn bytes_map(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let x: Vec<u8> = words(N as usize, 14)
        .iter()
        .map(|&w| (w >> 8) as u8)
        .collect();
    let mut out = vec![0u8; N as usize];
    corpus::bytes_map(d, N, &x, &mut out)?;
    Ok(out)
}

fn words_map(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let x = words(N as usize, 15);
    let mut out = vec![0u32; N as usize];
    corpus::words_map(d, N, &x, &mut out)?;
    Ok(bytes_of(&out))
}

fn bytes_sum16(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let x: Vec<u8> = words(16 * 63, 16).iter().map(|&w| w as u8).collect();
    let mut out = vec![0u32; 63];
    corpus::bytes_sum16(d, 63, &x, &mut out)?;
    Ok(bytes_of(&out))
}

fn struct_param(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let f = corpus::Affine {
        scale: 3.0,
        offset: -2.0,
        every: 5,
        bias: 100,
    };
    let x: Vec<f32> = (0..N).map(|i| (i % 31) as f32).collect();
    let mut out = vec![0.0f32; N as usize];
    corpus::struct_param(d, N, f, &x, &mut out)?;
    Ok(bytes_of(&out))
}

fn struct_items(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let mut particles: Vec<corpus::Particle> = words(N as usize, 10)
        .iter()
        .enumerate()
        .map(|(i, &w)| corpus::Particle {
            pos: [(w % 65) as f32, ((w >> 8) % 65) as f32],
            vel: [((w >> 16) % 9) as f32 - 4.0, ((w >> 20) % 9) as f32 - 4.0],
            id: i as u32,
            hits: 0,
        })
        .collect();
    for _ in 0..3 {
        corpus::struct_items(d, N, &mut particles)?;
    }
    Ok(bytes_of(&particles))
}

fn helpers(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let mut out = vec![0u32; N as usize];
    corpus::helpers(d, N, 9, &mut out)?;
    Ok(bytes_of(&out))
}

fn closures(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let table = words(37, 11);
    let mut out = vec![0u32; N as usize];
    corpus::closures(d, N, 5, &table, &mut out)?;
    Ok(bytes_of(&out))
}

fn ballot_count(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let x = words(128 * 4 - 9, 12);
    let mut counts = vec![0u32; 4];
    corpus::ballot_count(d, 4, &x, &mut counts)?;
    Ok(bytes_of(&counts))
}

/// `grid_cover` over `RGPU_CORPUS_GROUPS` workgroups (default 5,000; the GPU tier gives
/// 2^31 + 5 on the GPUs): whether every workgroup ran once, the same line for any count.
fn grid_cover(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let groups: u32 = std::env::var("RGPU_CORPUS_GROUPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5000);
    let mut counts = vec![0u32; 2];
    corpus::grid_cover(d, groups, &mut counts)?;
    // The sum of 1..=groups, mod 2^32.
    let sum = (u64::from(groups) * (u64::from(groups) + 1) / 2) as u32;
    Ok(if counts == [groups, sum] {
        b"every workgroup once".to_vec()
    } else {
        format!(
            "{groups} workgroups: count {}, id sum {} (want {sum})",
            counts[0], counts[1]
        )
        .into_bytes()
    })
}

fn subgroup_scan(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let mut out = vec![0u32; 64 * 3];
    corpus::subgroup_scan(d, 3, &mut out)?;
    Ok(bytes_of(&out))
}

fn subgroup_wide(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let mut out = vec![0u32; 64 * 3];
    corpus::subgroup_wide(d, 3, &mut out)?;
    Ok(bytes_of(&out))
}

fn histogram(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let x = words(256 * 3 - 17, 13);
    let mut bins = vec![0u32; 18];
    bins[17] = u32::MAX;
    corpus::histogram(d, 3, &x, &mut bins)?;
    Ok(bytes_of(&bins))
}

/// An f32 in [-0.5, 0.5) with 24 random bits (the user-kernels benchmark's inputs).
fn units(n: usize, seed: u32) -> Vec<f32> {
    words(n, seed)
        .iter()
        .map(|&w| (w >> 8) as f32 * (1.0 / 16_777_216.0) - 0.5)
        .collect()
}

fn reduce_sum(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    // 3 workgroups: each invocation takes the four-load steps, then single loads.
    let x = words(10_007, 21);
    let mut out = vec![5u32];
    user_kernels::reduce_sum(d, 3, &x, &mut out)?;
    Ok(bytes_of(&out))
}

fn reduce_sum_plain(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let x = words(10_007, 22);
    let mut out = vec![5u32];
    user_kernels::reduce_sum_plain(d, 3, &x, &mut out)?;
    Ok(bytes_of(&out))
}

fn scan_tile_sums(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    // 3 tiles of 2048 items, the last one partial.
    let x = words(5000, 23);
    let mut tile_sums = vec![0u32; 3];
    user_kernels::scan_tile_sums(d, 3, &x, &mut tile_sums)?;
    Ok(bytes_of(&tile_sums))
}

fn scan_tile_offsets(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    // One workgroup over 600 sums: three rounds of 256, the last one partial.
    let mut tile_sums = words(600, 24);
    user_kernels::scan_tile_offsets(d, 1, &mut tile_sums)?;
    Ok(bytes_of(&tile_sums))
}

fn scan_tiles(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let x = words(5000, 25);
    let tile_offsets = words(3, 26);
    let mut out = vec![0u32; 5000];
    user_kernels::scan_tiles(d, 3, &x, &tile_offsets, &mut out)?;
    Ok(bytes_of(&out))
}

/// Multiples of 1/8 in [-1, 1): every product of two and every sum of up to 64 products is
/// exact in f32.
fn eighths(n: usize, seed: u32) -> Vec<f32> {
    words(n, seed)
        .iter()
        .map(|&w| ((w >> 8) % 16) as f32 / 8.0 - 1.0)
        .collect()
}

fn sgemm(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    // c (32 x 48) = a (32 x 64) * b (64 x 48): (48 / 16, 32 / 16) workgroups. Inputs whose
    // products and sums are exact, so `mul_add` rounded once (the cpu, CUDA) and twice (a
    // Vulkan driver that splits GLSL.std.450 Fma: lavapipe, Mesa 22.3 and 25.0) agree: the
    // corpus checks the tiles, barriers and 2-D launch on every path; how `mul_add` rounds
    // is tests/integration/test_user_kernels.py's check (inputs where the two differ).
    let (m, n, k) = (32u32, 48u32, 64u32);
    let a = eighths((m * k) as usize, 27);
    let b = eighths((k * n) as usize, 28);
    let mut c = vec![0.0f32; (m * n) as usize];
    user_kernels::sgemm(d, (n / 16, m / 16), n, k, &a, &b, &mut c)?;
    Ok(bytes_of(&c))
}

fn blur(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let (width, height) = (37u32, 23u32);
    let src = units((width * height) as usize, 29);
    let mut dst = vec![0.0f32; (width * height) as usize];
    user_kernels::blur(d, (width, height), &src, &mut dst)?;
    Ok(bytes_of(&dst))
}

fn gather(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let src = units(777, 30);
    let index: Vec<u32> = words(N as usize, 31).iter().map(|&w| w % 777).collect();
    let mut out = vec![0.0f32; N as usize];
    user_kernels::gather(d, N, &index, &src, &mut out)?;
    Ok(bytes_of(&out))
}

fn scatter(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    // A permutation of 0..1024 (an odd multiplier modulo a power of two).
    let n = 1024u32;
    let index: Vec<u32> = (0..n)
        .map(|i| i.wrapping_mul(0x9e37_79b1) & (n - 1))
        .collect();
    let value = units(n as usize, 32);
    let mut dst = vec![0.0f32; n as usize];
    user_kernels::scatter(d, n, &index, &value, &mut dst)?;
    Ok(bytes_of(&dst))
}

fn u64_math(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let mut out = vec![0u32; N as usize];
    corpus::u64_math(d, N, &mut out)?;
    Ok(bytes_of(&out))
}

fn atomic_ops(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let mut acc = vec![0u32; 32];
    // The starting values the kernel's operations expect (min: the largest, and: all ones,
    // the exchange chains: 0, compare-exchange at 20: the one value 7).
    for i in [2, 3, 14, 16] {
        acc[i] = u32::MAX;
    }
    acc[20] = 7;
    let mut sacc = vec![0i32; 9];
    sacc[1] = i32::MAX;
    sacc[2] = i32::MIN;
    sacc[4] = i32::MAX;
    sacc[5] = i32::MIN;
    corpus::atomic_ops(d, 4, &mut acc, &mut sacc)?;
    // The exchange chains' last values depend on the order: only each chain's total (the
    // values returned plus the last) is the same everywhere; the compare-exchanges' winners
    // likewise (only their counts are).
    acc[7] = acc[7].wrapping_add(acc[6]);
    acc[6] = 0;
    acc[18] = acc[18].wrapping_add(acc[17]);
    acc[17] = 0;
    acc[8] = 0;
    acc[20] = 0;
    acc[30] = 0; // the workgroups' compare-exchange winners (tile[6]), summed
    let mut bytes = bytes_of(&acc);
    bytes.extend(bytes_of(&sacc));
    Ok(bytes)
}

fn message_passing(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    const GROUPS: u32 = 64;
    let mut ticket = vec![0u32; 1];
    let mut flags = vec![0u32; GROUPS as usize];
    let mut totals = vec![0u32; GROUPS as usize];
    let mut errors = vec![0u32; 1];
    corpus::message_passing(d, GROUPS, &mut ticket, &mut flags, &mut totals, &mut errors)?;
    let mut out = ticket;
    out.extend(flags);
    out.extend(totals);
    out.extend(errors);
    Ok(bytes_of(&out))
}

fn float_functions(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let x: Vec<f32> = (0..N).map(|i| i as f32 / N as f32).collect();
    let mut flags = vec![0u32; N as usize];
    let mut exact = vec![[0u32; 4]; N as usize];
    corpus::float_functions(d, N, &x, &mut flags, &mut exact)?;
    // Every identity holds on every item (14 bits set): a wrong lowering changes the line.
    Ok([bytes_of(&flags), bytes_of(&exact)].concat())
}

/// The exact float functions (floor, ceil, round with halfway cases, trunc, fract) in f32
/// and f64: the same bits on every backend.
fn math_exact(d: &rgpu::Device, f64s: bool) -> Result<Vec<u8>, rgpu::Error> {
    let x: Vec<f64> = (0..N)
        .map(|i| f64::from(i) * 0.25 - 125.0 + f64::from(i % 3) * 0.1)
        .collect();
    let z: Vec<f64> = (0..N).map(|i| f64::from(i % 19) - 9.0).collect();
    let mut all = Vec::new();
    for which in 12..=16 {
        if f64s {
            let mut y = vec![0f64; N as usize];
            math_precision::math64(d, N, which, &x, &z, &mut y)?;
            all.extend(bytes_of(&y));
        } else {
            let x: Vec<f32> = x.iter().map(|&v| v as f32).collect();
            let z: Vec<f32> = z.iter().map(|&v| v as f32).collect();
            let mut y = vec![0f32; N as usize];
            math_precision::math32(d, N, which, &x, &z, &mut y)?;
            all.extend(bytes_of(&y));
        }
    }
    Ok(all)
}

fn math32(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    math_exact(d, false)
}

fn math64(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    math_exact(d, true)
}

/// The largest `|got - want|` over the largest `|want|`: the user kernels' tolerance check.
fn normwise_error(got: &[f32], want: &[f64]) -> f64 {
    let scale = want.iter().fold(0f64, |m, w| m.max(w.abs()));
    let worst = got
        .iter()
        .zip(want)
        .fold(0f64, |m, (&g, w)| m.max((f64::from(g) - w).abs()));
    worst / scale
}

/// A float result as a line that every backend within the tolerance prints the same.
fn within(name: &str, got: &[f32], want: &[f64], tolerance: f64) -> Vec<u8> {
    let error = normwise_error(got, want);
    if error <= tolerance {
        format!("{name}: within {tolerance:e}").into_bytes()
    } else {
        format!("{name}: normwise relative error {error:e} > {tolerance:e}").into_bytes()
    }
}

/// 512 bodies (two tiles of 256), their accelerations against an f64 reference.
fn nbody(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    nbody_with(d, "nbody", &|d, groups, pos, acc| {
        user_kernels::nbody(d, groups, pos, acc)
    })
}

/// `nbody` with a register budget and its inner loop unrolled: the same check.
fn nbody_tuned(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    nbody_with(d, "nbody_tuned", &|d, groups, pos, acc| {
        user_kernels::nbody_tuned(d, groups, pos, acc)
    })
}

type NBodyLaunch = dyn Fn(&rgpu::Device, u32, &[f32], &mut Vec<f32>) -> Result<(), rgpu::Error>;

fn nbody_with(d: &rgpu::Device, name: &str, launch: &NBodyLaunch) -> Result<Vec<u8>, rgpu::Error> {
    let n = 512usize;
    let pos: Vec<f32> = words(4 * n, 22)
        .iter()
        .enumerate()
        .map(|(i, &w)| (w >> 8) as f32 / 16_777_216.0 - 0.5 + if i % 4 == 3 { 0.6 } else { 0.0 })
        .collect();
    let mut acc = vec![0f32; 4 * n];
    launch(d, (n / 256) as u32, &pos, &mut acc)?;
    let p: Vec<f64> = pos.iter().map(|&v| f64::from(v)).collect();
    let mut want = vec![0f64; 4 * n];
    for i in 0..n {
        for j in 0..n {
            let dx = [0, 1, 2].map(|c| p[4 * j + c] - p[4 * i + c]);
            let d2 = dx.iter().map(|v| v * v).sum::<f64>() + f64::from(user_kernels::NBODY_EPS2);
            let s = p[4 * j + 3] / (d2 * d2.sqrt());
            for c in 0..3 {
                want[4 * i + c] += dx[c] * s;
            }
        }
    }
    Ok(within(name, &acc, &want, 1e-4))
}

/// 5 rows of 1000 logits, against an f64 reference.
fn softmax(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let (rows, cols) = (5usize, 1000usize);
    let x: Vec<f32> = words(rows * cols, 23)
        .iter()
        .map(|&w| ((w >> 8) as f32 / 16_777_216.0 - 0.5) * 8.0)
        .collect();
    let mut out = vec![0f32; rows * cols];
    user_kernels::softmax(d, rows as u32, &x, cols as u32, &mut out)?;
    let mut want = vec![0f64; rows * cols];
    for r in 0..rows {
        let row = &x[r * cols..(r + 1) * cols];
        let max = row.iter().fold(f64::MIN, |m, &v| m.max(f64::from(v)));
        let sum: f64 = row.iter().map(|&v| (f64::from(v) - max).exp()).sum();
        for c in 0..cols {
            want[r * cols + c] = (f64::from(row[c]) - max).exp() / sum;
        }
    }
    Ok(within("softmax", &out, &want, 1e-5))
}

/// 3 workgroups of 16 items a thread over 10,007 words (the last workgroup's tail guarded).
fn reduce_sum_looped(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let x = words(10_007, 24);
    let mut out = vec![7u32];
    user_kernels::reduce_sum_looped(d, 3, &x, 10_007, 16, &mut out)?;
    Ok(bytes_of(&out))
}

fn reduce_sum_looped_len(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let x = words(10_007, 24);
    let mut out = vec![7u32];
    user_kernels::reduce_sum_looped_len(d, 3, &x, 16, &mut out)?;
    Ok(bytes_of(&out))
}

fn subgroup_ops(d: &rgpu::Device) -> Result<Vec<u8>, rgpu::Error> {
    let groups = 7u32;
    let mut out = vec![0u32; groups as usize * 16];
    let mut scans = vec![0u32; groups as usize * 64 * 3];
    corpus::subgroup_ops(d, groups, &mut out, &mut scans)?;
    Ok([bytes_of(&out), bytes_of(&scans)].concat())
}

const KERNELS: &[(&str, Run)] = &[
    ("saxpy", saxpy),
    ("gradient", gradient),
    ("scale", scale),
    ("reverse", reverse),
    ("norm", norm),
    ("unrolled", unrolled),
    ("mylib_scale", mylib_scale),
    ("mandelbrot", mandelbrot),
    ("brighten", brighten),
    ("mad_chain", mad_chain),
    ("escape", escape),
    ("escape_wide", escape_wide),
    ("bytes_mix", bytes_mix),
    ("branchy", branchy),
    ("loop_while", loop_while),
    ("loop_for_range", loop_for_range),
    ("loop_break_continue", loop_break_continue),
    ("loop_nested_barriers", loop_nested_barriers),
    ("early_return", early_return),
    ("two_level_sum", two_level_sum),
    ("float_functions", float_functions),
    ("math32", math32),
    ("math64", math64),
    ("subgroup_ops", subgroup_ops),
    ("nbody", nbody),
    ("nbody_tuned", nbody_tuned),
    ("softmax", softmax),
    ("reduce_sum_looped", reduce_sum_looped),
    ("reduce_sum_looped_len", reduce_sum_looped_len),
    ("loop_match", loop_match),
    ("u8_items", u8_items),
    ("i8_items", i8_items),
    ("u16_slice", u16_slice),
    ("i16_global", i16_global),
    ("u8_global_bytes", u8_global_bytes),
    ("mandelbrot_u8", mandelbrot_u8),
    ("escape_u8", escape_u8),
    ("narrow_params", narrow_params),
    ("rgba_items", rgba_items),
    ("rgb_items", rgb_items),
    ("texel_items", texel_items),
    ("u16_local_array", u16_local_array),
    ("bytes_map", bytes_map),
    ("words_map", words_map),
    ("bytes_sum16", bytes_sum16),
    ("struct_param", struct_param),
    ("struct_items", struct_items),
    ("helpers", helpers),
    ("closures", closures),
    ("ballot_count", ballot_count),
    ("grid_cover", grid_cover),
    ("subgroup_scan", subgroup_scan),
    ("subgroup_wide", subgroup_wide),
    ("histogram", histogram),
    ("reduce_sum", reduce_sum),
    ("reduce_sum_plain", reduce_sum_plain),
    ("scan_tile_sums", scan_tile_sums),
    ("scan_tile_offsets", scan_tile_offsets),
    ("scan_tiles", scan_tiles),
    ("sgemm", sgemm),
    ("blur", blur),
    ("gather", gather),
    ("scatter", scatter),
    ("atomic_ops", atomic_ops),
    ("message_passing", message_passing),
    ("u64_math", u64_math),
];

fn main() -> ExitCode {
    let wanted: Vec<String> = rgpu::args().into_iter().skip(1).collect();
    if let Some(unknown) = wanted.iter().find(|w| !KERNELS.iter().any(|(n, _)| n == w)) {
        rgpu::eprintln!("error: no corpus kernel `{unknown}`");
        return ExitCode::FAILURE;
    }
    let device = match rgpu::Device::select() {
        Ok((device, _)) => device,
        Err(e) => {
            rgpu::eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    rgpu::println!("backend: {}", device.backend());
    for (name, run) in KERNELS {
        if !wanted.is_empty() && !wanted.iter().any(|w| w == name) {
            continue;
        }
        match run(&device) {
            Ok(bytes) => rgpu::println!("{name}: {}", checksum(&bytes)),
            Err(e) => rgpu::println!("{name}: error: {e}"),
        }
    }
    ExitCode::SUCCESS
}
