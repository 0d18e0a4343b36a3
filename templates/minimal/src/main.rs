//! SAXPY (`y = a * x + y`) on the backend `RGPU_BACKEND` names (what `rgpu run --backend B`
//! sets), else the best one built in; `--check` compares it with plain Rust.
//!
//! Usage: `rgpu run -- [--n N] [--a A] [--check]`
//!
//! Arguments and output go through `rgpu::args()` and `rgpu::println!`, so the same program
//! also runs in a browser (`rgpu run --backend webgpu`).

use std::process::ExitCode;

const USAGE: &str = "usage: [--n N] [--a A] [--check]";

struct Args {
    n: u32,
    a: f32,
    check: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        n: 1 << 20,
        a: 2.0,
        check: false,
    };
    let mut words = rgpu::args().into_iter().skip(1);
    while let Some(word) = words.next() {
        let mut value = |name: &str| words.next().ok_or(format!("{name} needs a value"));
        match word.as_str() {
            "--n" => args.n = value("--n")?.parse().map_err(|e| format!("--n: {e}"))?,
            "--a" => args.a = value("--a")?.parse().map_err(|e| format!("--a: {e}"))?,
            "--check" => args.check = true,
            other => return Err(format!("unknown argument `{other}`; {USAGE}")),
        }
    }
    Ok(args)
}

/// The inputs: small whole numbers, so every backend's result is exact.
fn inputs(n: u32) -> (Vec<f32>, Vec<f32>) {
    let x = (0..n).map(|i| (i % 1000) as f32).collect();
    let y = (0..n).map(|i| (i % 7) as f32).collect();
    (x, y)
}

fn run(args: &Args) -> Result<(), String> {
    let (device, skipped) = rgpu::Device::select().map_err(|e| e.to_string())?;
    // Why a backend built into this binary was passed over (no driver, no device): never
    // fall back to the cpu silently.
    for why in skipped.iter().filter(|s| s.backend.is_built()) {
        rgpu::eprintln!("notice: {why}; trying the next backend");
    }
    let (x, mut y) = inputs(args.n);
    kernel::saxpy(&device, args.n, args.a, &x, &mut y).map_err(|e| e.to_string())?;
    let shown: Vec<f32> = y.iter().take(4).copied().collect();
    rgpu::println!(
        "saxpy on {}: n = {}, y[..4] = {shown:?}",
        device.backend(),
        args.n
    );
    if args.check {
        let (x, y0) = inputs(args.n);
        let expected: Vec<f32> = x.iter().zip(&y0).map(|(x, y)| args.a * x + y).collect();
        if y != expected {
            return Err(format!("{} differs from plain Rust", device.backend()));
        }
        rgpu::println!("check: identical to plain Rust");
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
