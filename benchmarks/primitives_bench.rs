//! Benchmark of rgpu-primitives: each primitive's device time on every backend built in
//! (data already on the device, scratch kept between runs: `Primitives`), and on the cpu
//! backend beside rayon's own (`par_sort_unstable`, `par_sort_by_key`, a two-pass rayon
//! scan, `par_iter().sum()`).
//!
//! Built as an example of a workspace whose kernel crate depends on rgpu-primitives
//! (benchmarks/primitives_pack.sh makes one). Environment:
//!   BENCH_BACKENDS=cuda,ash,wgpu,cpu   BENCH_SIZES=16,18,20,22,24,26 (powers of two)
//!   BENCH_OPS=sort_u32,...              BENCH_RUNS=10
//!   (the sorts: `sort_u32` etc. is the backend's plan, `sort_plan`: count-then-scatter;
//!   `sort_u32_onesweep` etc. the Onesweep sort, in the same binary)
//!   BENCH_PAUSE_MS=0: a pause after each (op, size), once its buffers are dropped
//!   BENCH_KERNELS=1: each kernel's device time too (every launch inside its own
//!   `Device::timed`, through `Primitives::set_launch_hook`: a sync per launch, so the
//!   `bench` lines of such a run are not the primitives' own times)
//! One line per (backend, op, size): `bench backend=B op=O n=2^P ms=MEDIAN min=MIN
//! max=MAX gbs=G`, where G counts each element once (n * element bytes / time; `copy_u32`,
//! the bandwidth reference of the reductions, counts each element's read and write: n * 8
//! bytes / time, so a reduction's G over copy's is its fraction of a copy's bandwidth); with
//! BENCH_KERNELS, one line per kernel after it: `kernel backend=B op=O n=2^P name=K
//! ms=MEAN_PER_RUN launches=PER_RUN`.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use rayon::prelude::*;
use rgpu::{Backend, Buffer, Device};
use rgpu_primitives::{Order, Primitives, Reduction, ScanAlgorithm, SortAlgorithm, SortPlan};

const OPS: [&str; 18] = [
    "sort_u32",
    "sort_f32",
    "sort_u64",
    "sort_pairs_u32",
    "sort_u32_onesweep",
    "sort_f32_onesweep",
    "sort_u64_onesweep",
    "sort_pairs_u32_onesweep",
    "exclusive_scan_u32",
    "inclusive_scan_u32",
    "exclusive_scan_u32_reduce_then_scan",
    "inclusive_scan_u32_reduce_then_scan",
    "reduce_sum_u32",
    "reduce_sum_f32",
    "reduce_max_f32",
    "reduce_min_i32",
    "histogram_256",
    "copy_u32",
];

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

struct Stats {
    median: f64,
    min: f64,
    max: f64,
}

fn stats(mut ms: Vec<f64>) -> Stats {
    ms.sort_by(f64::total_cmp);
    Stats {
        median: ms[ms.len() / 2],
        min: ms[0],
        max: ms[ms.len() - 1],
    }
}

fn report(backend: &str, op: &str, p: u32, bytes: usize, s: &Stats) {
    let gbs = bytes as f64 / (s.median * 1e-3) / 1e9;
    println!(
        "bench backend={backend} op={op} n=2^{p} ms={:.3} min={:.3} max={:.3} gbs={gbs:.1}",
        s.median, s.min, s.max
    );
}

