//! Times host <-> device copies on every backend that opens here: `Device::upload` (a new
//! buffer), `Buffer::write` (+ `sync`), `Buffer::read_into` (into touched memory) and
//! `Buffer::read` (into a new `Vec`), and checks what comes back.
//!
//! ```text
//! cargo run --release --example transfer --features cuda,wgpu,ash -- [MiB (64)] [repetitions (10)]
//! RGPU_TRANSFER_BACKENDS=cuda,ash cargo run ...   # only these backends
//! ```
//!
//! Prints one line per backend and operation: the median and best time of the
//! repetitions, and the best as GB/s (10^9 bytes per second).

use std::time::{Duration, Instant};

use rgpu_runtime::{Backend, Device, Error};

fn main() -> Result<(), Error> {
    let mut args = std::env::args().skip(1);
    let mib: f64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(64.0);
    let reps: usize = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(10)
        .max(1);
    let backends: Vec<Backend> = match std::env::var("RGPU_TRANSFER_BACKENDS") {
        Ok(list) => list.split(',').filter_map(Backend::parse).collect(),
        Err(_) => Backend::ALL.to_vec(),
    };
    let len = (mib * f64::from(1 << 20) / 4.0) as usize;
    let bytes = (len * 4) as f64;
    // Not a pattern a copy could get right by accident.
    let data: Vec<u32> = (0..len as u32)
        .map(|i| i.wrapping_mul(2_654_435_761) ^ 0x5bd1_e995)
        .collect();
    let mut out = vec![0u32; len];
    out.iter_mut().for_each(|v| *v = 1);
    println!("{mib} MiB ({len} u32), {reps} repetitions: median / best ms, best GB/s");
    for backend in backends {
        let device = match Device::open(backend) {
            Ok(d) => d,
            Err(e) => {
                println!("{backend}: skipped ({e})");
                continue;
            }
        };
        println!("{backend}: {}", device.description());
        // Warm up: first allocations, staging, pipelines.
        let mut buffer = device.upload(&data)?;
        buffer.read_into(&mut out)?;
        let report = |what: &str, times: &mut Vec<Duration>| {
            times.sort();
            let median = times[times.len() / 2].as_secs_f64() * 1e3;
            let best = times[0].as_secs_f64() * 1e3;
            println!(
                "  {what:<10} {median:8.2} / {best:8.2} ms  {:6.2} GB/s",
                bytes / (best * 1e-3) / 1e9
            );
        };
        let mut times = Vec::new();
        for _ in 0..reps {
            drop(buffer);
            let start = Instant::now();
            buffer = device.upload(&data)?;
            device.sync()?;
            times.push(start.elapsed());
        }
        report("upload", &mut times);
        times.clear();
        for _ in 0..reps {
            let start = Instant::now();
            buffer.write(&data)?;
            device.sync()?;
            times.push(start.elapsed());
        }
        report("write", &mut times);
        times.clear();
        for _ in 0..reps {
            out.iter_mut().step_by(1024).for_each(|v| *v = 0);
            let start = Instant::now();
            buffer.read_into(&mut out)?;
            times.push(start.elapsed());
        }
        report("read_into", &mut times);
        assert!(out == data, "{backend}: read_into returned other data");
        times.clear();
        for _ in 0..reps {
            let start = Instant::now();
            let fresh = buffer.read()?;
            times.push(start.elapsed());
            assert!(fresh == data, "{backend}: read returned other data");
        }
        report("read", &mut times);
    }
    Ok(())
}
