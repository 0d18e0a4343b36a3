//! Times moving data between the CUDA GPUs of one machine through rgpu, the way NCCL's own
//! tests report it: `Device::copy_from` GPU 0 -> GPU 1 (a new buffer each time),
//! `Buffer::copy_from` (into a buffer made once), `Collective::send_recv` GPU 0 -> GPU 1 into a buffer made once (NCCL), and
//! `Collective::all_reduce` (f32 sum, in place) over every GPU, for sizes from 1 MiB to
//! 1 GiB. `benchmarks/gpu_to_gpu_bandwidth.py` runs it beside the same operations through
//! CuPy (cudaMemcpyPeerAsync, NCCL's all-reduce) on the same machine.
//!
//! ```text
//! cargo run --release --example collectives --features cuda -- [repetitions (20)]
//! ```
//!
//! Prints one JSON line per operation and size: the median, best and worst time of the
//! repetitions (each `iters` operations, then every device synced) in ms per operation, the
//! algorithm bandwidth (bytes / time) and the bus bandwidth (NCCL's: all-reduce times
//! 2 (n - 1) / n; copies as algorithm bandwidth), in GB/s (10^9 bytes per second).

use std::time::Instant;

use rgpu_runtime::{Backend, Buffer, Collective, Device, Error, ReduceOp, Transfer};

fn median(times: &mut [f64]) -> (f64, f64, f64) {
    times.sort_by(f64::total_cmp);
    (times[times.len() / 2], times[0], times[times.len() - 1])
}

fn report(op: &str, gpus: usize, bytes: usize, bus_factor: f64, times: &mut [f64]) {
    let (mid, best, worst) = median(times);
    let algbw = bytes as f64 / (mid * 1e-3) / 1e9;
    println!(
        "{{\"op\": \"{op}\", \"gpus\": {gpus}, \"bytes\": {bytes}, \"median_ms\": {mid:.4}, \
         \"best_ms\": {best:.4}, \"worst_ms\": {worst:.4}, \"algbw_gbps\": {algbw:.1}, \
         \"busbw_gbps\": {:.1}}}",
        algbw * bus_factor
    );
}

/// `reps` samples of the mean time of `iters` calls of `op` (ms), after two warm-up calls.
fn time(
    devices: &[Device],
    reps: usize,
    iters: usize,
    mut op: impl FnMut() -> Result<(), Error>,
) -> Result<Vec<f64>, Error> {
    for _ in 0..2 {
        op()?;
    }
    devices.iter().try_for_each(Device::sync)?;
    let mut times = Vec::with_capacity(reps);
    for _ in 0..reps {
        let start = Instant::now();
        for _ in 0..iters {
            op()?;
        }
        devices.iter().try_for_each(Device::sync)?;
        times.push(start.elapsed().as_secs_f64() * 1e3 / iters as f64);
    }
    Ok(times)
}

fn main() -> Result<(), Error> {
    let reps: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(20)
        .max(1);
    let devices = Device::open_all(Backend::Cuda)?;
    let n = devices.len();
    let group = Collective::new(&devices)?;
    eprintln!(
        "{n} GPU(s): {}; collectives through {}",
        devices[0].description(),
        group.engine()
    );
    for mib in [1usize, 16, 64, 256, 1024] {
        let bytes = mib << 20;
        let len = bytes / 4;
        let iters = (256 / mib).clamp(1, 20);
        let data: Vec<f32> = (0..len).map(|i| (i % 1024) as f32).collect();
        if n >= 2 {
            let src = devices[0].upload(&data)?;
            let mut times = time(&devices, reps, iters, || {
                devices[1].copy_from(&src).map(drop)
            })?;
            assert!(devices[1].copy_from(&src)?.read()? == data, "copy_from");
            report("Device::copy_from 0->1", 2, bytes, 1.0, &mut times);
            let mut into: Buffer<f32> = devices[1].zeros(len)?;
            let mut times = time(&devices, reps, iters, || into.copy_from(&src))?;
            assert!(into.read()? == data, "Buffer::copy_from");
            report("Buffer::copy_from 0->1", 2, bytes, 1.0, &mut times);
            let mut dst: Buffer<f32> = devices[1].zeros(len)?;
            let mut times = time(&devices, reps, iters, || {
                group.send_recv(&mut [Transfer::send(&src, 1), Transfer::recv(&mut dst, 0)])
            })?;
            assert!(dst.read()? == data, "send_recv");
            report("send_recv 0->1", 2, bytes, 1.0, &mut times);
        }
        let mut bufs: Vec<Buffer<f32>> = devices
            .iter()
            .map(|d| d.upload(&data))
            .collect::<Result<_, _>>()?;
        let mut times = time(&devices, reps, iters, || {
            group.all_reduce(&mut bufs, ReduceOp::Sum)
        })?;
        let factor = 2.0 * (n as f64 - 1.0) / n as f64;
        report("all_reduce f32 sum", n, bytes, factor, &mut times);
        // Exactness after a known number of sums: values below 2^24 stay exact.
        let mut check: Vec<Buffer<f32>> = devices
            .iter()
            .map(|d| d.upload(&data))
            .collect::<Result<_, _>>()?;
        group.all_reduce(&mut check, ReduceOp::Sum)?;
        let want: Vec<f32> = data.iter().map(|v| v * n as f32).collect();
        for b in &check {
            assert!(b.read()? == want, "all_reduce");
        }
    }
    Ok(())
}
