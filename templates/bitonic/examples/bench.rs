//! Benchmark: each sort's device time on every backend built in (its launches, timed by
//! the device: CUDA events, Vulkan timestamps), and the cpu backend's sorts against
//! `sort_unstable` and rayon's `par_sort_unstable`. Run: `rgpu build --backend cuda` (and/or
//! wgpu, ash), then `cargo run --release --example bench --features cuda`. `BENCH_BACKENDS=
//! cuda,ash` picks backends; `BENCH_SIZES=16,20,24,26` the sizes (powers of two);
//! `BENCH_ALGORITHMS=bitonic,radix` the sorts. `BENCH_PHASES=1` adds, for the radix sort,
//! each kernel's share: every launch timed by itself, summed over a sort's passes.
//! `BENCH_STATS=1` also prints, after each backend's rows, its subgroup sizes and compute
//! units and the driver's statistics (registers, spills, shared memory) of every kernel it
//! launched.

use std::time::Instant;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use host::rng::SplitMix64;
use host::sorter::{launch_all, radix_sort};
use host::Algorithm;
use kernel::schedule::Passes;
use kernel::{KeyKind, SortOrder};
use rayon::slice::ParallelSliceMut;
use rgpu::{Backend, Device};
use rgpu_primitives::Primitives;

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

fn gpu_rows(device: &Device, algorithm: Algorithm, n: usize) -> Result<(), rgpu::Error> {
    let input = SplitMix64::new(n as u64).bits(n);
    let mut keys = device.upload(&input)?;
    let mut radix = Primitives::new(device);
    // The radix sort's launches in one sort, counted as they run: the backend's plan
    // (rgpu-primitives' `sort_plan`: Onesweep or count-then-scatter) and what the embedded
    // kernels allow decide them.
    let counted = Arc::new(Mutex::new(0usize));
    let counter = Arc::clone(&counted);
    radix.set_launch_hook(Some(Box::new(move |_, launch| {
        launch()?;
        *counter.lock().unwrap() += 1;
        Ok(())
    })));
    let mut times = Vec::new();
    for run in 0..=RUNS {
        keys.write(&input)?;
        *counted.lock().unwrap() = 0;
        let ((), ms) = device.timed(|| match algorithm {
            Algorithm::Radix => {
                radix_sort(&mut radix, &mut keys, KeyKind::U32, SortOrder::Ascending)
            }
            Algorithm::Bitonic => launch_all(
                device,
                &mut keys,
                n as u32,
                KeyKind::U32,
                SortOrder::Ascending,
            ),
        })?;
        if run > 0 {
            times.extend(ms);
        }
    }
    let mut expected = input.clone();
    expected.sort_unstable();
    assert!(
        keys.read()? == expected,
        "{} {algorithm} result differs at n={n}",
        device.backend()
    );
    let launches = match algorithm {
        Algorithm::Radix => *counted.lock().unwrap(),
        Algorithm::Bitonic => Passes::new(n as u32).count(),
    };
    // The median, and the spread: the fastest and the slowest run.
    let min = times.iter().copied().fold(f64::NAN, f64::min);
    let max = times.iter().copied().fold(f64::NAN, f64::max);
    println!(
        "{} {algorithm} n=2^{} launches={launches} sort_ms={:.3} min={min:.3} max={max:.3}",
        device.backend(),
        n.trailing_zeros(),
        if times.is_empty() {
            f64::NAN
        } else {
            median(times)
        }
    );
    Ok(())
}