/// Each kernel's launches and device time since the last `start`, when BENCH_KERNELS is set.
#[derive(Clone, Default)]
struct Kernels(Arc<Mutex<BTreeMap<&'static str, (u32, f64)>>>);

impl Kernels {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<&'static str, (u32, f64)>> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Times every launch of `prims` from now on.
    fn hook(&self, device: &Device, prims: &mut Primitives) {
        let (kernels, device) = (self.clone(), device.clone());
        prims.set_launch_hook(Some(Box::new(move |name, launch| {
            let ((), ms) = device.timed(launch)?;
            let mut all = kernels.lock();
            let entry = all.entry(name).or_insert((0, 0.0));
            entry.0 += 1;
            entry.1 += ms.unwrap_or(f64::NAN);
            Ok(())
        })));
    }

    /// Forgets what was recorded (after the warm-up).
    fn start(&self) {
        self.lock().clear();
    }

    fn report(&self, backend: &str, op: &str, p: u32, runs: usize) {
        for (name, (launches, ms)) in self.lock().iter() {
            println!(
                "kernel backend={backend} op={op} n=2^{p} name={name} ms={:.4} launches={}",
                ms / runs as f64,
                *launches as usize / runs
            );
        }
    }
}

/// The device the runs are timed on, and the per-kernel record when BENCH_KERNELS is set.
struct Clock<'a> {
    device: &'a Device,
    kernels: Option<Kernels>,
}

impl Clock<'_> {
    /// Clears the per-kernel record after a warm-up run.
    fn warmed_up(&self) {
        if let Some(kernels) = &self.kernels {
            kernels.start();
        }
    }
}

/// `runs` timed runs of `work` on `state` after one warm-up; `reset` before each (not
/// timed).
fn time_device<S>(
    clock: &Clock,
    runs: usize,
    state: &mut S,
    mut reset: impl FnMut(&mut S) -> Result<(), rgpu::Error>,
    mut work: impl FnMut(&mut S) -> Result<(), rgpu::Error>,
) -> Result<Stats, rgpu::Error> {
    let mut times = Vec::new();
    for run in 0..=runs {
        let device = clock.device;
        reset(state)?;
        device.sync()?;
        // With BENCH_KERNELS each launch is timed by the hook (timings do not nest).
        let ms = if clock.kernels.is_some() {
            work(state)?;
            device.sync()?;
            None
        } else {
            device.timed(|| work(state))?.1
        };
        if run > 0 {
            times.push(ms.unwrap_or(f64::NAN));
        } else {
            clock.warmed_up();
        }
    }
    Ok(stats(times))
}

/// `runs` runs of `work` after one warm-up, each from a synced device to its return, on
/// the host's clock.
fn time_call(
    clock: &Clock,
    runs: usize,
    mut work: impl FnMut() -> Result<(), rgpu::Error>,
) -> Result<Stats, rgpu::Error> {
    let mut times = Vec::new();
    for run in 0..=runs {
        clock.device.sync()?;
        let start = Instant::now();
        work()?;
        if run > 0 {
            times.push(start.elapsed().as_secs_f64() * 1e3);
        } else {
            clock.warmed_up();
        }
    }
    Ok(stats(times))
}

fn time_host<S>(
    runs: usize,
    state: &mut S,
    mut reset: impl FnMut(&mut S),
    mut work: impl FnMut(&mut S),
) -> Stats {
    let mut times = Vec::new();
    for run in 0..=runs {
        reset(state);
        let start = Instant::now();
        work(state);
        if run > 0 {
            times.push(start.elapsed().as_secs_f64() * 1e3);
        }
    }
    stats(times)
}

/// The sorted keys differ from plain Rust's: an error naming the op.
fn check_sorted<T: PartialEq>(
    op: &str,
    n: usize,
    got: &[T],
    want: &[T],
) -> Result<(), rgpu::Error> {
    if got == want {
        return Ok(());
    }
    Err(rgpu::Error::Argument {
        kernel: "rgpu_primitives sort",
        param: "keys",
        reason: format!("{op} of {n} keys differs from plain Rust's sort"),
    })
}

