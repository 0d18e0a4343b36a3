//! benchmarks/narrow_memory_words.sh's program: device time of the portability corpus's
//! `bytes_map`, `words_map` and `bytes_sum16` (tests/corpus/kernels.rs) on the backend
//! RGPU_BACKEND names, median of 10 runs after a
//! warm-up (`Device::timed`), for n = 2^20, 2^24 and 2^26 items; each result checked against
//! plain Rust. One line per kernel and size:
//! `<backend> <kernel> n=2^<k> median <ms> ms (min <ms>, max <ms>) <GB/s> GB/s checked`.

use std::process::ExitCode;

use kernel::corpus as bench;

const RUNS: usize = 10;

fn median(mut times: Vec<f64>) -> (f64, f64, f64) {
    times.sort_by(f64::total_cmp);
    (times[times.len() / 2], times[0], times[times.len() - 1])
}

fn bytes(n: usize) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u32).wrapping_mul(2_654_435_761).to_le_bytes()[3])
        .collect()
}

/// Runs `launch` RUNS + 1 times (the first a warm-up) and prints its line; `traffic` bytes
/// moved per run.
fn time(
    device: &rgpu::Device,
    kernel: &str,
    log: u32,
    traffic: usize,
    mut launch: impl FnMut() -> Result<(), rgpu::Error>,
) -> Result<(), rgpu::Error> {
    let mut times = Vec::new();
    for run in 0..=RUNS {
        let ((), ms) = device.timed(&mut launch)?;
        if run > 0 {
            times.extend(ms);
        }
    }
    if times.is_empty() {
        println!("{} {kernel} n=2^{log} no device timer", device.backend());
        return Ok(());
    }
    let (mid, low, high) = median(times);
    let rate = traffic as f64 / (mid * 1e-3) / 1e9;
    println!(
        "{} {kernel} n=2^{log} median {mid:.4} ms (min {low:.4}, max {high:.4}) {rate:.1} GB/s checked",
        device.backend()
    );
    Ok(())
}

fn run() -> Result<(), String> {
    let (device, _) = rgpu::Device::select().map_err(|e| e.to_string())?;
    let e = |e: rgpu::Error| e.to_string();
    for log in [20u32, 24, 26] {
        let n = 1usize << log;
        let input = bytes(n);
        let x = device.upload(&input).map_err(e)?;
        let mut out = device.zeros::<u8>(n).map_err(e)?;
        time(&device, "bytes_map", log, 2 * n, || {
            bench::bytes_map(&device, n as u32, &x, &mut out)
        })
        .map_err(e)?;
        let got = out.read().map_err(e)?;
        let want: Vec<u8> = (0..n).map(|i| input[i].wrapping_mul(3) ^ i as u8).collect();
        if got != want {
            return Err(format!("bytes_map n=2^{log} differs from plain Rust"));
        }
        let words: Vec<u32> = (0..n as u32)
            .map(|i| i.wrapping_mul(2_654_435_761))
            .collect();
        let xw = device.upload(&words).map_err(e)?;
        let mut ow = device.zeros::<u32>(n).map_err(e)?;
        time(&device, "words_map", log, 8 * n, || {
            bench::words_map(&device, n as u32, &xw, &mut ow)
        })
        .map_err(e)?;
        let got = ow.read().map_err(e)?;
        if (0..n).any(|i| got[i] != words[i].wrapping_mul(3) ^ i as u32) {
            return Err(format!("words_map n=2^{log} differs from plain Rust"));
        }
        let items = n / 16;
        let mut sums = device.zeros::<u32>(items).map_err(e)?;
        time(&device, "bytes_sum16", log, n + 4 * items, || {
            bench::bytes_sum16(&device, items as u32, &x, &mut sums)
        })
        .map_err(e)?;
        let got = sums.read().map_err(e)?;
        let want = |j: usize| {
            input[16 * j..16 * j + 16]
                .iter()
                .map(|&b| u32::from(b))
                .sum()
        };
        if (0..items).any(|j| got[j] != want(j)) {
            return Err(format!("bytes_sum16 n=2^{log} differs from plain Rust"));
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}
