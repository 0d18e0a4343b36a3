//! A data-parallel step over several GPUs: each rank runs SAXPY on its own x, then the
//! ranks' y are summed on every GPU (`Collective::all_reduce`), in the two forms jobs take.
//!
//! Usage: `rgpu run --example allreduce -- [--n N] [--launch K] [--json]`
//! (or `cargo run --release --example allreduce --features cuda -- ...`).
//!
//! - One process, every device: `Device::options().select_all()` and `Collective::new`
//!   (NCCL over CUDA GPUs; over other devices, or the cpu alone, through host memory).
//! - Several processes, one GPU each: `--launch K` makes this program a launcher (as
//!   torchrun or mpirun are): it makes the job's id (`Collective::unique_id`, NCCL) and starts
//!   K copies of itself with `RGPU_NCCL_ID`, `RANK` and `WORLD_SIZE` set; each copy takes GPU
//!   `LOCAL_RANK` (else `RANK`) modulo the GPUs it sees and joins with
//!   `Collective::from_env`. Started by torchrun or mpirun instead, it joins the same way.
//! - Rank r's x is `i % 1000 + r`, y starts at 1: after the step every rank's y is
//!   `K + 2 * sum_r (i % 1000 + r)`, exact in f32, and each rank checks it.

use std::process::{Command, ExitCode};

use rgpu::{Collective, Device, ReduceOp};

const USAGE: &str = "usage: [--n N] [--launch K] [--json]";
const A: f32 = 2.0;

struct Args {
    n: usize,
    launch: Option<usize>,
    json: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        n: 1 << 20,
        launch: None,
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
            "--launch" => args.launch = Some(value("--launch")?),
            "--json" => args.json = true,
            other => return Err(format!("unknown argument `{other}`; {USAGE}")),
        }
    }
    if args.n > u32::MAX as usize {
        return Err(format!("--n {}: give at most {}", args.n, u32::MAX));
    }
    Ok(args)
}

/// Rank `rank`'s step on `device`: y = A * x + 1 with its own x, queued before the
/// all-reduce that follows it.
fn step(device: &Device, rank: usize, n: usize) -> Result<rgpu::Buffer<f32>, rgpu::Error> {
    let x: Vec<f32> = (0..n).map(|i| (i % 1000 + rank) as f32).collect();
    let mut y = device.upload(&vec![1.0f32; n])?;
    kernel::saxpy(device, n as u32, A, &x, &mut y)?;
    Ok(y)
}

/// Whether `y` is the sum over `ranks` ranks' steps.
fn exact(y: &[f32], ranks: usize) -> bool {
    y.iter().enumerate().all(|(i, v)| {
        let want: f32 = (0..ranks).map(|r| A * (i % 1000 + r) as f32 + 1.0).sum();
        *v == want
    })
}

/// One process, every device of the best backend.
fn one_process(args: &Args) -> Result<(), String> {
    let (devices, _skipped) = Device::options().select_all().map_err(|e| e.to_string())?;
    let group = Collective::new(&devices).map_err(|e| e.to_string())?;
    let mut ys = Vec::with_capacity(devices.len());
    for (rank, device) in devices.iter().enumerate() {
        ys.push(step(device, rank, args.n).map_err(|e| e.to_string())?);
    }
    group
        .all_reduce(&mut ys, ReduceOp::Sum)
        .map_err(|e| e.to_string())?;
    let mut all_exact = true;
    for y in &ys {
        all_exact &= exact(&y.read().map_err(|e| e.to_string())?, devices.len());
    }
    report(
        args,
        devices[0].backend(),
        devices.len(),
        &group.engine(),
        all_exact,
    );
    if all_exact {
        Ok(())
    } else {
        Err("the all-reduce's result is wrong".into())
    }
}

/// This process as rank `RANK` of a job.
fn rank_of_job(args: &Args) -> Result<(), String> {
    let var = |name: &str| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
    };
    let rank = var("LOCAL_RANK").or(var("RANK")).unwrap_or(0);
    let (devices, _skipped) = Device::options().select_all().map_err(|e| e.to_string())?;
    let device = &devices[rank % devices.len()];
    let group = Collective::from_env(device).map_err(|e| e.to_string())?;
    let global = var("RANK").unwrap_or(0);
    let mut y = [step(device, global, args.n).map_err(|e| e.to_string())?];
    group
        .all_reduce(&mut y, ReduceOp::Sum)
        .map_err(|e| e.to_string())?;
    let ok = exact(&y[0].read().map_err(|e| e.to_string())?, group.len());
    report(args, device.backend(), group.len(), &group.engine(), ok);
    if ok {
        Ok(())
    } else {
        Err(format!("rank {global}: the all-reduce's result is wrong"))
    }
}

/// Starts `ranks` copies of this program as one job and waits for them all.
fn launch(ranks: usize, args: &Args) -> Result<(), String> {
    if ranks == 0 {
        return Err("--launch 0: give the number of processes, 1 or more".into());
    }
    let id = Collective::unique_id().map_err(|e| {
        format!("--launch needs NCCL's job id, which needs a CUDA build and NCCL: {e}")
    })?;
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut extra = vec!["--n".to_string(), args.n.to_string()];
    if args.json {
        extra.push("--json".into());
    }
    let children: Vec<_> = (0..ranks)
        .map(|rank| {
            Command::new(&me)
                .args(&extra)
                .env(rgpu::NCCL_ID_VAR, &id)
                .env("RANK", rank.to_string())
                .env("LOCAL_RANK", rank.to_string())
                .env("WORLD_SIZE", ranks.to_string())
                .spawn()
                .map_err(|e| format!("starting rank {rank}: {e}"))
        })
        .collect::<Result<_, _>>()?;
    let mut failed = Vec::new();
    for (rank, mut child) in children.into_iter().enumerate() {
        let status = child.wait().map_err(|e| e.to_string())?;
        if !status.success() {
            failed.push(format!("rank {rank} ({status})"));
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!("{} failed", failed.join(", ")))
    }
}

fn report(args: &Args, backend: rgpu::Backend, ranks: usize, engine: &str, exact: bool) {
    let rank = std::env::var("RANK").unwrap_or_else(|_| "-".into());
    if args.json {
        println!(
            "{{\"backend\": \"{backend}\", \"ranks\": {ranks}, \"rank\": \"{rank}\", \
             \"engine\": \"{engine}\", \"n\": {}, \"exact\": {exact}}}",
            args.n
        );
    } else {
        println!(
            "all-reduce of {} f32 over {ranks} rank(s) of {backend} through {engine} \
             (rank {rank}): {}",
            args.n,
            if exact { "exact" } else { "WRONG" }
        );
    }
}

fn main() -> ExitCode {
    let done = parse_args().and_then(|args| {
        if let Some(ranks) = args.launch {
            launch(ranks, &args)
        } else if std::env::var_os(rgpu::NCCL_ID_VAR).is_some() {
            rank_of_job(&args)
        } else {
            one_process(&args)
        }
    });
    match done {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            rgpu::eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
