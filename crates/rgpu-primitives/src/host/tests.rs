//! The primitives on the cpu backend, both ways: the host versions (what the cpu backend
//! runs) and the kernels' launches (`Primitives::with_kernels`: the GPU code, run by the
//! cpu backend), each against plain Rust.

use std::string::ToString;
use std::vec;
use std::vec::Vec;

use super::*;

pub(super) fn random(seed: u64, n: usize) -> Vec<u64> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        })
        .collect()
}

fn cpu() -> Device {
    Device::open(Backend::Cpu).unwrap()
}

/// Both ways of running the primitives on the cpu backend.
fn both(device: &Device) -> [Primitives; 2] {
    [Primitives::new(device), Primitives::with_kernels(device)]
}

/// The sorts' three ways on the cpu backend: the host sort, and the kernels of each
/// algorithm.
fn sorters(device: &Device) -> [Primitives; 3] {
    let mut onesweep = Primitives::with_kernels(device);
    onesweep.set_sort_plan(Some(SortPlan::new(SortAlgorithm::Onesweep)));
    let mut counting = Primitives::with_kernels(device);
    counting.set_sort_plan(Some(SortPlan::new(SortAlgorithm::CountThenScatter)));
    [Primitives::new(device), counting, onesweep]
}

/// Sizes around the tile (4096) and a few tiles; the kernels' path takes the smaller ones
/// (the cpu backend runs every invocation of a group kernel as a coroutine).
const SIZES: [usize; 7] = [0, 1, 2, 1000, 4096, 4097, 13_001];

fn floats(n: usize, seed: u64) -> Vec<f32> {
    let specials = [
        f32::NAN,
        -f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        0.0,
        -0.0,
        1.0e-45,
        -1.0e-45,
    ];
    random(seed, n)
        .iter()
        .enumerate()
        .map(|(i, r)| {
            if i % 97 == 0 {
                specials[i / 97 % specials.len()]
            } else {
                f32::from_bits(*r as u32)
            }
        })
        .collect()
}

#[test]
fn keys_sort_like_plain_rust_for_every_type_and_order() {
    let device = cpu();
    for mut prims in sorters(&device) {
        for n in SIZES {
            let words: Vec<u32> = random(n as u64, n)
                .iter()
                .map(|r| *r as u32 % 5000)
                .collect();
            for order in [Order::Ascending, Order::Descending] {
                let mut keys = words.clone();
                prims.sort_keys(&mut keys, order).unwrap();
                let mut want = words.clone();
                want.sort();
                if order == Order::Descending {
                    want.reverse();
                }
                assert_eq!(keys, want, "u32 {n} {order:?}");

                let ints: Vec<i32> = random(7, n).iter().map(|r| *r as i32).collect();
                let mut keys = ints.clone();
                prims.sort_keys(&mut keys, order).unwrap();
                let mut want = ints;
                want.sort_by(|a, b| match order {
                    Order::Ascending => a.cmp(b),
                    Order::Descending => b.cmp(a),
                });
                assert_eq!(keys, want, "i32 {n} {order:?}");

                let fl = floats(n, 3);
                let mut keys = fl.clone();
                prims.sort_keys(&mut keys, order).unwrap();
                let mut want = fl;
                want.sort_by(|a, b| match order {
                    Order::Ascending => a.total_cmp(b),
                    Order::Descending => b.total_cmp(a),
                });
                let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&keys), bits(&want), "f32 {n} {order:?}");

                let wide: Vec<u64> = random(11, n)
                    .iter()
                    .enumerate()
                    .map(|(i, r)| if i % 3 == 0 { r & 0xffff } else { *r })
                    .collect();
                let mut keys = wide.clone();
                prims.sort_keys(&mut keys, order).unwrap();
                let mut want = wide;
                want.sort();
                if order == Order::Descending {
                    want.reverse();
                }
                assert_eq!(keys, want, "u64 {n} {order:?}");
            }
        }
    }
}

