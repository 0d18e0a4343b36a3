//! The precision of rgpu's float functions (`rgpu::Float`, `mul_add`) on every backend built
//! in: each function over a fixed sweep of inputs, compared with the same function computed
//! in f64 on the host (f32 functions) or with std's f64 function (the f64 functions Vulkan
//! has: sqrt, rsqrt, the rounding ones, mul_add), as the
//! largest error in ulp of the result's type, and how many results equal the cpu backend's
//! (std's) bit for bit.
//!
//! Usage: `math-precision [--backends cpu,cuda,wgpu,ash]` (default: every backend built in).
//! One line per function and backend: `backend function type max_ulp at_x same_as_cpu/n`.

use std::process::ExitCode;

use rgpu::{Backend, Device};

/// Name, the kernel's `which`, and the input ranges of `x` and `z` (a sweep of `N` points,
/// uniform or log-spaced when `log` is set).
struct Function {
    name: &'static str,
    which: u32,
    x: (f64, f64),
    z: (f64, f64),
    log: bool,
}

const fn f(name: &'static str, which: u32, x: (f64, f64), log: bool) -> Function {
    Function {
        name,
        which,
        x,
        z: (0.0, 0.0),
        log,
    }
}

const FUNCTIONS: &[Function] = &[
    f("sqrt", 0, (1e-30, 1e30), true),
    f("rsqrt", 1, (1e-30, 1e30), true),
    f("exp", 2, (-87.0, 88.0), false),
    f("exp2", 3, (-126.0, 127.0), false),
    f("ln", 4, (1e-30, 1e30), true),
    f("ln near 1", 4, (0.5, 2.0), false),
    f("log2", 5, (1e-30, 1e30), true),
    f("log10", 6, (1e-30, 1e30), true),
    f("sin", 7, (-3.14159, 3.14159), false),
    f("sin wide", 7, (-1e4, 1e4), false),
    f("cos", 8, (-3.14159, 3.14159), false),
    f("cos wide", 8, (-1e4, 1e4), false),
    f("tan", 9, (-1.5, 1.5), false),
    f("tanh", 10, (-10.0, 10.0), false),
    Function {
        name: "powf",
        which: 11,
        x: (0.01, 10.0),
        z: (-8.0, 8.0),
        log: false,
    },
    f("floor", 12, (-1e3, 1e3), false),
    f("ceil", 13, (-1e3, 1e3), false),
    f("round", 14, (-1e3, 1e3), false),
    f("trunc", 15, (-1e3, 1e3), false),
    f("fract", 16, (-1e3, 1e3), false),
    Function {
        name: "powi",
        which: 17,
        x: (-2.0, 2.0),
        z: (-9.0, 9.0),
        log: false,
    },
    Function {
        name: "atan2",
        which: 19,
        x: (-2.0, 2.0),
        z: (-2.0, 2.0),
        log: false,
    },
    Function {
        name: "mul_add",
        which: 18,
        x: (-1e3, 1e3),
        z: (-1.0, 1.0),
        log: false,
    },
];

const N: usize = 1 << 16;

fn sweep((a, b): (f64, f64), log: bool, i: usize, salt: u32) -> f64 {
    // A deterministic jitter so the points are not all on a grid.
    let h = (i as u32).wrapping_mul(0x9e37_79b1) ^ salt.wrapping_mul(0x85eb_ca77);
    let h = (h ^ (h >> 15)).wrapping_mul(0x2c1b_3c6d);
    let t = (i as f64 + f64::from(h >> 8) / 16_777_216.0) / N as f64;
    if log {
        (a.ln() + t * (b.ln() - a.ln())).exp()
    } else {
        a + t * (b - a)
    }
}

/// The reference in f64 (for `f32`: computed on the f32 inputs widened).
fn reference(which: u32, x: f64, z: f64) -> f64 {
    match which {
        0 => x.sqrt(),
        1 => 1.0 / x.sqrt(),
        2 => x.exp(),
        3 => x.exp2(),
        4 => x.ln(),
        5 => x.log2(),
        6 => x.log10(),
        7 => x.sin(),
        8 => x.cos(),
        9 => x.tan(),
        10 => x.tanh(),
        11 => x.powf(z),
        12 => x.floor(),
        13 => x.ceil(),
        14 => x.round(),
        15 => x.trunc(),
        16 => x.fract(),
        17 => x.powi((z as f32) as i32),
        18 => x.mul_add(z, 0.25),
        19 => x.atan2(z),
        _ => x,
    }
}

/// The f64 kernel's function: `which` where Vulkan has it for f64, else the input.
fn reference64(which: u32, x: f64, z: f64) -> f64 {
    if matches!(which, 0 | 1 | 12..=16 | 18) {
        reference(which, x, z)
    } else {
        x
    }
}

/// The error of `got` against `want`, in ulp of `got`'s type at `want`.
fn ulps(got: f64, want: f64, mantissa_bits: i32) -> f64 {
    if got == want || (got.is_nan() && want.is_nan()) {
        return 0.0;
    }
    if !got.is_finite() || !want.is_finite() {
        return f64::INFINITY;
    }
    let exponent = if want == 0.0 {
        -126
    } else {
        want.abs().log2().floor() as i32
    };
    let ulp = 2f64.powi(exponent.max(-126) - mantissa_bits);
    (got - want).abs() / ulp
}

