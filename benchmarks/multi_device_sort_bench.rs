//! Benchmark of rgpu-primitives' multi-device sort (`rgpu_primitives::multi`): for each
//! key count and device count, the wall time of `Multi::sort_keys` over the keys spread
//! evenly across the first `p` devices of the backend (uploaded before each run, not
//! timed; the time ends when every device is done), beside the single-device sort of the
//! same keys on device 0 (`Primitives::sort_keys`, also wall time with a sync). Every
//! result is checked against a host sort of the keys (the first run's).
//!
//! Built as an example of a workspace whose kernel crate depends on rgpu-primitives
//! (`EXAMPLE=multi_device_sort_bench benchmarks/primitives_pack.sh` makes one). Environment:
//!   BENCH_BACKENDS=cuda      BENCH_SIZES=24,26 (powers of two)   BENCH_DEVICES=1,2,4
//!   BENCH_OPS=sort_u32,sort_f32,sort_u64                        BENCH_RUNS=10
//!   BENCH_OPENINGS=N: N openings of the backend's first device instead of its devices
//!   (the multi-device path on one GPU, or on lavapipe, for a test; not a measurement)
//! Lines: `devices backend=B count=N engine=E` (what moves the keys: NCCL or host memory),
//! then per (op, size): `bench backend=B op=single_O n=2^P devices=1 ms=MEDIAN min=MIN
//! max=MAX spread=PCT` for the single-device sort and `bench backend=B op=multi_O n=2^P
//! devices=p ms=... spread=PCT speedup=S largest=L` for the multi-device one, where
//! spread is (max - min) / median, speedup the single sort's median over this one's, and
//! largest the largest device's share over an even share (1.00: perfectly balanced).
//! `check ... ok` or `check ... FAILED` after each (op, size, devices).

use std::time::Instant;

use rayon::prelude::*;
use rgpu::{Backend, Buffer, Device, Error};
use rgpu_primitives::multi::Multi;
use rgpu_primitives::{KeyKind, KeyMap, Order, Primitives, SortKey};

fn var(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_string())
}