/// The radix sort's device time per kernel (`BENCH_PHASES=1`): each launch timed by itself
/// (a wait after each, through rgpu-primitives' launch hook), summed over the sort's passes,
/// the median of `RUNS` sorts after a warm-up. Their sum is below `sort_ms`: it leaves out
/// the gaps between launches.
fn radix_phase_row(device: &Device, n: usize) -> Result<(), rgpu::Error> {
    let input = SplitMix64::new(n as u64).bits(n);
    let mut keys = device.upload(&input)?;
    let mut radix = Primitives::new(device);
    // Each kernel's time in the current sort, in order of first launch.
    let sums: Arc<Mutex<BTreeMap<(usize, &'static str), f64>>> = Arc::default();
    let (timer, log) = (device.clone(), Arc::clone(&sums));
    radix.set_launch_hook(Some(Box::new(move |kernel, launch| {
        let ((), ms) = timer.timed(launch)?;
        let mut log = log.lock().unwrap();
        let order = log
            .keys()
            .find(|k| k.1 == kernel)
            .map_or(log.len(), |k| k.0);
        *log.entry((order, kernel)).or_default() += ms.unwrap_or(f64::NAN);
        Ok(())
    })));
    let mut times: BTreeMap<(usize, &'static str), Vec<f64>> = BTreeMap::new();
    for run in 0..=RUNS {
        keys.write(&input)?;
        sums.lock().unwrap().clear();
        radix_sort(&mut radix, &mut keys, KeyKind::U32, SortOrder::Ascending)?;
        if run > 0 {
            for (kernel, ms) in sums.lock().unwrap().iter() {
                times.entry(*kernel).or_default().push(*ms);
            }
        }
    }
    let shares: Vec<String> = times
        .into_iter()
        .map(|((_, name), t)| format!("{name}_ms={:.3}", median(t)))
        .collect();
    println!(
        "{} radix phases n=2^{} {}",
        device.backend(),
        n.trailing_zeros(),
        shares.join(" ")
    );
    Ok(())
}

/// `BENCH_STATS=1`: the device's facts and its kernels' statistics, a line each.
fn print_stats(device: &Device) {
    for line in host::stats::text_lines(device) {
        println!("{line}");
    }
}

fn time_ms(f: impl FnOnce()) -> f64 {
    let t = Instant::now();
    f();
    t.elapsed().as_secs_f64() * 1e3
}

fn cpu_rows(algorithms: &[Algorithm], n: usize) {
    let input = SplitMix64::new(n as u64).bits(n);
    let device = Device::open(Backend::Cpu).unwrap();
    let mut sorters: Vec<host::Sorter> = algorithms
        .iter()
        .map(|&a| host::Sorter::with_algorithm(device.clone(), a))
        .collect();
    let mut ours = vec![Vec::new(); sorters.len()];
    let (mut std_sort, mut par_sort) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        for (sorter, times) in sorters.iter_mut().zip(&mut ours) {
            let mut keys = input.clone();
            times.push(time_ms(|| {
                sorter
                    .sort_bits(&mut keys, KeyKind::U32, SortOrder::Ascending)
                    .unwrap()
            }));
        }
        let mut keys = input.clone();
        std_sort.push(time_ms(|| keys.sort_unstable()));
        let mut keys = input.clone();
        par_sort.push(time_ms(|| keys.par_sort_unstable()));
    }
    let ours: Vec<String> = algorithms
        .iter()
        .zip(ours)
        .map(|(a, times)| format!("{a}_ms={:.3}", median(times)))
        .collect();
    println!(
        "cpu n=2^{} {} sort_unstable_ms={:.3} par_sort_unstable_ms={:.3} [{}]",
        n.trailing_zeros(),
        ours.join(" "),
        median(std_sort),
        median(par_sort),
        device.description()
    );
}

fn main() {
    let sizes: Vec<usize> = list("BENCH_SIZES", "16,20,24,26")
        .iter()
        .map(|p| 1usize << p.parse::<u32>().expect("BENCH_SIZES: powers of two"))
        .collect();
    let algorithms: Vec<Algorithm> = list("BENCH_ALGORITHMS", "bitonic,radix")
        .iter()
        .map(|name| {
            *Algorithm::ALL
                .iter()
                .find(|a| a.name() == name)
                .unwrap_or_else(|| panic!("BENCH_ALGORITHMS: `{name}` is not bitonic or radix"))
        })
        .collect();
    let phases = std::env::var("BENCH_PHASES").is_ok_and(|v| v == "1");
    let stats = std::env::var("BENCH_STATS").is_ok_and(|v| v == "1");
    for name in list("BENCH_BACKENDS", "cuda,wgpu,ash,cpu") {
        let Some(backend) = Backend::parse(&name) else {
            panic!("BENCH_BACKENDS: `{name}` is not a backend");
        };
        if backend == Backend::Cpu {
            sizes.iter().for_each(|&n| cpu_rows(&algorithms, n));
            if stats {
                print_stats(&Device::open(Backend::Cpu).unwrap());
            }
            continue;
        }
        match Device::open(backend) {
            Ok(device) => {
                println!("device: {}", device.description());
                for &algorithm in &algorithms {
                    for &n in &sizes {
                        gpu_rows(&device, algorithm, n).expect("GPU benchmark");
                        if algorithm == Algorithm::Radix && phases {
                            radix_phase_row(&device, n).expect("GPU benchmark");
                        }
                    }
                }
                // Asked after the timed runs, so it changes nothing they measure.
                if stats {
                    print_stats(&device);
                }
            }
            Err(why) => println!("{backend} rows skipped: {why}"),
        }
    }
}