/// One backend's results for one function: the largest error in ulp of the type, where,
/// and how many equal `cpu` bit for bit.
struct Row {
    max_ulp: f64,
    at: f64,
    same: usize,
}

fn row(got: &[f64], cpu: &[f64], xs: &[f64], want: &[f64], bits: i32) -> Row {
    let mut r = Row {
        max_ulp: 0.0,
        at: f64::NAN,
        same: 0,
    };
    for i in 0..got.len() {
        let e = ulps(got[i], want[i], bits);
        if e > r.max_ulp || (e.is_nan() && !r.max_ulp.is_nan()) {
            r.max_ulp = e;
            r.at = xs[i];
        }
        if got[i].to_bits() == cpu[i].to_bits() || (got[i].is_nan() && cpu[i].is_nan()) {
            r.same += 1;
        }
    }
    r
}

type Results = Vec<(Vec<f64>, Vec<f64>)>; // per function: f32 results widened, f64 results

fn run(device: &Device, inputs: &[(Vec<f64>, Vec<f64>)]) -> Result<Results, rgpu::Error> {
    let mut out = Vec::new();
    for (function, (xs, zs)) in FUNCTIONS.iter().zip(inputs) {
        let x32: Vec<f32> = xs.iter().map(|&x| x as f32).collect();
        let z32: Vec<f32> = zs.iter().map(|&z| z as f32).collect();
        let mut y32 = vec![0f32; N];
        kernel::math32(device, N as u32, function.which, &x32, &z32, &mut y32)?;
        let mut y64 = vec![0f64; N];
        kernel::math64(device, N as u32, function.which, xs, zs, &mut y64)?;
        out.push((y32.iter().map(|&y| f64::from(y)).collect(), y64));
    }
    Ok(out)
}

fn main() -> ExitCode {
    let mut backends: Vec<Backend> = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--backends" => {
                for name in args.next().unwrap_or_default().split(',') {
                    match Backend::parse(name) {
                        Some(b) => backends.push(b),
                        None => {
                            eprintln!("error: unknown backend `{name}`; usage: math-precision [--backends cpu,cuda,wgpu,ash]");
                            return ExitCode::from(2);
                        }
                    }
                }
            }
            other => {
                eprintln!("error: unknown argument `{other}`; usage: math-precision [--backends cpu,cuda,wgpu,ash]");
                return ExitCode::from(2);
            }
        }
    }
    if backends.is_empty() {
        backends = Backend::ALL
            .into_iter()
            .filter(|b| b.is_built() && b.for_this_target())
            .collect();
    }
    let inputs: Vec<(Vec<f64>, Vec<f64>)> = FUNCTIONS
        .iter()
        .map(|f| {
            let xs = (0..N).map(|i| sweep(f.x, f.log, i, f.which)).collect();
            let zs = (0..N).map(|i| sweep(f.z, false, i, f.which + 99)).collect();
            (xs, zs)
        })
        .collect();
    // The references: f32 functions against f64 on the f32 inputs, f64 against std's f64.
    let want32: Vec<Vec<f64>> = FUNCTIONS
        .iter()
        .zip(&inputs)
        .map(|(f, (xs, zs))| {
            xs.iter()
                .zip(zs)
                .map(|(&x, &z)| reference(f.which, f64::from(x as f32), f64::from(z as f32)))
                .collect()
        })
        .collect();
    let cpu = match Device::open(Backend::Cpu).and_then(|d| run(&d, &inputs)) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: the cpu backend: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!("backend function type max_ulp at_x same_as_cpu/n");
    let mut failed = false;
    for backend in backends {
        let results = match Device::open(backend).and_then(|d| run(&d, &inputs)) {
            Ok(r) => r,
            Err(e) => {
                println!("{} error: {e}", backend.name());
                failed = true;
                continue;
            }
        };
        for (i, f) in FUNCTIONS.iter().enumerate() {
            let xs32: Vec<f64> = inputs[i].0.iter().map(|&x| f64::from(x as f32)).collect();
            let r32 = row(&results[i].0, &cpu[i].0, &xs32, &want32[i], 23);
            let want64: Vec<f64> = inputs[i]
                .0
                .iter()
                .zip(&inputs[i].1)
                .map(|(&x, &z)| reference64(f.which, x, z))
                .collect();
            let r64 = row(&results[i].1, &cpu[i].1, &inputs[i].0, &want64, 52);
            // f64: the functions Vulkan has (the kernel leaves the others' inputs as they are).
            let f64_too = matches!(f.which, 0 | 1 | 12..=16 | 18);
            for (ty, r) in [("f32", Some(r32)), ("f64", f64_too.then_some(r64))] {
                let Some(r) = r else { continue };
                println!(
                    "{} {:<10} {} {:.2} {:e} {}/{}",
                    backend.name(),
                    f.name.replace(' ', "_"),
                    ty,
                    r.max_ulp,
                    r.at,
                    r.same,
                    N
                );
            }
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