/// One primitive on device buffers: its statistics and bytes per element. A sort op with
/// `_onesweep` takes that algorithm, the others the backend's plan; the last
/// run's sorted keys are checked against plain Rust.
fn bench_op(
    clock: &Clock,
    prims: &mut Primitives,
    op: &str,
    n: usize,
    runs: usize,
) -> Result<(Stats, usize), rgpu::Error> {
    let (base, onesweep) = match op.strip_suffix("_onesweep") {
        Some(base) => (base, true),
        None => (op, false),
    };
    let plan = onesweep.then_some(SortPlan::new(SortAlgorithm::Onesweep));
    prims.set_sort_plan(plan);
    let result = bench_one(clock, prims, base, op, n, runs);
    prims.set_sort_plan(None);
    result
}

fn bench_one(
    clock: &Clock,
    prims: &mut Primitives,
    op: &str,
    name: &str,
    n: usize,
    runs: usize,
) -> Result<(Stats, usize), rgpu::Error> {
    let device = clock.device;
    let words: Vec<u32> = random(1, n).iter().map(|r| *r as u32).collect();
    let floats: Vec<f32> = words.iter().map(|&w| f32::from_bits(w)).collect();
    let finite: Vec<f32> = words
        .iter()
        .map(|&w| (w % 2001) as f32 / 7.0 - 100.0)
        .collect();
    let wide = random(2, n);
    Ok(match op {
        "sort_u32" => {
            let mut keys: Buffer<u32> = device.upload(&words)?;
            let s = time_device(
                clock,
                runs,
                &mut keys,
                |keys| keys.write(&words),
                |keys| prims.sort_keys(keys, Order::Ascending),
            )?;
            let mut want = words.clone();
            want.sort_unstable();
            check_sorted(name, n, &keys.read()?, &want)?;
            (s, 4)
        }
        "sort_f32" => {
            let mut keys: Buffer<f32> = device.upload(&floats)?;
            let s = time_device(
                clock,
                runs,
                &mut keys,
                |keys| keys.write(&floats),
                |keys| prims.sort_keys(keys, Order::Ascending),
            )?;
            let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
            let mut want = floats.clone();
            want.sort_unstable_by(f32::total_cmp);
            check_sorted(name, n, &bits(&keys.read()?), &bits(&want))?;
            (s, 4)
        }
        "sort_u64" => {
            let mut keys: Buffer<u64> = device.upload(&wide)?;
            let s = time_device(
                clock,
                runs,
                &mut keys,
                |keys| keys.write(&wide),
                |keys| prims.sort_keys(keys, Order::Ascending),
            )?;
            let mut want = wide.clone();
            want.sort_unstable();
            check_sorted(name, n, &keys.read()?, &want)?;
            (s, 8)
        }
        "sort_pairs_u32" => {
            let values: Vec<u32> = (0..n as u32).collect();
            let keys: Buffer<u32> = device.upload(&words)?;
            let vals: Buffer<u32> = device.upload(&values)?;
            let mut pair = (keys, vals);
            let s = time_device(
                clock,
                runs,
                &mut pair,
                |(keys, vals)| {
                    keys.write(&words)?;
                    vals.write(&values)
                },
                |(keys, vals)| prims.sort_pairs(keys, vals, Order::Ascending),
            )?;
            // Stable: equal keys keep their indices' order.
            let mut want: Vec<(u32, u32)> = words.iter().copied().zip(values).collect();
            want.sort_unstable();
            let got: Vec<(u32, u32)> = pair.0.read()?.into_iter().zip(pair.1.read()?).collect();
            check_sorted(name, n, &got, &want)?;
            (s, 8)
        }
        // The scans: the backend's own choice (the single pass), or `_reduce_then_scan`
        // (the three-launch scan, kept for this comparison); the last run's output is
        // checked against plain Rust.
        "exclusive_scan_u32"
        | "inclusive_scan_u32"
        | "exclusive_scan_u32_reduce_then_scan"
        | "inclusive_scan_u32_reduce_then_scan" => {
            let input: Buffer<u32> = device.upload(&words)?;
            let mut output: Buffer<u32> = device.zeros(n)?;
            let inclusive = op.starts_with("inclusive");
            let old = op.ends_with("_reduce_then_scan");
            prims.set_scan_algorithm(old.then_some(ScanAlgorithm::ReduceThenScan));
            let s = time_device(
                clock,
                runs,
                &mut output,
                |_| Ok(()),
                |output| {
                    if inclusive {
                        prims.inclusive_scan(&input, output)
                    } else {
                        prims.exclusive_scan(&input, output)
                    }
                },
            );
            prims.set_scan_algorithm(None);
            let s = s?;
            let mut running = 0u32;
            let want: Vec<u32> = words
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
                .collect();
            if output.read()? != want {
                return Err(rgpu::Error::Argument {
                    kernel: "rgpu_primitives scan",
                    param: "output",
                    reason: format!("{op} of {n} words differs from plain Rust's prefix sums"),
                });
            }
            (s, 4)
        }
        // A reduction reads its one result back: timed on the host's clock, from a synced
        // device to the result in host memory (launch overhead and the read included).
        "reduce_sum_u32" => {
            let input: Buffer<u32> = device.upload(&words)?;
            (time_call(clock, runs, || prims.sum(&input).map(drop))?, 4)
        }
        "reduce_sum_f32" => {
            let input: Buffer<f32> = device.upload(&finite)?;
            (time_call(clock, runs, || prims.sum(&input).map(drop))?, 4)
        }
        "reduce_max_f32" => {
            let input: Buffer<f32> = device.upload(&floats)?;
            let max = || prims.reduce(&input, Reduction::Max).map(drop);
            (time_call(clock, runs, max)?, 4)
        }
        "reduce_min_i32" => {
            let ints: Vec<i32> = words.iter().map(|&w| w as i32).collect();
            let input: Buffer<i32> = device.upload(&ints)?;
            let min = || prims.reduce(&input, Reduction::Min).map(drop);
            (time_call(clock, runs, min)?, 4)
        }
        // The bandwidth reference: rgpu-primitives' plain copy kernel (one word an
        // invocation), device time; bytes read and written both count. Checked.
        "copy_u32" => {
            let input: Buffer<u32> = device.upload(&words)?;
            let mut output: Buffer<u32> = device.zeros(n)?;
            let s = time_device(
                clock,
                runs,
                &mut output,
                |_| Ok(()),
                |output| rgpu_primitives::words::prim_copy(device, n as u32, &input, output),
            )?;
            if output.read()? != words {
                return Err(rgpu::Error::Argument {
                    kernel: "prim_copy",
                    param: "dst",
                    reason: format!("the copy of {n} words differs from its source"),
                });
            }
            (s, 8)
        }
        "histogram_256" => {
            let values: Vec<u32> = words.iter().map(|w| w & 0xff).collect();
            let input: Buffer<u32> = device.upload(&values)?;
            let mut counts: Buffer<u32> = device.zeros(256)?;
            let s = time_device(
                clock,
                runs,
                &mut counts,
                |_| Ok(()),
                |counts| prims.histogram(&input, counts),
            )?;
            (s, 4)
        }
        other => panic!("unknown op {other}: one of {OPS:?}"),
    })
}