#[test]
fn pairs_sort_stably_and_keys_in_a_cpu_buffer_sort_in_place() {
    let device = cpu();
    for mut prims in sorters(&device) {
        for n in SIZES {
            let keys: Vec<f32> = random(5, n).iter().map(|r| (r % 7) as f32 - 3.0).collect();
            for order in [Order::Ascending, Order::Descending] {
                let mut k = keys.clone();
                let mut v: Vec<u32> = (0..n as u32).collect();
                prims.sort_pairs(&mut k, &mut v, order).unwrap();
                let mut want: Vec<(f32, u32)> = keys.iter().copied().zip(0..n as u32).collect();
                want.sort_by(|a, b| match order {
                    Order::Ascending => a.0.total_cmp(&b.0),
                    Order::Descending => b.0.total_cmp(&a.0),
                });
                let got: Vec<(f32, u32)> = k.into_iter().zip(v).collect();
                assert_eq!(got, want, "{n} {order:?}");
            }
        }
        let mut buffer = device.upload(&[3u32, 1, 2]).unwrap();
        prims.sort_keys(&mut buffer, Order::Ascending).unwrap();
        assert_eq!(buffer.read().unwrap(), [1, 2, 3]);
    }
}

#[test]
fn scans_are_wrapping_prefix_sums() {
    let device = cpu();
    for mut prims in both(&device) {
        for n in SIZES {
            let input: Vec<u32> = random(9, n).iter().map(|r| *r as u32).collect();
            let mut out = vec![0u32; n];
            prims.exclusive_scan(&input, &mut out).unwrap();
            let mut running = 0u32;
            for (i, &x) in input.iter().enumerate() {
                assert_eq!(out[i], running, "exclusive {n} at {i}");
                running = running.wrapping_add(x);
            }
            prims.inclusive_scan(&input, &mut out).unwrap();
            let mut running = 0u32;
            for (i, &x) in input.iter().enumerate() {
                running = running.wrapping_add(x);
                assert_eq!(out[i], running, "inclusive {n} at {i}");
            }
            let ints: Vec<i32> = input.iter().map(|&x| x as i32).collect();
            let mut out = vec![0i32; n];
            prims.inclusive_scan(&ints, &mut out).unwrap();
            assert_eq!(out.last().copied(), (n > 0).then_some(running as i32));
        }
    }
}

#[test]
fn reductions_match_plain_rust_and_float_sums_agree_bit_for_bit() {
    let device = cpu();
    let [mut host, mut kernels] = both(&device);
    // Several reduction tiles (4096 items each) and two levels (70001: 18 tiles).
    for n in SIZES.into_iter().chain([16_384, 16_385, 70_001]) {
        let words: Vec<u32> = random(13, n).iter().map(|r| *r as u32).collect();
        for prims in [&mut host, &mut kernels] {
            let sum = prims.sum(&words).unwrap();
            assert_eq!(sum, words.iter().fold(0u32, |a, &b| a.wrapping_add(b)));
            let ints: Vec<i32> = words.iter().map(|&w| w as i32).collect();
            assert_eq!(
                prims.reduce(&ints, Reduction::Min).unwrap(),
                ints.iter().copied().min()
            );
            assert_eq!(
                prims.reduce(&ints, Reduction::Max).unwrap(),
                ints.iter().copied().max()
            );
            assert_eq!(
                prims.reduce(&words, Reduction::Max).unwrap(),
                words.iter().copied().max()
            );
            let fl = floats(n, 17);
            let min = prims.reduce(&fl, Reduction::Min).unwrap();
            let want = fl.iter().copied().min_by(|a, b| a.total_cmp(b));
            assert_eq!(min.map(f32::to_bits), want.map(f32::to_bits), "min {n}");
            let max = prims.reduce(&fl, Reduction::Max).unwrap();
            let want = fl.iter().copied().max_by(|a, b| a.total_cmp(b));
            assert_eq!(max.map(f32::to_bits), want.map(f32::to_bits), "max {n}");
        }
        // Finite floats: the sum's bits are the same both ways (the kernels' order).
        let fl: Vec<f32> = random(19, n)
            .iter()
            .map(|r| (*r as u32 % 2001) as f32 / 7.0 - 100.0)
            .collect();
        let a = host.sum(&fl).unwrap();
        let b = kernels.sum(&fl).unwrap();
        assert_eq!(a.to_bits(), b.to_bits(), "f32 sum of {n}");
        // Close to a plain sequential sum (no f64 here: rgpu declares SPIR-V capabilities
        // from the scalar types a crate with kernels names).
        let plain: f32 = fl.iter().sum();
        assert!(
            (a - plain).abs() <= 1e-2 * (1.0 + plain.abs()),
            "{a} vs {plain}"
        );
    }
    assert_eq!(
        host.reduce(&Vec::<f32>::new(), Reduction::Min).unwrap(),
        None
    );
    assert_eq!(kernels.sum(&Vec::<u32>::new()).unwrap(), 0);
}

