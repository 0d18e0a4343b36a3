//! Times the user-style kernels (kernel/src/kernels.rs and lib.rs) on each backend and checks
//! every result against a plain-Rust reference computed in the kernel's own order of float
//! operations (so every backend, the cpu backend included, must match it bit for bit).
//!
//! Usage: `user-kernels [--sizes small|large] [--backends cpu,cuda,wgpu,ash]
//!         [--kernels saxpy,...] [--reps N] [--check-only] [--list]`
//!
//! `--list` prints the kernels of `--sizes`, one a line, and runs nothing.
//!
//! One JSON object per line on stdout: a `reference` line per case (its SHA-256, which the
//! CUDA C++ twins compare against), then one line per case and backend with the device time
//! per run (`Device::timed`: median, min, max over `--reps` runs after a warm-up), the wall
//! time per run (launches + sync), the first run's time (module load or pipeline build
//! included), the backend's start-up time to its first result (on its first case), and the
//! check: `equal`, or `unfused` where a Vulkan driver computes `mul_add` as a multiply and an
//! add (Mesa's llvmpipe does), or where it differs. Exits 1 when a result differs or a
//! backend errs.

mod cases;

use std::process::ExitCode;
use std::time::Instant;

use rgpu::{Backend, Device};
use sha2::{Digest, Sha256};

use cases::Case;

const USAGE: &str = "usage: user-kernels [--sizes small|large] [--backends cpu,cuda,wgpu,ash] \
                     [--kernels saxpy,...] [--reps N] [--check-only] [--list]";

struct Args {
    sizes: String,
    backends: Vec<Backend>,
    kernels: Option<Vec<String>>,
    reps: usize,
    check_only: bool,
    list: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        sizes: "large".into(),
        backends: Vec::new(),
        kernels: None,
        reps: 20,
        check_only: false,
        list: false,
    };
    let mut words = std::env::args().skip(1);
    while let Some(word) = words.next() {
        let mut value = |name: &str| words.next().ok_or(format!("{name} needs a value; {USAGE}"));
        match word.as_str() {
            "--sizes" => args.sizes = value("--sizes")?,
            "--backends" => {
                args.backends = value("--backends")?
                    .split(',')
                    .map(|b| Backend::parse(b).ok_or(format!("unknown backend `{b}`; {USAGE}")))
                    .collect::<Result<_, _>>()?
            }
            "--kernels" => {
                args.kernels = Some(value("--kernels")?.split(',').map(String::from).collect())
            }
            "--reps" => {
                args.reps = value("--reps")?
                    .parse()
                    .map_err(|e| format!("--reps: {e}"))?
            }
            "--check-only" => args.check_only = true,
            "--list" => args.list = true,
            other => return Err(format!("unknown argument `{other}`; {USAGE}")),
        }
    }
    if args.backends.is_empty() {
        // The GPU backends built in; the cpu backend too on small sizes.
        args.backends = Backend::ALL
            .into_iter()
            .filter(|b| b.is_built() && b.for_this_target())
            .filter(|&b| b != Backend::Cpu || args.sizes == "small")
            .collect();
    }
    Ok(args)
}

fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `{"median": .., "min": .., "max": ..}` of `ms` (milliseconds), or `null`.
fn stats(ms: &mut [f64]) -> String {
    if ms.is_empty() {
        return "null".into();
    }
    ms.sort_by(f64::total_cmp);
    format!(
        "{{\"median\": {:.4}, \"min\": {:.4}, \"max\": {:.4}}}",
        ms[ms.len() / 2],
        ms[0],
        ms[ms.len() - 1]
    )
}

fn quoted(text: &str) -> String {
    format!("{text:?}")
}

/// What one case did on one backend.
struct Outcome {
    check: String,
    first_ms: f64,
    device_ms: Vec<f64>,
    wall_ms: Vec<f64>,
}

/// What a backend's result is: "equal" to the reference; "unfused" (equal to the result with
/// each `mul_add` rounded twice: the driver splits GLSL.std.450 `Fma`); or where it differs.
fn verdict(output: &[u8], reference: &Reference) -> String {
    if output == reference.fused {
        return "equal".into();
    }
    if let Some(tolerance) = reference.tolerance {
        let as_f32 = |bytes: &[u8]| -> Vec<f64> {
            bytes
                .chunks_exact(4)
                .map(|w| f64::from(f32::from_le_bytes([w[0], w[1], w[2], w[3]])))
                .collect()
        };
        let (got, want) = (as_f32(output), as_f32(&reference.fused));
        let scale = want.iter().fold(0f64, |m, w| m.max(w.abs()));
        let error = got
            .iter()
            .zip(&want)
            .fold(0f64, |m, (g, w)| m.max((g - w).abs()))
            / scale;
        return if got.len() == want.len() && error <= tolerance {
            format!("{WITHIN} {tolerance:e} (normwise relative error {error:.1e})")
        } else {
            format!("differs: normwise relative error {error:.1e} > {tolerance:e}")
        };
    }
    if reference.unfused.as_deref() == Some(output) {
        return UNFUSED.into();
    }
    let at = output
        .iter()
        .zip(&reference.fused)
        .position(|(a, b)| a != b)
        .unwrap_or(output.len().min(reference.fused.len()));
    format!(
        "differs from the reference from byte {at} ({} bytes, reference {})",
        output.len(),
        reference.fused.len()
    )
}

