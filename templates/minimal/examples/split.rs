//! SAXPY split over every GPU of this machine, with progress over long work: the pattern
//! for spreading an item kernel's work over several devices.
//!
//! Usage: `rgpu run --example split -- [--n N] [--repeat R] [--chunk C] [--devices K]
//! [--list] [--json]` (or `cargo run --release --example split --features cuda -- ...`).
//!
//! - The devices: every GPU of the backend `RGPU_BACKEND` names, else of the best backend
//!   built in (`Device::options().select_all()`); `--devices K` takes the first K of them,
//!   `RGPU_DEVICE` one. With no GPU it is the cpu, one device.
//! - The work: the items are cut into chunks of C. Each device runs on a thread of its own
//!   and takes the next chunk from a shared queue (a faster device takes more), uploads its
//!   part of x and y, runs SAXPY R times on them (R stands for long work) and reads y back
//!   into its place in the result. The devices share nothing else.
//! - Progress: each finished chunk is reported to the main thread, which prints how far the
//!   whole job is. A chunk is the unit of progress: launch in chunks, and report between.
//! - The result is checked against y + R * a * x, exact (the values are small whole
//!   numbers), so the split over K devices gives what one device gives, bit for bit.

use std::process::ExitCode;
use std::sync::{mpsc, Mutex};
use std::time::Instant;

use rgpu::Device;

const USAGE: &str = "usage: [--n N] [--repeat R] [--chunk C] [--devices K] [--list] [--json]";

struct Args {
    n: usize,
    repeat: u32,
    chunk: usize,
    devices: Option<usize>,
    list: bool,
    json: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        n: 1 << 20,
        repeat: 10,
        chunk: 1 << 17,
        devices: None,
        list: false,
        json: false,
    };
    let mut words = std::env::args().skip(1);
    while let Some(word) = words.next() {
        let mut value = |name: &str| -> Result<usize, String> {
            let text = words.next().ok_or(format!("{name} needs a value"))?;
            text.parse().map_err(|e| format!("{name} {text}: {e}"))
        };
        match word.as_str() {
            "--n" => args.n = value("--n")?,
            "--repeat" => {
                args.repeat = u32::try_from(value("--repeat")?).map_err(|e| e.to_string())?
            }
            "--chunk" => args.chunk = value("--chunk")?,
            "--devices" => args.devices = Some(value("--devices")?),
            "--list" => args.list = true,
            "--json" => args.json = true,
            other => return Err(format!("unknown argument `{other}`; {USAGE}")),
        }
    }
    if args.chunk == 0 || args.chunk > u32::MAX as usize {
        return Err(format!("--chunk {}: give 1 to {}", args.chunk, u32::MAX));
    }
    Ok(args)
}

const A: f32 = 2.0;

/// The inputs: small whole numbers, so y + R * a * x is exact in f32 for R up to 8000.
fn inputs(n: usize) -> (Vec<f32>, Vec<f32>) {
    let x = (0..n).map(|i| (i % 1000) as f32).collect();
    let y = (0..n).map(|i| (i % 7) as f32).collect();
    (x, y)
}

/// One device's share: chunks from `queue` until it is empty, each reported on `done`;
/// returns how many it took.
fn work(
    device: &Device,
    x: &[f32],
    args: &Args,
    queue: &Mutex<std::iter::Enumerate<std::slice::ChunksMut<'_, f32>>>,
    done: mpsc::Sender<usize>,
) -> Result<usize, rgpu::Error> {
    let mut taken = 0;
    loop {
        let next = queue.lock().unwrap_or_else(|e| e.into_inner()).next();
        let Some((c, y)) = next else {
            return Ok(taken);
        };
        taken += 1;
        let len = y.len();
        let x = device.upload(&x[c * args.chunk..][..len])?;
        let mut on_device = device.upload(y)?;
        for _ in 0..args.repeat {
            kernel::saxpy(device, len as u32, A, &x, &mut on_device)?;
        }
        // Reading waits for the chunk's launches: then it is done.
        on_device.read_into(y)?;
        let _ = done.send(c);
    }
}

