//! Every backend built into this test binary sorts exactly like Rust's own sort, with
//! either algorithm, through the same host API the demo uses.
//!
//! A backend that is built in but cannot run here (no GPU, no driver) is reported as
//! skipped, per backend, by `rgpu test`; `RGPU_REQUIRE_BACKENDS=cuda,wgpu` (or `rgpu test
//! --backend cuda`) turns that into a failure.

use host::reference::rust_sort;
use host::rng::SplitMix64;
use host::{Algorithm, Sorter};
use kernel::{KeyKind, SortOrder};
use rgpu::{Backend, Device};

/// Edge sizes, the workgroup and tile boundaries (2^11 +- 1, 4096 +- 1), 2^16, 2^20 + 7.
const SIZES: [usize; 12] = [
    0,
    1,
    2,
    3,
    1000,
    2047,
    2048,
    2049,
    4095,
    4097,
    1 << 16,
    (1 << 20) + 7,
];
/// GPU backends also sort 2^24 keys for every type and order; the cpu backend sorts it in
/// `the_cpu_sorts_two_to_the_24` (two cases: CPU-only CI has 2 cores).
const GPU_SIZES: [usize; 1] = [1 << 24];
const KINDS: [KeyKind; 3] = [KeyKind::U32, KeyKind::I32, KeyKind::F32];
const ORDERS: [SortOrder; 2] = [SortOrder::Ascending, SortOrder::Descending];

fn sizes(backend: Backend) -> impl Iterator<Item = usize> {
    let gpu = if backend == Backend::Cpu {
        0
    } else {
        GPU_SIZES.len()
    };
    SIZES.into_iter().chain(GPU_SIZES.into_iter().take(gpu))
}

/// Random bits plus duplicates and, as floats, NaN, +-0 and +-inf.
fn input(len: usize, seed: u64) -> Vec<u32> {
    specials(SplitMix64::new(seed).bits(len))
}

/// Few distinct keys (64 values, NaNs with different payloads and signs among them): long
/// runs of equal digits in every pass.
fn duplicates(len: usize, seed: u64) -> Vec<u32> {
    let values: Vec<u32> = SplitMix64::new(seed ^ 0xd0d0).bits(56);
    SplitMix64::new(seed)
        .bits(len)
        .into_iter()
        .map(|r| match r % 64 {
            i @ 0..56 => values[i as usize],
            i => [
                0x7fc0_0000,
                0x7fc0_0001,
                0xffc0_0000,
                0xffc0_0001,
                0,
                0x8000_0000,
                1,
                2,
            ][i as usize - 56],
        })
        .collect()
}

/// `keys` with, every 7th place, NaN, +-0, +-inf and the extremes.
fn specials(mut keys: Vec<u32>) -> Vec<u32> {
    let specials = [
        0,
        0x8000_0000,
        0x7f80_0000,
        0xff80_0000,
        0x7fc0_0000,
        0xffc0_0000,
        1,
        u32::MAX,
    ];
    for (i, k) in keys.iter_mut().enumerate().step_by(7) {
        *k = specials[i % specials.len()];
    }
    keys
}

/// `RGPU_PARITY_MAX_LEN` caps the sizes (CPU Vulkan drivers such as lavapipe are slow on
/// small CI machines); the edge sizes up to 2^16 always run.
fn max_len() -> usize {
    std::env::var("RGPU_PARITY_MAX_LEN")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(usize::MAX)
}