/// rayon's own on the cpu: what the cpu backend's primitives are compared with.
fn rayon_baselines(op: &str, n: usize, runs: usize) -> Option<(&'static str, Stats)> {
    let words: Vec<u32> = random(1, n).iter().map(|r| *r as u32).collect();
    Some(match op {
        "sort_u32" => (
            "rayon_par_sort_unstable",
            time_host(
                runs,
                &mut words.clone(),
                |w| w.copy_from_slice(&words),
                |w| w.par_sort_unstable(),
            ),
        ),
        "sort_u64" => {
            let wide = random(2, n);
            (
                "rayon_par_sort_unstable",
                time_host(
                    runs,
                    &mut wide.clone(),
                    |w| w.copy_from_slice(&wide),
                    |w| w.par_sort_unstable(),
                ),
            )
        }
        "sort_pairs_u32" => {
            let pairs: Vec<(u32, u32)> = words.iter().copied().zip(0..n as u32).collect();
            (
                "rayon_par_sort_by_key",
                time_host(
                    runs,
                    &mut pairs.clone(),
                    |w| w.copy_from_slice(&pairs),
                    |w| w.par_sort_by_key(|p| p.0),
                ),
            )
        }
        "exclusive_scan_u32" => (
            "rayon_two_pass_scan",
            time_host(
                runs,
                &mut vec![0u32; n],
                |_| (),
                |out| rayon_scan(&words, out),
            ),
        ),
        "reduce_sum_u32" => (
            "rayon_par_iter_sum",
            time_host(
                runs,
                &mut (),
                |_| (),
                |_| {
                    let s: u64 = words.par_iter().map(|&w| w as u64).sum();
                    std::hint::black_box(s);
                },
            ),
        ),
        _ => return None,
    })
}