/// Lengths at the order-free reduction's edges: none, one, two, a subgroup less one (32,
/// 64, 128 lanes), a block (256 threads x 1..8 loads) and a tile around, past 2^20, and
/// lengths that are a multiple of nothing.
const REDUCE_SIZES: [usize; 17] = [
    0,
    1,
    2,
    31,
    63,
    127,
    255,
    767,
    2047,
    2049,
    4095,
    4096,
    4097,
    3 * 4096 + 17,
    70_001,
    (1 << 20) + 123,
    1_000_003,
];

/// The plans the order-free reduction is tested with: the backend's, one workgroup of one
/// load a thread (every round its own), and a few workgroups striding over many rounds.
fn reduce_plans(backend: Backend) -> [ReducePlan; 4] {
    [
        reduce_plan(backend),
        ReducePlan {
            groups: 1,
            items: 1,
        },
        ReducePlan {
            groups: 3,
            items: 8,
        },
        ReducePlan {
            groups: 7,
            items: 3,
        },
    ]
}

/// The order-free reduction (the kernels on the cpu backend: subgroups of one lane) gives
/// plain Rust's result for every op and word type at the edge lengths, with every plan.
#[test]
fn order_free_reductions_match_plain_rust_at_the_edges_with_every_plan() {
    let device = cpu();
    let mut prims = Primitives::with_kernels(&device);
    for plan in reduce_plans(Backend::Cpu) {
        prims.set_reduce_plan(Some(plan));
        for n in REDUCE_SIZES {
            let words: Vec<u32> = random(n as u64 + 5, n).iter().map(|r| *r as u32).collect();
            let ints: Vec<i32> = words.iter().map(|&w| w as i32).collect();
            let fl = floats(n, n as u64 + 9);
            let what = std::format!("{plan:?}, {n} words");
            let sum = words.iter().fold(0u32, |a, &b| a.wrapping_add(b));
            assert_eq!(prims.sum(&words).unwrap(), sum, "sum u32, {what}");
            assert_eq!(prims.sum(&ints).unwrap(), sum as i32, "sum i32, {what}");
            let min = prims.reduce(&words, Reduction::Min).unwrap();
            assert_eq!(min, words.iter().copied().min(), "min u32, {what}");
            let max = prims.reduce(&words, Reduction::Max).unwrap();
            assert_eq!(max, words.iter().copied().max(), "max u32, {what}");
            let min = prims.reduce(&ints, Reduction::Min).unwrap();
            assert_eq!(min, ints.iter().copied().min(), "min i32, {what}");
            let max = prims.reduce(&ints, Reduction::Max).unwrap();
            assert_eq!(max, ints.iter().copied().max(), "max i32, {what}");
            let min = prims.reduce(&fl, Reduction::Min).unwrap().map(f32::to_bits);
            let want = fl.iter().copied().min_by(f32::total_cmp).map(f32::to_bits);
            assert_eq!(min, want, "min f32, {what}");
            let max = prims.reduce(&fl, Reduction::Max).unwrap().map(f32::to_bits);
            let want = fl.iter().copied().max_by(f32::total_cmp).map(f32::to_bits);
            assert_eq!(max, want, "max f32, {what}");
        }
    }
}

