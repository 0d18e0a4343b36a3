//! Benchmark (issues 4 and 8): the CUDA sort timed with CUDA events over its launches, and
//! the CPU backend against `sort_unstable` and rayon's `par_sort_unstable`. Run: `cargo run
//! --release --example bench --features cuda` (with `RGPU_MANIFEST` set by `rgpu build
//! --backend cuda`); the CUDA rows are skipped where no GPU answers. `BENCH_SKIP_CPU=1`
//! skips the CPU rows, `BENCH_SKIP_CUDA=1` the CUDA rows.

use std::time::Instant;

use host::rng::SplitMix64;
use host::runners::cpu::CpuRunner;
use host::runners::cuda::CudaRunner;
use host::runners::SortRunner;
use kernel::schedule::Passes;
use rayon::slice::ParallelSliceMut;
use shared::{KeyKind, SortOrder};

const RUNS: usize = 10;

fn median(mut times: Vec<f64>) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn cuda_rows(cuda: &CudaRunner, n: usize) -> Result<(), cudarc::driver::DriverError> {
    let input = SplitMix64::new(n as u64).bits(n);
    let stream = cuda.stream();
    let ctx = stream.context();
    let timing = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
    let mut buf = stream.clone_htod(&input)?;
    let (start, end) = (ctx.new_event(timing)?, ctx.new_event(timing)?);
    let mut full = Vec::new();
    for run in 0..=RUNS {
        stream.memcpy_htod(&input, &mut buf)?;
        start.record(stream)?;
        cuda.sort_on_device(&mut buf, KeyKind::U32, SortOrder::Ascending)?;
        end.record(stream)?;
        stream.synchronize()?;
        if run > 0 {
            full.push(f64::from(start.elapsed_ms(&end)?));
        }
    }
    let mut check = vec![0u32; n];
    stream.memcpy_dtoh(&buf, &mut check)?;
    stream.synchronize()?;
    let mut expected = input.clone();
    expected.sort_unstable();
    assert!(check == expected, "CUDA result differs at n={n}");
    println!(
        "cuda n=2^{} launches={} sort_ms={:.3}",
        n.trailing_zeros(),
        Passes::new(n as u32).count(),
        median(full)
    );
    Ok(())
}

fn cpu_rows(n: usize) {
    let input = SplitMix64::new(n as u64).bits(n);
    let mut cpu = CpuRunner::new();
    let (mut ours, mut std_sort, mut par_sort) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..3 {
        let mut keys = input.clone();
        let t = Instant::now();
        cpu.sort_bits(&mut keys, KeyKind::U32, SortOrder::Ascending)
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
        cpu.device()
    );
}

fn main() {
    let sizes: Vec<usize> = [16, 20, 24, 26].iter().map(|p| 1usize << p).collect();
    if std::env::var_os("BENCH_SKIP_CUDA").is_none() {
        match CudaRunner::open() {
            Ok(cuda) => {
                println!("device: {}", cuda.device());
                for &n in &sizes {
                    cuda_rows(&cuda, n).expect("CUDA benchmark");
                }
            }
            Err(why) => println!("cuda rows skipped: {why}"),
        }
    }
    if std::env::var_os("BENCH_SKIP_CPU").is_none() {
        for &n in &sizes {
            cpu_rows(n);
        }
    }
}
