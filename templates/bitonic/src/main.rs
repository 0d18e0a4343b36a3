//! Demo: sort random keys (or your own) on the best backend this binary was built with.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, ValueEnum};
use shared::{KeyKind, SortOrder};

use host::keys_io::{self, Format};
use host::rng::SplitMix64;
use host::runners::{self, Backend, SortRunner};

#[derive(Clone, Copy, Debug, ValueEnum)]
enum BackendArg {
    Auto,
    Cpu,
    Cuda,
    Wgpu,
    Ash,
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

/// Bitonic sort in plain Rust on CUDA, Vulkan (wgpu, ash) and the CPU.
///
/// f32 keys sort in IEEE 754 total order (f32::total_cmp): -NaN first, then -inf .. -0.0,
/// +0.0 .. +inf, and NaN last (ascending).
#[derive(Parser, Debug)]
#[command(version, about)]
struct Args {
    /// Backend to sort on; `auto` tries cuda, wgpu, ash, then cpu.
    #[arg(long, value_enum, default_value = "auto")]
    backend: BackendArg,
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
    /// Time 10 runs after a warm-up and report the median.
    #[arg(long)]
    bench: bool,
    /// Print one JSON object instead of text.
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
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn open_runner(choice: BackendArg, quiet: bool) -> Result<Box<dyn SortRunner>, String> {
    let backend = match choice {
        BackendArg::Auto => {
            let (runner, skipped) = runners::open_auto();
            if !quiet {
                for why in skipped
                    .iter()
                    .filter(|w| !matches!(w, runners::RunnerError::NotBuilt(_)))
                {
                    eprintln!("notice: {why}; trying the next backend");
                }
                eprintln!("notice: --backend auto chose {}", runner.backend());
            }
            return Ok(runner);
        }
        BackendArg::Cpu => Backend::Cpu,
        BackendArg::Cuda => Backend::Cuda,
        BackendArg::Wgpu => Backend::Wgpu,
        BackendArg::Ash => Backend::Ash,
    };
    runners::open(backend).map_err(|e| e.to_string())
}

fn run(args: &Args) -> Result<(), String> {
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
        None => SplitMix64::new(args.seed).bits(args.len),
    };
    let mut runner = open_runner(args.backend, args.json)?;

    let mut keys = input.clone();
    let mut times = Vec::new();
    let runs = if args.bench { BENCH_RUNS + 1 } else { 1 };
    for _ in 0..runs {
        keys.copy_from_slice(&input);
        let start = Instant::now();
        runner
            .sort_bits(&mut keys, kind, order)
            .map_err(|e| e.to_string())?;
        times.push(start.elapsed().as_secs_f64() * 1e3);
    }
    if args.bench {
        times.remove(0); // warm-up
    }
    times.sort_by(f64::total_cmp);
    let ms = times[times.len() / 2];

    let sorted = if args.verify {
        verify(&input, &keys, kind, order)
    } else {
        is_sorted(&keys, kind, order)
    };
    if let Some(path) = &args.output {
        keys_io::write_keys(path, &keys, kind, format).map_err(|e| e.to_string())?;
    }
    report(args, runner.as_ref(), &keys, kind, order, sorted, ms);
    if sorted {
        Ok(())
    } else if args.verify {
        Err(format!(
            "the {} result differs from Rust's sort",
            runner.backend()
        ))
    } else {
        Err(format!("the {} result is not in order", runner.backend()))
    }
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
    runner: &dyn SortRunner,
    keys: &[u32],
    kind: KeyKind,
    order: SortOrder,
    sorted: bool,
    ms: f64,
) {
    if args.json {
        println!(
            "{{\"backend\": \"{}\", \"len\": {}, \"type\": \"{}\", \"order\": \"{}\", \"sorted\": {sorted}, \"verified\": {}, \"ms\": {ms:.3}}}",
            runner.backend(),
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
    println!(
        "sorted {} {} keys ({}) on {} [{}] in {ms:.3} ms ({what})",
        keys.len(),
        kind.name(),
        order.name(),
        runner.backend(),
        runner.device()
    );
    if args.verify && sorted {
        println!("verified: identical to Rust's sort");
    }
}