/// An integer reduction is the order-free kernel's two launches (the workgroups' words,
/// then one workgroup's); the f32 sum keeps the fixed-order kernel.
#[test]
fn integer_reductions_take_the_order_free_kernel_and_f32_sums_the_fixed_order() {
    let device = cpu();
    let mut prims = Primitives::with_kernels(&device);
    let seen = record_launches(&mut prims);
    let words: Vec<u32> = (0..70_001).collect();
    prims.sum(&words).unwrap();
    let floats: Vec<f32> = words.iter().map(|&w| w as f32).collect();
    prims.reduce(&floats, Reduction::Max).unwrap();
    assert_eq!(*seen.lock().unwrap(), ["prim_reduce_unordered"; 4]);
    seen.lock().unwrap().clear();
    prims.sum(&floats).unwrap();
    assert_eq!(*seen.lock().unwrap(), ["prim_reduce"; 2]);
}

#[test]
fn histograms_count_the_values_below_the_bin_count() {
    let device = cpu();
    for mut prims in both(&device) {
        for n in SIZES {
            let values: Vec<u32> = random(23, n).iter().map(|r| (r % 300) as u32).collect();
            for bins in [1usize, 256, 5000] {
                let mut counts = vec![7u32; bins];
                prims.histogram(&values, &mut counts).unwrap();
                let mut want = vec![0u32; bins];
                for &v in &values {
                    if (v as usize) < bins {
                        want[v as usize] += 1;
                    }
                }
                assert_eq!(counts, want, "{n} values, {bins} bins");
            }
        }
    }
}

#[test]
fn top_k_is_the_first_k_of_the_sorted_keys() {
    let device = cpu();
    for mut prims in sorters(&device) {
        let keys: Vec<u64> = random(29, 9000);
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(
            prims.top_k(&keys, 10, Order::Ascending).unwrap(),
            sorted[..10]
        );
        sorted.reverse();
        assert_eq!(
            prims.top_k(&keys, 5, Order::Descending).unwrap(),
            sorted[..5]
        );
        let words: Vec<i32> = keys.iter().map(|&k| k as i32).collect();
        let mut sorted = words.clone();
        sorted.sort();
        assert_eq!(
            prims.top_k(&words, 3, Order::Ascending).unwrap(),
            sorted[..3]
        );
        assert_eq!(prims.top_k(&words, 0, Order::Ascending).unwrap(), []);
        assert_eq!(
            prims.top_k(&words[..2], 9, Order::Ascending).unwrap().len(),
            2
        );
    }
}

/// Elements that claim a length no machine here could hold.
struct Huge;

impl Elements<u32> for Huge {
    fn source(&self) -> Source<'_, u32> {
        Source::Host(&[])
    }
    fn place(&mut self) -> Place<'_, u32> {
        Place::Host(&mut [])
    }
    fn count(&self) -> usize {
        MAX_LEN + 1
    }
}

#[test]
fn bad_input_is_an_error_that_writes_nothing() {
    let device = cpu();
    for mut prims in both(&device) {
        let mut keys = vec![3u32, 2, 1];
        let mut values = vec![0u32; 2];
        let e = prims
            .sort_pairs(&mut keys, &mut values, Order::Ascending)
            .unwrap_err();
        assert!(e.to_string().contains("2 values for 3 keys"), "{e}");
        assert_eq!(
            (keys.as_slice(), values.as_slice()),
            (&[3, 2, 1][..], &[0, 0][..])
        );
        let mut counts: Vec<u32> = Vec::new();
        let e = prims.histogram(&keys, &mut counts).unwrap_err();
        assert!(e.to_string().contains("0 bins"), "{e}");
        let e = prims.sort_keys(&mut Huge, Order::Ascending).unwrap_err();
        assert!(matches!(e, Error::TooLarge { .. }), "{e}");
        let mut out = vec![9u32; 2];
        let e = prims.exclusive_scan(&keys, &mut out).unwrap_err();
        assert!(
            e.to_string().contains("2 elements for an input of 3"),
            "{e}"
        );
        assert_eq!(out, [9, 9]);
        let mut wide = vec![0u64; 3];
        let e = prims
            .sort_pairs(&mut keys, &mut wide, Order::Ascending)
            .unwrap_err();
        assert!(e.to_string().contains("values of 8 bytes"), "{e}");
    }
}