fn check(device: &Device, algorithm: Algorithm) -> Result<(), String> {
    let backend = device.backend();
    let mut sorter = Sorter::with_algorithm(device.clone(), algorithm);
    for (i, len) in sizes(backend).enumerate() {
        if len > max_len().max(1 << 16) {
            eprintln!("{backend}: {len} keys skipped (RGPU_PARITY_MAX_LEN)");
            continue;
        }
        let mut inputs = vec![("random", input(len, i as u64 + 1))];
        if algorithm == Algorithm::Radix {
            inputs.push(("duplicate", duplicates(len, i as u64 + 1)));
        }
        for (what, keys) in &inputs {
            for kind in KINDS {
                for order in ORDERS {
                    let mut sorted = keys.clone();
                    sorter
                        .sort_bits(&mut sorted, kind, order)
                        .map_err(|e| e.to_string())?;
                    if sorted != rust_sort(keys, kind, order) {
                        return Err(format!(
                            "{algorithm}: {len} {what} {} keys, {}: differ from Rust's sort",
                            kind.name(),
                            order.name()
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}

#[test]
fn every_built_backend_matches_rusts_sort() {
    rgpu::testing::each_backend("parity", |device| check(device, Algorithm::Bitonic));
}

#[test]
fn every_built_backend_radix_sorts_like_rust() {
    rgpu::testing::each_backend("parity-radix", |device| check(device, Algorithm::Radix));
}

/// The kernels themselves on the cpu backend (the demo's cpu path is a vectorized twin):
/// the launches a GPU runs, through rgpu's cpu executor.
#[test]
fn the_kernels_sort_on_the_cpu_executor() {
    let device = Device::open(Backend::Cpu).unwrap();
    for (i, len) in [2usize, 3, 1000, 4097, 9000, 1 << 15]
        .into_iter()
        .enumerate()
    {
        let keys = input(len, 100 + i as u64);
        for (kind, order) in [
            (KeyKind::U32, SortOrder::Ascending),
            (KeyKind::F32, SortOrder::Descending),
        ] {
            let mut buffer = device.upload(&keys).unwrap();
            host::sorter::launch_all(&device, &mut buffer, len as u32, kind, order).unwrap();
            assert!(
                buffer.read().unwrap() == rust_sort(&keys, kind, order),
                "{len} {kind:?} {order:?}"
            );
        }
    }
}

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "2^24 keys on the CPU take minutes unoptimized: cargo test --release (rgpu test does)"
)]
fn the_cpu_sorts_two_to_the_24() {
    let keys = input(1 << 24, 24);
    let device = Device::open(Backend::Cpu).unwrap();
    for (algorithm, kind, order) in [
        (Algorithm::Bitonic, KeyKind::U32, SortOrder::Ascending),
        (Algorithm::Bitonic, KeyKind::F32, SortOrder::Descending),
        (Algorithm::Radix, KeyKind::I32, SortOrder::Ascending),
    ] {
        let mut sorter = Sorter::with_algorithm(device.clone(), algorithm);
        let mut sorted = keys.clone();
        sorter.sort_bits(&mut sorted, kind, order).unwrap();
        assert!(
            sorted == rust_sort(&keys, kind, order),
            "2^24 {algorithm} {kind:?} {order:?}"
        );
    }
}

#[test]
fn typed_keys_sort_through_the_generic_api() {
    let mut sorter = Sorter::new(Device::open(Backend::Cpu).unwrap());
    let mut floats = vec![3.0f32, f32::NAN, -0.0, 0.0, f32::NEG_INFINITY, -1.0];
    host::sorter::sort(&mut sorter, &mut floats, SortOrder::Ascending).unwrap();
    let bits: Vec<u32> = floats.iter().map(|f| f.to_bits()).collect();
    let expected: Vec<u32> = [f32::NEG_INFINITY, -1.0, -0.0, 0.0, 3.0, f32::NAN]
        .iter()
        .map(|f| f.to_bits())
        .collect();
    assert_eq!(bits, expected);
}

#[test]
fn backends_not_built_in_say_how_to_build_them() {
    for backend in Backend::ALL.into_iter().filter(|b| !b.is_built()) {
        let message = Device::open(backend).err().unwrap().to_string();
        assert_eq!(
            message,
            format!("built without the {backend} feature: run rgpu build --backend {backend}")
        );
    }
}