/// Runs SAXPY `repeat` times on `y` over `devices`, printing progress; returns how many
/// chunks each device took.
fn split(devices: &[Device], x: &[f32], y: &mut [f32], args: &Args) -> Result<Vec<usize>, String> {
    let total = y.len().div_ceil(args.chunk);
    let queue = Mutex::new(y.chunks_mut(args.chunk).enumerate());
    let (done, finished) = mpsc::channel();
    std::thread::scope(|scope| {
        let threads: Vec<_> = devices
            .iter()
            .map(|device| {
                let (done, queue) = (done.clone(), &queue);
                scope.spawn(move || {
                    work(device, x, args, queue, done).map_err(|e| format!("{device:?}: {e}"))
                })
            })
            .collect();
        drop(done);
        // Progress, on this thread, as the devices finish chunks (until every device
        // thread has ended and dropped its sender).
        let mut shown = 0;
        for (count, _chunk) in finished.iter().enumerate() {
            let percent = (count + 1) * 100 / total;
            if !args.json && (percent >= shown + 10 || count + 1 == total) {
                shown = percent;
                rgpu::eprintln!("progress: {}/{total} chunks ({percent}%)", count + 1);
            }
        }
        threads
            .into_iter()
            .map(|t| {
                t.join()
                    .unwrap_or_else(|_| Err("a device thread panicked".into()))
            })
            .collect()
    })
}

fn run(args: &Args) -> Result<(), String> {
    let (mut devices, skipped) = Device::options().select_all().map_err(|e| e.to_string())?;
    for why in skipped.iter().filter(|s| s.backend.is_built()) {
        rgpu::eprintln!("notice: {why}; trying the next backend");
    }
    if args.list {
        for device in &devices {
            println!("{}", device.info());
        }
        return Ok(());
    }
    if let Some(k) = args.devices {
        if k == 0 || k > devices.len() {
            let have: Vec<String> = devices.iter().map(|d| d.info().to_string()).collect();
            return Err(format!(
                "--devices {k}: {} has {} device(s) to split over here ({}): give 1 to {}",
                devices[0].backend(),
                devices.len(),
                have.join(", "),
                devices.len()
            ));
        }
        devices.truncate(k);
    }
    let (x, y0) = inputs(args.n);
    let mut y = y0.clone();
    // Each device compiles or loads the kernel at its first launch: before the clock.
    for device in &devices {
        kernel::saxpy(device, 1, 0.0, &x[..1], &mut [0.0f32][..]).map_err(|e| e.to_string())?;
    }
    let start = Instant::now();
    let taken = split(&devices, &x, &mut y, args)?;
    let ms = start.elapsed().as_secs_f64() * 1e3;
    let repeat = args.repeat as f32;
    let exact = x
        .iter()
        .zip(&y0)
        .zip(&y)
        .all(|((x, y0), y)| *y == y0 + repeat * A * x);
    let backend = devices[0].backend();
    if args.json {
        println!(
            "{{\"backend\": \"{backend}\", \"devices\": {}, \"chunks\": {taken:?}, \"n\": {}, \
             \"repeat\": {}, \"chunk\": {}, \"ms\": {ms:.3}, \"exact\": {exact}}}",
            devices.len(),
            args.n,
            args.repeat,
            args.chunk
        );
    } else {
        for (device, chunks) in devices.iter().zip(&taken) {
            println!("{device:?}: {chunks} chunks");
        }
        println!(
            "saxpy x{} over {} device(s) of {backend}: n = {}, {ms:.1} ms",
            args.repeat,
            devices.len(),
            args.n
        );
    }
    if !exact {
        return Err(format!(
            "the result differs from y + {} * a * x",
            args.repeat
        ));
    }
    Ok(())
}

fn main() -> ExitCode {
    match parse_args().and_then(|args| run(&args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            rgpu::eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}