/// The names of the kernels `prims` launches from now on, as its launch hook sees them.
fn record_launches(prims: &mut Primitives) -> std::sync::Arc<std::sync::Mutex<Vec<&'static str>>> {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = std::sync::Arc::clone(&seen);
    prims.set_launch_hook(Some(std::boxed::Box::new(move |name, launch| {
        log.lock().unwrap().push(name);
        launch()
    })));
    seen
}

#[test]
fn a_launch_hook_runs_every_launch_by_name() {
    let device = cpu();
    let mut prims = Primitives::with_kernels(&device);
    let seen = record_launches(&mut prims);
    let mut keys: Vec<u32> = (0..5000).rev().collect();
    prims.sort_keys(&mut keys, Order::Ascending).unwrap();
    assert!(keys.windows(2).all(|w| w[0] < w[1]));
    let pass = [
        "prim_radix_upsweep",
        "prim_radix_scan",
        "prim_radix_downsweep",
    ];
    assert_eq!(*seen.lock().unwrap(), pass.repeat(4));
    prims.set_launch_hook(None);
    prims.sort_keys(&mut keys, Order::Descending).unwrap();
    assert_eq!(seen.lock().unwrap().len(), 12);
}

/// Plain Rust's prefix sums (wrapping).
fn prefix_sums(input: &[u32], inclusive: bool) -> Vec<u32> {
    let mut running = 0u32;
    input
        .iter()
        .map(|&x| {
            let before = running;
            running = running.wrapping_add(x);
            if inclusive {
                running
            } else {
                before
            }
        })
        .collect()
}

/// Lengths at the scan's edges: none, one, around one and two tiles, non-multiples, and
/// more than 2^20 (257 tiles: look-backs longer than a window of 32).
const SCAN_SIZES: [usize; 10] = [
    0,
    1,
    4095,
    4096,
    4097,
    8191,
    8193,
    3 * 4096 + 17,
    40_000,
    (1 << 20) + 123,
];

/// The single-pass scan (the kernels on the cpu backend) and reduce-then-scan give plain
/// Rust's bits at every edge length, exclusive and inclusive, `u32` and `i32`.
#[test]
fn both_scan_algorithms_match_plain_rust_at_the_edges() {
    let device = cpu();
    for algorithm in [ScanAlgorithm::SinglePass, ScanAlgorithm::ReduceThenScan] {
        let mut prims = Primitives::with_kernels(&device);
        prims.set_scan_algorithm(Some(algorithm));
        for n in SCAN_SIZES {
            let input: Vec<u32> = random(n as u64, n).iter().map(|r| *r as u32).collect();
            for inclusive in [false, true] {
                let mut out = vec![0u32; n];
                if inclusive {
                    prims.inclusive_scan(&input, &mut out).unwrap();
                } else {
                    prims.exclusive_scan(&input, &mut out).unwrap();
                }
                assert!(
                    out == prefix_sums(&input, inclusive),
                    "{algorithm:?}, {n} items, inclusive {inclusive}"
                );
            }
            let ints: Vec<i32> = input.iter().map(|&x| x as i32).collect();
            let mut out = vec![0i32; n];
            prims.exclusive_scan(&ints, &mut out).unwrap();
            let want: Vec<i32> = prefix_sums(&input, false)
                .into_iter()
                .map(|x| x as i32)
                .collect();
            assert!(out == want, "{algorithm:?}, {n} i32 items");
        }
    }
}