const UNFUSED: &str = "unfused: each mul_add rounded twice (the driver splits Fma)";

/// How a result within its case's tolerance starts.
const WITHIN: &str = "within";

/// Whether a check passes: equal, unfused, or within the case's tolerance.
fn passes(check: &str) -> bool {
    check == "equal" || check == UNFUSED || check.starts_with(WITHIN)
}

/// A case's reference results.
struct Reference {
    fused: Vec<u8>,
    unfused: Option<Vec<u8>>,
    tolerance: Option<f64>,
}

fn run_case(
    device: &Device,
    case: &dyn Case,
    reference: &Reference,
    args: &Args,
) -> Result<Outcome, rgpu::Error> {
    let mut run = case.prepare(device)?;
    device.sync()?;
    let start = Instant::now();
    run.launch()?;
    let output = run.output()?;
    let first_ms = start.elapsed().as_secs_f64() * 1e3;
    let check = verdict(&output, reference);
    let (mut device_ms, mut wall_ms) = (Vec::new(), Vec::new());
    if !args.check_only {
        run.launch()?; // warm-up
        for _ in 0..args.reps {
            let ((), ms) = device.timed(|| run.launch())?;
            device_ms.extend(ms);
        }
        for _ in 0..args.reps {
            let start = Instant::now();
            run.launch()?;
            device.sync()?;
            wall_ms.push(start.elapsed().as_secs_f64() * 1e3);
        }
    }
    Ok(Outcome {
        check,
        first_ms,
        device_ms,
        wall_ms,
    })
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(2);
        }
    };
    let Some(mut all) = cases::cases(&args.sizes) else {
        eprintln!("error: --sizes is small or large; {USAGE}");
        return ExitCode::from(2);
    };
    if let Some(kernels) = &args.kernels {
        all.retain(|c| kernels.iter().any(|k| k == c.kernel()));
    }
    if args.list {
        let mut names: Vec<&str> = Vec::new();
        for case in &all {
            if !names.contains(&case.kernel()) {
                names.push(case.kernel());
            }
        }
        println!("{}", names.join("\n"));
        return ExitCode::SUCCESS;
    }
    let mut failed = false;
    let mut references = Vec::with_capacity(all.len());
    for case in &all {
        let start = Instant::now();
        let reference = Reference {
            fused: case.reference(),
            unfused: case.unfused_reference(),
            tolerance: case.tolerance(),
        };
        let unfused = reference
            .unfused
            .as_deref()
            .map_or("null".into(), |u| quoted(&sha256(u)));
        let tolerance = reference
            .tolerance
            .map_or("null".into(), |t| format!("{t:e}"));
        println!(
            "{{\"kernel\": {}, \"size\": {}, \"backend\": \"reference\", \"sha256\": {}, \
             \"unfused_sha256\": {unfused}, \"tolerance\": {tolerance}, \"bytes\": {}, \
             \"ms\": {:.1}}}",
            quoted(case.kernel()),
            quoted(&case.size()),
            quoted(&sha256(&reference.fused)),
            case.bytes(),
            start.elapsed().as_secs_f64() * 1e3
        );
        references.push(reference);
    }
    for &backend in &args.backends {
        let start = Instant::now();
        let device = match Device::open(backend) {
            Ok(device) => device,
            Err(e) => {
                println!(
                    "{{\"backend\": {}, \"error\": {}}}",
                    quoted(backend.name()),
                    quoted(&e.to_string())
                );
                failed = true;
                continue;
            }
        };
        let mut startup = Some(start);
        for (case, reference) in all.iter().zip(&references) {
            let head = format!(
                "\"kernel\": {}, \"size\": {}, \"backend\": {}",
                quoted(case.kernel()),
                quoted(&case.size()),
                quoted(backend.name())
            );
            match run_case(&device, case.as_ref(), reference, &args) {
                Ok(mut o) => {
                    let startup_ms = startup.take().map_or("null".into(), |s| {
                        format!("{:.1}", s.elapsed().as_secs_f64() * 1e3)
                    });
                    let median = {
                        let mut d = o.device_ms.clone();
                        d.sort_by(f64::total_cmp);
                        d.get(d.len() / 2).copied()
                    };
                    let gbps = median.map_or("null".into(), |ms| {
                        format!("{:.1}", case.bytes() / (ms * 1e-3) / 1e9)
                    });
                    failed |= !passes(&o.check);
                    println!(
                        "{{{head}, \"device\": {}, \"check\": {}, \"device_ms\": {}, \
                         \"wall_ms\": {}, \"first_ms\": {:.3}, \"startup_ms\": {startup_ms}, \
                         \"gbps\": {gbps}, \"reps\": {}}}",
                        quoted(&device.description()),
                        quoted(&o.check),
                        stats(&mut o.device_ms),
                        stats(&mut o.wall_ms),
                        o.first_ms,
                        if args.check_only { 0 } else { args.reps }
                    );
                }
                Err(e) => {
                    failed = true;
                    println!("{{{head}, \"error\": {}}}", quoted(&e.to_string()));
                }
            }
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
