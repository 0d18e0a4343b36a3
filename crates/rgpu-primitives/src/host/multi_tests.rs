//! The multi-device primitives on several cpu devices, both ways (the host versions, and
//! the kernels' launches run by the cpu backend), against plain Rust on the concatenation.

use std::string::ToString;
use std::vec::Vec;

use super::multi::{self, Multi};
use super::tests::random;
use super::*;

fn cpus(p: usize) -> Vec<Device> {
    (0..p)
        .map(|_| Device::open(Backend::Cpu).unwrap())
        .collect()
}

/// Both ways over `devices`.
fn both(devices: &[Device]) -> [Multi; 2] {
    [
        Multi::new(devices).unwrap(),
        Multi::with_kernels(devices).unwrap(),
    ]
}

/// Shard lengths of `total` keys over `p` devices: equal parts, the rest on the last; the
/// first one empty when there are two or more.
fn lengths(total: usize, p: usize) -> Vec<usize> {
    let mut lens: Vec<usize> = (0..p).map(|_| total / p).collect();
    lens[p - 1] += total % p;
    if p > 1 {
        let moved = lens[0];
        lens[0] = 0;
        lens[1] += moved;
    }
    lens
}

fn shard<K: Pod>(devices: &[Device], keys: &[K], lens: &[usize]) -> Vec<Buffer<K>> {
    let mut at = 0;
    devices
        .iter()
        .zip(lens)
        .map(|(d, &n)| {
            at += n;
            d.upload(&keys[at - n..at]).unwrap()
        })
        .collect()
}

fn gathered<K: Pod>(buffers: &[Buffer<K>]) -> Vec<K> {
    buffers.iter().flat_map(|b| b.read().unwrap()).collect()
}

/// Sorts `keys` spread over every `p` in 1..=4 in both orders, the host way and (for the
/// device counts in `kernels`) the kernels' way, and checks the concatenation against
/// `expect(keys, order)`.
fn check_sort<K: SortKey>(
    name: &str,
    keys: &[K],
    kernels: &[usize],
    expect: impl Fn(&[K], Order) -> Vec<K>,
) {
    for p in 1..=4 {
        let devices = cpus(p);
        let lens = lengths(keys.len(), p);
        for (way, mut multi) in both(&devices).into_iter().enumerate() {
            if way == 1 && !kernels.contains(&p) {
                continue;
            }
            for order in [Order::Ascending, Order::Descending] {
                let sorted = multi
                    .sort_keys(shard(&devices, keys, &lens), order)
                    .unwrap();
                assert_eq!(sorted.len(), p);
                for (rank, (buffer, device)) in sorted.iter().zip(&devices).enumerate() {
                    assert!(device.owns(buffer), "{name}: rank {rank}'s result");
                }
                let (got, want) = (gathered(&sorted), expect(keys, order));
                // Bits, so NaNs compare too.
                assert!(
                    bytemuck::cast_slice::<K, u8>(&got) == bytemuck::cast_slice::<K, u8>(&want),
                    "{name} n={} p={p} way={way} {order:?}",
                    keys.len()
                );
            }
        }
    }
}

fn sorted_by<K: Copy, O: Ord>(keys: &[K], order: Order, key: impl Fn(&K) -> O) -> Vec<K> {
    let mut v = keys.to_vec();
    v.sort_by_key(|k| key(k));
    if order == Order::Descending {
        v.reverse();
    }
    v
}

/// Totals around a tile and below; the kernels' way takes the smaller ones (the cpu
/// backend runs every invocation of a group kernel as a coroutine).
const TOTALS: [usize; 7] = [0, 1, 2, 3, 1001, 4097, 30_001];

/// The device counts the kernels' way takes `n` keys of u32 over: a few of each size (one
/// device is the single-device sort, which tests.rs covers; the cpu backend runs every
/// invocation of a group kernel as a coroutine, and each sort launches the radix scan's 256
/// workgroups five times, so each count costs); the other types take 1001 keys over one
/// count each.
fn kernels_take(n: usize) -> &'static [usize] {
    match n {
        1 => &[2],
        2 => &[3],
        3 => &[4],
        1001 => &[2, 4],
        4097 => &[3],
        _ => &[],
    }
}