/// The fallback, really run: with [`ScanParams::WITHHOLD`] tiles 1, 5, 9, .. never publish
/// (as workgroups that are never rescheduled), so the tiles after them cannot wait for them
/// and must reduce those tiles from the input; the scan still finishes with plain Rust's
/// bits, and the state's counter shows the fallbacks. With no spins and with the default.
#[test]
fn the_single_pass_scan_falls_back_for_a_predecessor_that_never_publishes() {
    use crate::scan::ScanParams;
    let device = cpu();
    let mut prims = Primitives::with_kernels(&device);
    for (n, spins) in [
        (10 * 4096 + 5, 0),
        (10 * 4096 + 5, ScanParams::SPINS),
        (2 * 4096 + 1, 3),
    ] {
        let host: Vec<u32> = random(77, n).iter().map(|r| *r as u32).collect();
        let input = device.upload(&host).unwrap();
        for inclusive in [false, true] {
            let mut output = device.zeros::<u32>(n).unwrap();
            let params = ScanParams::new(n as u32, inclusive)
                .with_flags(ScanParams::WITHHOLD)
                .with_spins(spins);
            let fallbacks = prims.single_pass_scan(&input, &mut output, params).unwrap();
            assert!(
                output.read().unwrap() == prefix_sums(&host, inclusive),
                "{n} items, spins {spins}, inclusive {inclusive}"
            );
            // Withheld tiles with a tile after them: 1, 5, 9 of 11; 1 of 3.
            let withheld = (1..params.tiles - 1).filter(|t| t % 4 == 1).count() as u32;
            assert!(
                withheld > 0 && fallbacks >= withheld,
                "{fallbacks} fallbacks, {withheld} withheld"
            );
        }
    }
}

/// The radix scan over rows longer than one round of the kernel (more than 4096 tiles:
/// sorts of more than 2^24 keys), on the cpu executor with made-up counts.
#[test]
fn the_radix_scan_takes_rows_longer_than_a_round() {
    use crate::group::TILE;
    use crate::radix::{prim_radix_scan, RadixParams, RADIX};
    let device = cpu();
    let tiles = (TILE + 905) as usize;
    let params = RadixParams::new(
        (tiles * TILE as usize) as u32,
        8,
        KeyKind::U32,
        Order::Ascending,
        false,
        false,
    );
    assert_eq!(params.tiles as usize, tiles);
    let counts: Vec<u32> = random(9, RADIX as usize * tiles)
        .into_iter()
        .map(|r| (r % (TILE as u64 + 1)) as u32)
        .collect();
    let (mut scanned, mut totals) = (counts.clone(), vec![0u32; RADIX as usize]);
    prim_radix_scan(&device, RADIX, params, &mut scanned, &mut totals).unwrap();
    for (d, row) in counts.chunks(tiles).enumerate() {
        let mut sum = 0;
        for (t, count) in row.iter().enumerate() {
            assert_eq!(scanned[d * tiles + t], sum, "digit {d}, tile {t}");
            sum += count;
        }
        assert_eq!(totals[d], sum, "digit {d}");
    }
}

