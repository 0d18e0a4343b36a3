//! Demo: sort random keys (or your own) on the best backend this binary was built with.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, ValueEnum};
use kernel::{KeyKind, SortOrder, MAX_KEYS};
use rgpu::{Backend, Device, Instant};

use host::keys_io::{self, Format};
use host::rng::SplitMix64;
use host::{Algorithm, Sorter};

#[derive(Clone, Copy, Debug, ValueEnum)]
enum BackendArg {
    Auto,
    Cpu,
    Cuda,
    Wgpu,
    Ash,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum AlgorithmArg {
    Bitonic,
    Radix,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum TypeArg {
    U32,
    I32,
    F32,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum OrderArg {
    Asc,
    Desc,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum FormatArg {
    Text,
    Bin,
}

/// Bitonic and radix sorts in plain Rust on CUDA, Vulkan (wgpu, ash) and the CPU.
///
/// f32 keys sort in IEEE 754 total order (f32::total_cmp): -NaN first, then -inf .. -0.0,
/// +0.0 .. +inf, and NaN last (ascending).
#[derive(Parser, Debug)]
#[command(version, about)]
struct Args {
    /// Backend to sort on; `auto` tries cuda, wgpu, ash, then cpu. Default: RGPU_BACKEND
    /// (what `rgpu run --backend B` sets), else auto.
    #[arg(long, value_enum)]
    backend: Option<BackendArg>,
    /// Device of that backend to sort on: its index (see --list-devices) or a part of its
    /// name. Default: RGPU_DEVICE, else the best one.
    #[arg(long, value_name = "INDEX|NAME")]
    device: Option<String>,
    /// List the devices of every backend built in (index, name, kind, memory) and exit.
    #[arg(long)]
    list_devices: bool,
    /// Sorting algorithm: the bitonic network (in place) or an LSD radix sort (4 passes of
    /// 8 bits, stable, a second buffer).
    #[arg(long, value_enum, default_value = "bitonic")]
    algorithm: AlgorithmArg,
    /// Number of random keys (ignored with --input).
    #[arg(long, default_value_t = 1 << 20, conflicts_with = "input")]
    len: usize,
    /// Key type.
    #[arg(long = "type", value_enum, default_value = "u32")]
    key_type: TypeArg,
    /// Sort order.
    #[arg(long, value_enum, default_value = "asc")]
    order: OrderArg,
    /// Check the result against Rust's own sort.
    #[arg(long)]
    verify: bool,
    /// Time 10 runs after a warm-up and report the medians: end to end (keys in, keys out)
    /// and the device's time for the sort's launches.
    #[arg(long)]
    bench: bool,
    /// Print one JSON object instead of text (with --bench, also the device's subgroup
    /// sizes and compute units, and the driver's statistics of each kernel launched).
    #[arg(long)]
    json: bool,
    /// Read the keys from FILE (see --format) instead of generating random ones.
    #[arg(long, value_name = "FILE")]
    input: Option<PathBuf>,
    /// Write the sorted keys to FILE, in --format.
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// File format of --input and --output: text (one number per line) or bin (raw little-endian).
    #[arg(long, value_enum, default_value = "text")]
    format: FormatArg,
    /// Seed for the random keys.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

const BENCH_RUNS: usize = 10;

fn main() -> ExitCode {
    let args = Args::parse_from(rgpu::args());
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            rgpu::eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn open_device(args: &Args) -> Result<Device, String> {
    let mut options = Device::options();
    options = match args.backend {
        None => options,
        Some(BackendArg::Auto) => options.auto(),
        Some(BackendArg::Cpu) => options.backend(Backend::Cpu),
        Some(BackendArg::Cuda) => options.backend(Backend::Cuda),
        Some(BackendArg::Wgpu) => options.backend(Backend::Wgpu),
        Some(BackendArg::Ash) => options.backend(Backend::Ash),
    };
    if let Some(device) = &args.device {
        options = options.device(device.as_str());
    }
    let (device, skipped) = options.select().map_err(|e| e.to_string())?;
    let chosen = matches!(args.backend, None | Some(BackendArg::Auto));
    if chosen && !args.json {
        for why in skipped.iter().filter(|s| s.backend.is_built()) {
            rgpu::eprintln!("notice: {why}; trying the next backend");
        }
        rgpu::eprintln!("notice: sorting on {device:?}");
    }
    Ok(device)
}

/// `--list-devices`: each backend built in, its devices or why it has none here.
fn list_devices() {
    for backend in Backend::ALL.into_iter().filter(|b| b.is_built()) {
        match Device::list(backend) {
            Ok(devices) => {
                for device in devices {
                    rgpu::println!("{backend} {device}");
                }
            }
            Err(e) => rgpu::println!("{backend} none: {e}"),
        }
    }
}

/// `len` random keys, refused up front when one sort cannot take them or the memory for
/// them cannot be had (instead of an abort).
fn random_keys(len: usize, seed: u64) -> Result<Vec<u32>, String> {
    if len > MAX_KEYS as usize {
        return Err(format!(
            "--len {len} is more than the {MAX_KEYS} keys one sort accepts"
        ));
    }
    let mut keys = Vec::new();
    // Twice: the input and the copy that is sorted.
    keys.try_reserve_exact(len).map_err(|_| {
        format!(
            "cannot allocate {} bytes for {len} keys: use a smaller --len",
            len * 4
        )
    })?;
    keys.extend(SplitMix64::new(seed).bits(len));
    Ok(keys)
}

fn run(args: &Args) -> Result<(), String> {
    if args.list_devices {
        list_devices();
        return Ok(());
    }
    let kind = match args.key_type {
        TypeArg::U32 => KeyKind::U32,
        TypeArg::I32 => KeyKind::I32,
        TypeArg::F32 => KeyKind::F32,
    };
    let order = match args.order {
        OrderArg::Asc => SortOrder::Ascending,
        OrderArg::Desc => SortOrder::Descending,
    };
    let format = match args.format {
        FormatArg::Text => Format::Text,
        FormatArg::Bin => Format::Bin,
    };
    let input = match &args.input {
        Some(path) => keys_io::read_keys(path, kind, format).map_err(|e| e.to_string())?,
        None => random_keys(args.len, args.seed)?,
    };
    let algorithm = match args.algorithm {
        AlgorithmArg::Bitonic => Algorithm::Bitonic,
        AlgorithmArg::Radix => Algorithm::Radix,
    };
    let mut sorter = Sorter::with_algorithm(open_device(args)?, algorithm);

    let mut keys = Vec::new();
    keys.try_reserve_exact(input.len()).map_err(|_| {
        format!(
            "cannot allocate {} bytes for the sorted copy",
            input.len() * 4
        )
    })?;
    keys.extend_from_slice(&input);
    let (mut times, mut device_times) = (Vec::new(), Vec::new());
    let runs = if args.bench { BENCH_RUNS + 1 } else { 1 };
    for _ in 0..runs {
        keys.copy_from_slice(&input);
        let start = Instant::now();
        sorter
            .sort_bits(&mut keys, kind, order)
            .map_err(|e| e.to_string())?;
        times.push(start.elapsed().as_secs_f64() * 1e3);
        device_times.extend(sorter.last_device_ms());
    }
    if args.bench {
        times.remove(0); // warm-up
        if !device_times.is_empty() {
            device_times.remove(0);
        }
    }
    let ms = median(times);
    let device_ms = (!device_times.is_empty()).then(|| median(device_times));

    let sorted = if args.verify {
        verify(&input, &keys, kind, order)
    } else {
        is_sorted(&keys, kind, order)
    };
    if let Some(path) = &args.output {
        keys_io::write_keys(path, &keys, kind, format).map_err(|e| e.to_string())?;
    }
    report(args, &sorter, &keys, (kind, order), sorted, (ms, device_ms));
    if sorted {
        Ok(())
    } else if args.verify {
        Err(format!(
            "the {} result differs from Rust's sort",
            sorter.backend()
        ))
    } else {
        Err(format!("the {} result is not in order", sorter.backend()))
    }
}

fn median(mut times: Vec<f64>) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// A cheap O(n) check that the output is in order.
fn is_sorted(keys: &[u32], kind: KeyKind, order: SortOrder) -> bool {
    keys.windows(2)
        .all(|w| kernel::key::encode(w[0], kind, order) <= kernel::key::encode(w[1], kind, order))
}

/// Compares with Rust's own sort (`total_cmp` for floats), bit for bit.
fn verify(input: &[u32], output: &[u32], kind: KeyKind, order: SortOrder) -> bool {
    host::reference::rust_sort(input, kind, order) == output
}

fn report(
    args: &Args,
    sorter: &Sorter,
    keys: &[u32],
    (kind, order): (KeyKind, SortOrder),
    sorted: bool,
    (ms, device_ms): (f64, Option<f64>),
) {
    if args.json {
        let device = device_ms.map_or("null".to_string(), |d| format!("{d:.3}"));
        // With --bench: what the device and the driver say about the kernels it launched.
        let stats = if args.bench {
            format!(", {}", host::stats::json_fields(sorter.device()))
        } else {
            String::new()
        };
        rgpu::println!(
            "{{\"backend\": \"{}\", \"device\": {}, \"algorithm\": \"{}\", \"len\": {}, \"type\": \"{}\", \"order\": \"{}\", \"sorted\": {sorted}, \"verified\": {}, \"ms\": {ms:.3}, \"device_ms\": {device}{stats}}}",
            sorter.backend(),
            sorter.device().info().index,
            sorter.algorithm(),
            keys.len(),
            kind.name(),
            order.name(),
            args.verify && sorted
        );
        return;
    }
    let what = if args.bench {
        "median of 10 runs"
    } else {
        "one run"
    };
    let device = device_ms.map_or(String::new(), |d| format!(", {d:.3} ms on the device"));
    rgpu::println!(
        "sorted {} {} keys ({}, {}) on {} [{}] in {ms:.3} ms end to end{device} ({what})",
        keys.len(),
        kind.name(),
        order.name(),
        sorter.algorithm(),
        sorter.backend(),
        sorter.device().description()
    );
    if args.verify && sorted {
        rgpu::println!("verified: identical to Rust's sort");
    }
}