fn list(name: &str, default: &str) -> Vec<String> {
    var(name, default)
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

fn random(seed: u64, n: usize) -> Vec<u64> {
    (0..n as u64)
        .into_par_iter()
        .map(|i| {
            let mut z = seed.wrapping_add((i + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        })
        .collect()
}

/// Median, min, max of `ms`.
fn stats(mut ms: Vec<f64>) -> (f64, f64, f64) {
    ms.sort_by(f64::total_cmp);
    (ms[ms.len() / 2], ms[0], ms[ms.len() - 1])
}

fn line(backend: &str, op: &str, p: u32, devices: usize, ms: &[f64]) -> (f64, String) {
    let (median, min, max) = stats(ms.to_vec());
    let spread = (max - min) / median * 100.0;
    (
        median,
        format!(
            "bench backend={backend} op={op} n=2^{p} devices={devices} ms={median:.3} \
             min={min:.3} max={max:.3} spread={spread:.1}%"
        ),
    )
}

/// The keys of an op: `n` random ones (floats: finite, both signs).
trait Keys: SortKey + Send + Sync {
    fn make(raw: &[u64]) -> Vec<Self>;
    /// The key's place in ascending order, for the host sort.
    fn rank(&self) -> u64;
}

impl Keys for u32 {
    fn make(raw: &[u64]) -> Vec<Self> {
        raw.par_iter().map(|&r| r as u32).collect()
    }
    fn rank(&self) -> u64 {
        *self as u64
    }
}

impl Keys for f32 {
    fn make(raw: &[u64]) -> Vec<Self> {
        raw.par_iter()
            .map(|&r| (r as i32) as f32 * 1.0e-3)
            .collect()
    }
    fn rank(&self) -> u64 {
        KeyMap::new(KeyKind::F32, Order::Ascending).encode(self.to_bits()) as u64
    }
}

impl Keys for u64 {
    fn make(raw: &[u64]) -> Vec<Self> {
        raw.to_vec()
    }
    fn rank(&self) -> u64 {
        *self
    }
}

fn sync_all(devices: &[Device]) -> Result<(), Error> {
    devices.iter().try_for_each(Device::sync)
}

fn upload<K: Keys>(devices: &[Device], keys: &[K]) -> Result<Vec<Buffer<K>>, Error> {
    let p = devices.len();
    let part = keys.len().div_ceil(p);
    let shards = devices
        .iter()
        .zip(keys.chunks(part.max(1)).chain(std::iter::repeat(&[][..])))
        .map(|(d, chunk)| d.upload(chunk))
        .collect::<Result<Vec<_>, _>>()?;
    sync_all(devices)?;
    Ok(shards)
}

fn check<K: Keys>(what: &str, got: &[K], want: &[K]) {
    let same = got.len() == want.len()
        && got
            .par_iter()
            .zip(want.par_iter())
            .all(|(a, b)| a.rank() == b.rank()); // bits: the rank is one-to-one
    println!("check {what} {}", if same { "ok" } else { "FAILED" });
}

fn bench<K: Keys>(
    backend: &str,
    op: &str,
    devices: &[Device],
    counts: &[usize],
    p: u32,
    runs: usize,
) -> Result<(), Error> {
    let n = 1usize << p;
    let keys = K::make(&random(p as u64, n));
    let mut want = keys.clone();
    want.par_sort_unstable_by_key(K::rank);
    // The single-device sort on device 0.
    let mut single = Primitives::new(&devices[0]);
    let mut ms = Vec::with_capacity(runs);
    for run in 0..=runs {
        let mut buffer = devices[0].upload(&keys)?;
        devices[0].sync()?;
        let start = Instant::now();
        single.sort_keys(&mut buffer, Order::Ascending)?;
        devices[0].sync()?;
        if run > 0 {
            ms.push(start.elapsed().as_secs_f64() * 1e3); // run 0 warms up
        } else {
            check(
                &format!("backend={backend} op=single_{op} n=2^{p}"),
                &buffer.read()?,
                &want,
            );
        }
    }
    drop(single);
    let (single_ms, text) = line(backend, &format!("single_{op}"), p, 1, &ms);
    println!("{text}");
    for &count in counts {
        if count > devices.len() {
            println!(
                "skip backend={backend} devices={count}: {} present",
                devices.len()
            );
            continue;
        }
        let devices = &devices[..count];
        let mut multi = Multi::new(devices)?;
        let mut ms = Vec::with_capacity(runs);
        let mut largest = 0;
        for run in 0..=runs {
            let shards = upload(devices, &keys)?;
            let start = Instant::now();
            let sorted = multi.sort_keys(shards, Order::Ascending)?;
            sync_all(devices)?;
            let elapsed = start.elapsed().as_secs_f64() * 1e3;
            largest = sorted.iter().map(Buffer::len).max().unwrap_or(0);
            if run > 0 {
                ms.push(elapsed);
            } else {
                let mut got = Vec::with_capacity(n);
                for buffer in &sorted {
                    got.extend(buffer.read()?);
                }
                check(
                    &format!("backend={backend} op=multi_{op} n=2^{p} devices={count}"),
                    &got,
                    &want,
                );
            }
        }
        let (median, text) = line(backend, &format!("multi_{op}"), p, count, &ms);
        let even = n as f64 / count as f64;
        println!(
            "{text} speedup={:.2} largest={:.2}",
            single_ms / median,
            largest as f64 / even
        );
    }
    Ok(())
}

fn main() {
    let backends = list("BENCH_BACKENDS", "cuda");
    let sizes: Vec<u32> = list("BENCH_SIZES", "24,26")
        .iter()
        .map(|s| s.parse().expect("BENCH_SIZES: powers of two"))
        .collect();
    let counts: Vec<usize> = list("BENCH_DEVICES", "1,2,4")
        .iter()
        .map(|s| s.parse().expect("BENCH_DEVICES: device counts"))
        .collect();
    let ops = list("BENCH_OPS", "sort_u32,sort_f32");
    let runs: usize = var("BENCH_RUNS", "10").parse().expect("BENCH_RUNS");
    for name in &backends {
        let backend = Backend::parse(name).expect("BENCH_BACKENDS: backend names");
        let devices = match Device::open_all(backend) {
            Ok(d) if !d.is_empty() => d,
            Ok(_) => {
                println!("skip backend={name}: no devices");
                continue;
            }
            Err(e) => {
                println!("skip backend={name}: {e}");
                continue;
            }
        };
        let devices = match var("BENCH_OPENINGS", "").parse::<usize>() {
            Ok(n) => match (0..n)
                .map(|_| Device::open_on(backend, devices[0].info().index))
                .collect::<Result<Vec<_>, _>>()
            {
                Ok(openings) => openings,
                Err(e) => {
                    println!("skip backend={name}: {e}");
                    continue;
                }
            },
            Err(_) => devices,
        };
        for (i, d) in devices.iter().enumerate() {
            println!("device backend={name} rank={i}: {}", d.description());
        }
        match Multi::new(&devices) {
            Ok(multi) => println!(
                "devices backend={name} count={} engine={}",
                devices.len(),
                multi.collective().engine()
            ),
            Err(e) => {
                println!("error backend={name}: {e}");
                continue;
            }
        }
        for op in &ops {
            for &p in &sizes {
                let result = match op.as_str() {
                    "sort_u32" => bench::<u32>(name, op, &devices, &counts, p, runs),
                    "sort_f32" => bench::<f32>(name, op, &devices, &counts, p, runs),
                    "sort_u64" => bench::<u64>(name, op, &devices, &counts, p, runs),
                    _ => {
                        println!("error op={op}: not one of sort_u32, sort_f32, sort_u64");
                        continue;
                    }
                };
                if let Err(e) = result {
                    println!("error backend={name} op={op} n=2^{p}: {e}");
                }
            }
        }
    }
}
