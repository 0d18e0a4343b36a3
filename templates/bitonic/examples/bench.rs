//! Benchmark: the sort's device time on every backend built in (the schedule's launches,
//! timed by the device: CUDA events, Vulkan timestamps), and the cpu backend against
//! `sort_unstable` and rayon's `par_sort_unstable`. Run: `rgpu build --backend cuda` (and/or
//! wgpu, ash), then `cargo run --release --example bench --features cuda`. `BENCH_BACKENDS=
//! cuda,ash` picks backends; `BENCH_SIZES=16,20,24,26` the sizes (powers of two).

use std::time::Instant;

use host::rng::SplitMix64;
use host::sorter::launch_all;
use kernel::schedule::Passes;
use kernel::{KeyKind, SortOrder};
use rayon::slice::ParallelSliceMut;
use rgpu::{Backend, Device};

const RUNS: usize = 10;

fn median(mut times: Vec<f64>) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn list(var: &str, default: &str) -> Vec<String> {
    std::env::var(var)
        .unwrap_or_else(|_| default.into())
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

fn gpu_rows(device: &Device, n: usize) -> Result<(), rgpu::Error> {
    let input = SplitMix64::new(n as u64).bits(n);
    let mut keys = device.upload(&input)?;
    let mut times = Vec::new();
    for run in 0..=RUNS {
        keys.write(&input)?;
        let ((), ms) = device.timed(|| {
            launch_all(
                device,
                &mut keys,
                n as u32,
                KeyKind::U32,
                SortOrder::Ascending,
            )
        })?;
        if run > 0 {
            times.extend(ms);
        }
    }
    let mut expected = input.clone();
    expected.sort_unstable();
    assert!(
        keys.read()? == expected,
        "{} result differs at n={n}",
        device.backend()
    );
    println!(
        "{} n=2^{} launches={} sort_ms={:.3}",
        device.backend(),
        n.trailing_zeros(),
        Passes::new(n as u32).count(),
        if times.is_empty() {
            f64::NAN
        } else {
            median(times)
        }
    );
    Ok(())
}

fn cpu_rows(n: usize) {
    let input = SplitMix64::new(n as u64).bits(n);
    let mut sorter = host::Sorter::new(Device::open(Backend::Cpu).unwrap());
    let (mut ours, mut std_sort, mut par_sort) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..3 {
        let mut keys = input.clone();
        let t = Instant::now();
        sorter
            .sort_bits(&mut keys, KeyKind::U32, SortOrder::Ascending)
            .unwrap();
        ours.push(t.elapsed().as_secs_f64() * 1e3);
        let mut keys = input.clone();
        let t = Instant::now();
        keys.sort_unstable();
        std_sort.push(t.elapsed().as_secs_f64() * 1e3);
        let mut keys = input.clone();
        let t = Instant::now();
        keys.par_sort_unstable();
        par_sort.push(t.elapsed().as_secs_f64() * 1e3);
    }
    println!(
        "cpu n=2^{} backend_ms={:.3} sort_unstable_ms={:.3} par_sort_unstable_ms={:.3} [{}]",
        n.trailing_zeros(),
        median(ours),
        median(std_sort),
        median(par_sort),
        sorter.device().description()
    );
}

fn main() {
    let sizes: Vec<usize> = list("BENCH_SIZES", "16,20,24,26")
        .iter()
        .map(|p| 1usize << p.parse::<u32>().expect("BENCH_SIZES: powers of two"))
        .collect();
    for name in list("BENCH_BACKENDS", "cuda,wgpu,ash,cpu") {
        let Some(backend) = Backend::parse(&name) else {
            panic!("BENCH_BACKENDS: `{name}` is not a backend");
        };
        if backend == Backend::Cpu {
            sizes.iter().for_each(|&n| cpu_rows(n));
            continue;
        }
        match Device::open(backend) {
            Ok(device) => {
                println!("device: {}", device.description());
                for &n in &sizes {
                    gpu_rows(&device, n).expect("GPU benchmark");
                }
            }
            Err(why) => println!("{backend} rows skipped: {why}"),
        }
    }
}
