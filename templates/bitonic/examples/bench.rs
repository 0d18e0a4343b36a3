//! Benchmark (issue 4): the CUDA path against the copy-every-pass host pattern, and the
//! CPU backend against `sort_unstable`. Run: `cargo run --release --example bench
//! --features cuda` (with `RGPU_MANIFEST` set by `rgpu build --backend cuda`); the CUDA
//! rows are skipped where no GPU answers.

use std::time::Instant;

use host::rng::SplitMix64;
use host::runners::cpu::CpuRunner;
use host::runners::cuda::CudaRunner;
use host::runners::SortRunner;
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
    let (mut steps, mut full) = (Vec::new(), Vec::new());
    for run in 0..=RUNS {
        stream.memcpy_htod(&input, &mut buf)?;
        start.record(stream)?;
        cuda.run_steps(&mut buf)?;
        end.record(stream)?;
        stream.synchronize()?;
        let steps_ms = f64::from(start.elapsed_ms(&end)?);
        stream.memcpy_htod(&input, &mut buf)?;
        start.record(stream)?;
        cuda.sort_on_device(&mut buf, KeyKind::U32, SortOrder::Ascending)?;
        end.record(stream)?;
        stream.synchronize()?;
        if run > 0 {
            steps.push(steps_ms);
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
        "cuda n=2^{} steps_ms={:.3} encode+steps+decode_ms={:.3}",
        n.trailing_zeros(),
        median(steps),
        median(full)
    );
    if n <= 1 << 20 {
        let mut times = Vec::new();
        for _ in 0..3 {
            let mut keys = input.clone();
            let t = Instant::now();
            cuda.sort_copy_every_pass(&mut keys)?;
            times.push(t.elapsed().as_secs_f64() * 1e3);
            assert!(keys == expected);
        }
        println!(
            "copy-every-pass n=2^{} ms={:.3}",
            n.trailing_zeros(),
            median(times)
        );
    }
    Ok(())
}

fn cpu_rows(n: usize) {
    let input = SplitMix64::new(n as u64).bits(n);
    let mut cpu = CpuRunner::new();
    let (mut ours, mut std_sort) = (Vec::new(), Vec::new());
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
    }
    println!(
        "cpu n=2^{} backend_ms={:.3} sort_unstable_ms={:.3} [{}]",
        n.trailing_zeros(),
        median(ours),
        median(std_sort),
        cpu.device()
    );
}

fn main() {
    let sizes: Vec<usize> = [16, 20, 24, 26].iter().map(|p| 1usize << p).collect();
    match CudaRunner::open() {
        Ok(cuda) => {
            println!("device: {}", cuda.device());
            for &n in &sizes {
                cuda_rows(&cuda, n).expect("CUDA benchmark");
            }
        }
        Err(why) => println!("cuda rows skipped: {why}"),
    }
    if std::env::var_os("BENCH_SKIP_CPU").is_none() {
        for &n in &sizes {
            cpu_rows(n);
        }
    }
}