/// Onesweep's kernels against plain Rust at the edges of its tiles and on the keys that
/// stress one digit: all equal, descending, only the high byte set; keys alone and pairs
/// (stable), every key type, both orders.
#[test]
fn onesweep_sorts_like_plain_rust_at_the_edges() {
    let device = cpu();
    let mut prims = Primitives::with_kernels(&device);
    prims.set_sort_plan(Some(SortPlan::new(SortAlgorithm::Onesweep)));
    let sizes = [0, 1, 2, 4095, 4096, 4097, 3 * 4096 + 7, 5 * 4096];
    for n in sizes {
        let random_words: Vec<u32> = random(n as u64 + 3, n).iter().map(|r| *r as u32).collect();
        let patterns: [(&str, Vec<u32>); 4] = [
            ("random", random_words.clone()),
            ("equal", vec![0x8000_0001; n]),
            ("descending", (0..n as u32).rev().collect()),
            (
                "high bits",
                random_words.iter().map(|w| w & 0xff00_0000).collect(),
            ),
        ];
        for (what, words) in patterns {
            for order in [Order::Ascending, Order::Descending] {
                let mut want = words.clone();
                want.sort();
                if order == Order::Descending {
                    want.reverse();
                }
                let mut keys = words.clone();
                prims.sort_keys(&mut keys, order).unwrap();
                assert!(keys == want, "u32 {what} {n} {order:?}");

                let ints: Vec<i32> = words.iter().map(|&w| w as i32).collect();
                let mut want: Vec<i32> = ints.clone();
                want.sort();
                if order == Order::Descending {
                    want.reverse();
                }
                let mut keys = ints.clone();
                prims.sort_keys(&mut keys, order).unwrap();
                assert!(keys == want, "i32 {what} {n} {order:?}");

                let mut keys = words.clone();
                let mut values: Vec<u32> = (0..n as u32).collect();
                prims.sort_pairs(&mut keys, &mut values, order).unwrap();
                let mut want: Vec<(u32, u32)> = words.iter().copied().zip(0..n as u32).collect();
                want.sort_by(|a, b| match order {
                    Order::Ascending => a.0.cmp(&b.0),
                    Order::Descending => b.0.cmp(&a.0),
                });
                let got: Vec<(u32, u32)> = keys.into_iter().zip(values).collect();
                assert!(got == want, "pairs {what} {n} {order:?}");
            }
        }
        let floats = floats(n, 11);
        let mut keys = floats.clone();
        prims.sort_keys(&mut keys, Order::Ascending).unwrap();
        let mut want = floats.clone();
        want.sort_by(f32::total_cmp);
        let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
        assert!(bits(&keys) == bits(&want), "f32 {n}");

        let wide = random(n as u64 + 5, n);
        let mut keys = wide.clone();
        prims.sort_keys(&mut keys, Order::Descending).unwrap();
        let mut want = wide.clone();
        want.sort();
        want.reverse();
        assert!(keys == want, "u64 {n}");
    }
}

/// Onesweep's fallback, really run: with `WITHHOLD` tiles 1, 5, 9, .. never publish (as
/// workgroups that are never rescheduled), so the tiles after them cannot wait for them and
/// must count those tiles' digits from the keys; the sort still gives plain Rust's order,
/// and the counter shows the fallbacks. With no spins and with the default.
#[test]
fn onesweep_falls_back_for_a_predecessor_that_never_publishes() {
    use crate::onesweep::OnesweepParams;
    let device = cpu();
    let mut prims = Primitives::with_kernels(&device);
    for (n, spins) in [(10 * 4096 + 5, 0), (6 * 4096 + 1, OnesweepParams::SPINS)] {
        prims.set_sort_plan(Some(SortPlan {
            spins,
            flags: OnesweepParams::WITHHOLD,
            ..SortPlan::new(SortAlgorithm::Onesweep)
        }));
        let words: Vec<u32> = random(41, n).iter().map(|r| *r as u32).collect();
        let mut keys = words.clone();
        let mut values: Vec<u32> = (0..n as u32).collect();
        prims
            .sort_pairs(&mut keys, &mut values, Order::Ascending)
            .unwrap();
        let mut want: Vec<(u32, u32)> = words.iter().copied().zip(0..n as u32).collect();
        want.sort();
        let got: Vec<(u32, u32)> = keys.into_iter().zip(values).collect();
        assert!(got == want, "{n} keys, spins {spins}");
        // Withheld tiles with a tile after them, in each of the 4 passes.
        let tiles = (n as u32).div_ceil(4096);
        let withheld = (1..tiles - 1).filter(|t| t % 4 == 1).count() as u32;
        let fallbacks = prims.sort_fallbacks();
        assert!(
            withheld > 0 && fallbacks >= 4 * withheld,
            "{fallbacks} fallbacks, {withheld} withheld a pass"
        );
        let mut keys = words.clone();
        prims.sort_keys(&mut keys, Order::Descending).unwrap();
        let mut want = words.clone();
        want.sort();
        want.reverse();
        assert!(keys == want, "keys {n}, spins {spins}");
    }
}