/// A plain rayon-parallel exclusive scan: chunk sums in parallel, their prefix, then each
/// chunk's prefix sums in parallel.
fn rayon_scan(input: &[u32], output: &mut [u32]) {
    let chunk = input.len().div_ceil(rayon::current_num_threads()).max(1);
    let sums: Vec<u32> = input
        .par_chunks(chunk)
        .map(|c| c.iter().fold(0u32, |a, &b| a.wrapping_add(b)))
        .collect();
    let mut carry = 0u32;
    let carries: Vec<u32> = sums
        .iter()
        .map(|&s| {
            let c = carry;
            carry = carry.wrapping_add(s);
            c
        })
        .collect();
    output
        .par_chunks_mut(chunk)
        .zip(input.par_chunks(chunk))
        .zip(carries)
        .for_each(|((out, inp), mut running)| {
            for (o, &x) in out.iter_mut().zip(inp) {
                *o = running;
                running = running.wrapping_add(x);
            }
        });
}

fn main() {
    let backends = list("BENCH_BACKENDS", "cuda,ash,wgpu,cpu");
    let sizes: Vec<u32> = list("BENCH_SIZES", "16,18,20,22,24,26")
        .iter()
        .map(|s| s.parse().expect("BENCH_SIZES: powers of two"))
        .collect();
    let ops = list("BENCH_OPS", &OPS.join(","));
    let runs: usize = var("BENCH_RUNS", "10").parse().expect("BENCH_RUNS");
    let pause: u64 = var("BENCH_PAUSE_MS", "0").parse().expect("BENCH_PAUSE_MS");
    for name in &backends {
        let backend = Backend::parse(name).expect("BENCH_BACKENDS: backend names");
        let device = match Device::open(backend) {
            Ok(d) => d,
            Err(e) => {
                println!("skip backend={name}: {e}");
                continue;
            }
        };
        println!("device backend={name}: {}", device.description());
        let mut prims = Primitives::new(&device);
        let kernels = (var("BENCH_KERNELS", "") == "1" && backend != Backend::Cpu).then(|| {
            let kernels = Kernels::default();
            kernels.hook(&device, &mut prims);
            kernels
        });
        let clock = Clock {
            device: &device,
            kernels,
        };
        for op in &ops {
            for &p in &sizes {
                let n = 1usize << p;
                match bench_op(&clock, &mut prims, op, n, runs) {
                    Ok((s, bytes)) => report(name, op, p, n * bytes, &s),
                    Err(e) => println!("error backend={name} op={op} n=2^{p}: {e}"),
                }
                if let Some(kernels) = &clock.kernels {
                    kernels.report(name, op, p, runs);
                }
                if backend == Backend::Cpu {
                    if let Some((what, s)) = rayon_baselines(op, n, runs) {
                        report(what, op, p, n * 4, &s);
                    }
                }
                prims.clear();
                std::thread::sleep(std::time::Duration::from_millis(pause));
            }
        }
    }
}