/// The device counts of the kernels' way for the other types: `n` 1001, over `p`.
fn once(n: usize, p: &'static [usize]) -> &'static [usize] {
    if n == 1001 {
        p
    } else {
        &[]
    }
}

#[test]
fn sorts_over_one_to_four_devices_match_plain_rust() {
    for (t, &n) in TOTALS.iter().enumerate() {
        let seed = t as u64;
        let u: Vec<u32> = random(seed, n).iter().map(|&r| r as u32).collect();
        check_sort("u32", &u, kernels_take(n), |k, o| sorted_by(k, o, |&x| x));
        // Few distinct values: many keys equal to a splitter.
        let few: Vec<u32> = u.iter().map(|x| x % 5).collect();
        check_sort("u32 few", &few, once(n, &[3]), |k, o| {
            sorted_by(k, o, |&x| x)
        });
        let i: Vec<i32> = u.iter().map(|&x| x as i32).collect();
        check_sort("i32", &i, once(n, &[2]), |k, o| sorted_by(k, o, |&x| x));
        let specials = [f32::NAN, -f32::NAN, f32::INFINITY, -0.0, 0.0, 1.0e-45];
        let f: Vec<f32> = random(seed + 100, n)
            .iter()
            .enumerate()
            .map(|(j, &r)| match j % 7 {
                0 => specials[(r % 6) as usize],
                _ => (r as i32) as f32 * 1.0e-3,
            })
            .collect();
        check_sort("f32", &f, once(n, &[4]), |k, o| {
            sorted_by(k, o, |x| {
                KeyMap::new(KeyKind::F32, Order::Ascending).encode(x.to_bits())
            })
        });
        let w: Vec<u64> = random(seed + 200, n)
            .iter()
            .enumerate()
            // Some keys differing in the low word only.
            .map(|(j, &r)| if j % 3 == 0 { r & 0xffff_ffff } else { r })
            .collect();
        check_sort("u64", &w, once(n, &[3]), |k, o| sorted_by(k, o, |&x| x));
    }
}

/// Sorts `keys` over `lens.len()` devices (shard `i` of `lens[i]` keys) in both orders, the
/// host way and (`kernels`) the kernels' way: the concatenation against plain Rust; returns
/// the devices' shares of the ascending sort, each way.
fn sort_spread<K: SortKey + Ord>(
    name: &str,
    keys: &[K],
    lens: &[usize],
    kernels: bool,
) -> Vec<Vec<usize>> {
    let devices = cpus(lens.len());
    let mut shares = Vec::new();
    for (way, mut multi) in both(&devices).into_iter().enumerate() {
        if way == 1 && !kernels {
            continue;
        }
        for order in [Order::Ascending, Order::Descending] {
            let sorted = multi.sort_keys(shard(&devices, keys, lens), order).unwrap();
            let want = sorted_by(keys, order, |&x| x);
            assert!(
                gathered(&sorted) == want,
                "{name} lens={lens:?} way={way} {order:?}"
            );
            if order == Order::Ascending {
                shares.push(sorted.iter().map(Buffer::len).collect());
            }
        }
    }
    shares
}

#[test]
fn equal_keys_spread_evenly_and_ordered_shards_stay_ordered() {
    for n in [5, 4097] {
        let small = n == 5;
        let equal = std::vec![7u32; n];
        check_sort("equal", &equal, if small { &[3] } else { &[] }, |k, o| {
            sorted_by(k, o, |&x| x)
        });
        // Every key equal to the splitters: the cuts split them n / p each (within one).
        for p in 2..=4 {
            for shares in sort_spread("equal", &equal, &lengths(n, p), small || p == 2) {
                let even: Vec<usize> = (0..p).map(|j| (j + 1) * n / p - j * n / p).collect();
                assert_eq!(shares, even, "n={n} p={p}");
            }
        }
        // Shards already in global order, and in reverse global order (each shard's keys
        // belong on another device), and every key on one device.
        let ascending: Vec<u32> = (0..n as u32).collect();
        let descending: Vec<u32> = ascending.iter().rev().copied().collect();
        for p in 2..=4 {
            let kernels = small || p == 3;
            sort_spread("ascending", &ascending, &lengths(n, p), kernels);
            sort_spread("descending", &descending, &lengths(n, p), kernels);
            let mut alone = std::vec![0; p];
            alone[p - 1] = n;
            sort_spread("on the last", &descending, &alone, kernels);
            alone.swap(0, p - 1);
            sort_spread("on the first", &ascending, &alone, kernels);
        }
        check_sort(
            "sorted",
            &ascending,
            if small { &[3] } else { &[] },
            |k, o| sorted_by(k, o, |&x| x),
        );
    }
    // Two values, one of them most of the keys: the cuts split the run of equal keys
    // across devices (u64 keys differing in the low word only).
    let keys: Vec<u64> = (0..3001u64)
        .map(|i| if i % 10 == 0 { 1 << 32 } else { (1 << 32) | 1 })
        .collect();
    for p in 2..=4 {
        for shares in sort_spread("two values", &keys, &lengths(keys.len(), p), p == 3) {
            let most = shares.iter().max().unwrap();
            assert!(*most <= keys.len() / p + 1, "p={p} {shares:?}");
        }
    }
    // Spread keys spread evenly: each device gets about a quarter.
    let devices = cpus(4);
    let keys: Vec<u32> = random(9, 40_000).iter().map(|&r| r as u32).collect();
    let shards = shard(&devices, &keys, &lengths(keys.len(), 4));
    let sorted = Multi::new(&devices)
        .unwrap()
        .sort_keys(shards, Order::Ascending)
        .unwrap();
    for buffer in &sorted {
        assert!((7_000..13_000).contains(&buffer.len()), "{}", buffer.len());
    }
}

#[test]
fn the_free_functions_sort_and_sum() {
    let devices = cpus(2);
    let keys: Vec<f32> = (0..1000)
        .map(|i| ((i * 7919) % 1000) as f32 - 500.0)
        .collect();
    let sorted = multi::sort_keys(
        &devices,
        shard(&devices, &keys, &[400, 600]),
        Order::Ascending,
    )
    .unwrap();
    let got = gathered(&sorted);
    assert!(got.windows(2).all(|w| w[0] <= w[1]) && got.len() == 1000);
    let counts: Vec<u32> = (0..1000).collect();
    let sum = multi::sum(&devices, &shard(&devices, &counts, &[0, 1000])).unwrap();
    assert_eq!(sum, 499_500);
}

#[test]
fn reductions_combine_the_devices_exactly() {
    for p in 1..=4 {
        let devices = cpus(p);
        for &n in &[0usize, 1, 3, 1001, 20_000] {
            let lens = lengths(n, p);
            let kernels = n <= 1001;
            for (way, mut multi) in both(&devices).into_iter().enumerate() {
                if way == 1 && !kernels {
                    continue;
                }
                let u: Vec<u32> = random(n as u64, n).iter().map(|&r| r as u32).collect();
                let shards = shard(&devices, &u, &lens);
                let wrapping = u.iter().fold(0u32, |a, &b| a.wrapping_add(b));
                assert_eq!(multi.sum(&shards).unwrap(), wrapping, "p={p} n={n}");
                assert_eq!(multi.min(&shards).unwrap(), u.iter().copied().min());
                assert_eq!(multi.max(&shards).unwrap(), u.iter().copied().max());
                let i: Vec<i32> = u.iter().map(|&x| x as i32).collect();
                let shards = shard(&devices, &i, &lens);
                assert_eq!(multi.min(&shards).unwrap(), i.iter().copied().min());
                // f32: each non-empty shard's sum (the single-device sum), added in rank
                // order.
                let f: Vec<f32> = u.iter().map(|&x| (x >> 8) as f32 * 0.37 - 1.0e6).collect();
                let shards = shard(&devices, &f, &lens);
                let mut expect: Option<f32> = None;
                let mut at = 0;
                for &len in &lens {
                    if len > 0 {
                        let s = super::sum(&devices[0], &f[at..at + len]).unwrap();
                        expect = Some(expect.map_or(s, |e| e + s));
                    }
                    at += len;
                }
                let got = multi.sum(&shards).unwrap();
                assert_eq!(
                    got.to_bits(),
                    expect.unwrap_or(0.0).to_bits(),
                    "p={p} n={n}"
                );
                let total_max = f.iter().copied().max_by(f32::total_cmp);
                assert_eq!(
                    multi.max(&shards).unwrap().map(f32::to_bits),
                    total_max.map(f32::to_bits)
                );
            }
        }
    }
    // NaN is above +inf, -0.0 below +0.0 (total order), across devices.
    let devices = cpus(2);
    let shards = std::vec![
        devices[0].upload(&[0.0f32, f32::INFINITY]).unwrap(),
        devices[1].upload(&[-0.0f32, f32::NAN]).unwrap(),
    ];
    let mut multi = Multi::new(&devices).unwrap();
    assert!(multi.max(&shards).unwrap().unwrap().is_nan());
    assert_eq!(
        multi.min(&shards).unwrap().unwrap().to_bits(),
        (-0.0f32).to_bits()
    );
}

#[test]
fn bad_input_is_a_clear_error() {
    let no_devices = Multi::new(&[]).err().unwrap().to_string();
    assert!(no_devices.contains("no devices"), "{no_devices}");
    let a = Device::open(Backend::Cpu).unwrap();
    let twice = Multi::new(&[a.clone(), a.clone()])
        .err()
        .unwrap()
        .to_string();
    assert!(
        twice.contains("ranks 0 and 1 are the same device"),
        "{twice}"
    );
    let devices = cpus(2);
    let mut multi = Multi::new(&devices).unwrap();
    let none = multi
        .sort_keys::<u32>(Vec::new(), Order::Ascending)
        .err()
        .unwrap()
        .to_string();
    assert!(none.contains("no shards"), "{none}");
    let one = multi
        .sort_keys(
            std::vec![devices[0].upload(&[1u32]).unwrap()],
            Order::Ascending,
        )
        .err()
        .unwrap()
        .to_string();
    assert!(one.contains("1 shards for 2 devices"), "{one}");
    let same = std::vec![
        devices[0].upload(&[1u32]).unwrap(),
        devices[0].upload(&[2u32]).unwrap()
    ];
    let e = multi.sum(&same).err().unwrap().to_string();
    assert!(e.contains("shard 1 is a buffer of rank 0's device"), "{e}");
    let outside = std::vec![
        devices[0].upload(&[1u32]).unwrap(),
        a.upload(&[2u32]).unwrap()
    ];
    let e = multi
        .sort_keys(outside, Order::Ascending)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("a device outside this Multi's"), "{e}");
}
