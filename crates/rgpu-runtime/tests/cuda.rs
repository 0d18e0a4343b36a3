//! What only the cuda backend has. Without an NVIDIA driver (this machine): opening it is
//! a clear `Unavailable`, never a panic. With one: hand-written PTX FIXTURES (`fixtures`,
//! standing in for rustc's nvptx64 output of `#[rgpu::kernel]`s) run through `launch()`:
//! PTX for a newer GPU, transfer speed, copies between GPUs, NCCL's collectives and jobs of
//! processes, SASS beside PTX. What every GPU backend must do is conformance.rs's.
#![cfg(feature = "cuda")]

mod fixtures;

use std::process::Command;

use rgpu_runtime::__private::Artifact;
use rgpu_runtime::{Backend, Buffer, Collective, CopyPath, Device, Error, ReduceOp};

#[path = "common/exchange.rs"]
mod exchange;

use fixtures::{saxpy, KERNELS_PTX, PTX_ARTIFACTS as ARTIFACTS};

/// PTX for a GPU newer than any: nothing a device can run.
static FUTURE_ONLY: [Artifact; 1] = [Artifact {
    target: "sm_999",
    ..ARTIFACTS[0]
}];

/// Whether the dynamic linker knows a libcuda (what cudarc would load).
fn libcuda_installed() -> bool {
    Command::new("ldconfig")
        .arg("-p")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("libcuda.so"))
}

#[test]
fn without_a_driver_cuda_is_unavailable_not_a_panic() {
    match Device::open(Backend::Cuda) {
        Ok(device) => eprintln!("a CUDA device is here: {}", device.description()),
        Err(Error::Unavailable { reason, .. }) => {
            assert!(!reason.contains('\n'), "{reason}");
            if !libcuda_installed() {
                assert_eq!(
                    reason,
                    "no CUDA driver found (libcuda.so could not be loaded): install the NVIDIA \
                     driver"
                );
                let (_, skipped) = Device::auto();
                assert_eq!(skipped[0].backend, Backend::Cuda);
                assert_eq!(skipped[0].reason, reason);
            }
        }
        Err(e) => panic!("expected Unavailable, got {e}"),
    }
}

fn open() -> Option<Device> {
    match Device::open(Backend::Cuda) {
        Ok(d) => Some(d),
        Err(e) => {
            assert!(
                std::env::var("RGPU_REQUIRE_CUDA").as_deref() != Ok("1"),
                "RGPU_REQUIRE_CUDA=1, but: {e}"
            );
            eprintln!("skipped: {e}");
            None
        }
    }
}

/// PTX only for a newer GPU than this one: the error names the archs and the build to run
/// (the other missing-artifact cases are the conformance suite's).
#[test]
fn ptx_only_for_a_newer_gpu_names_the_build() {
    let Some(device) = open() else {
        return;
    };
    let (x, mut y) = (vec![0.0f32; 4], vec![0.0f32; 4]);
    let e = saxpy(&device, &FUTURE_ONLY, 4, &x, &mut y, 1.0).unwrap_err();
    assert!(e.to_string().contains("PTX for [sm_999]"), "{e}");
    assert!(
        e.to_string().ends_with(": run rgpu build --backend cuda"),
        "{e}"
    );
}

/// GB/s (10^9 bytes per second) of `bytes` in `seconds`.
fn gbps(bytes: usize, seconds: f64) -> f64 {
    bytes as f64 / seconds / 1e9
}

/// Transfers through pinned staging at speed: the best of five 64 MiB round trips, each
/// direction, printed (their correctness at every size is the conformance suite's).
#[test]
fn transfers_through_pinned_staging_at_speed() {
    let Some(device) = open() else {
        return;
    };
    // Best of a few 64 MiB round trips, each direction.
    let len = 1 << 24;
    let data: Vec<u32> = (0..len as u32).collect();
    let mut out = vec![0u32; len];
    let mut buffer = device.zeros::<u32>(len).unwrap();
    let (mut up, mut down) = (f64::MAX, f64::MAX);
    for _ in 0..5 {
        let start = std::time::Instant::now();
        buffer.write(&data).unwrap();
        device.sync().unwrap();
        up = up.min(start.elapsed().as_secs_f64());
        let start = std::time::Instant::now();
        buffer.read_into(&mut out).unwrap();
        down = down.min(start.elapsed().as_secs_f64());
    }
    assert!(out == data);
    eprintln!(
        "cuda: 64 MiB best of 5: write+sync {:.2} ms ({:.1} GB/s), read_into {:.2} ms ({:.1} \
         GB/s)",
        up * 1e3,
        gbps(len * 4, up),
        down * 1e3,
        gbps(len * 4, down)
    );
}

/// `Device::copy_from` between CUDA devices: two devices opened on one GPU (the same
/// context: `SameDevice`), and every ordered pair of GPUs where there are several (`Peer`
/// or `DriverStaged`, as the driver says), exact after a launch queued on the source, with
/// the GB/s of a 256 MiB copy (best of 5) beside a read-back-and-upload of the same bytes.
#[test]
fn copies_between_cuda_devices_go_gpu_to_gpu() {
    let Some(first) = open() else {
        return;
    };
    let again = Device::open(Backend::Cuda).unwrap();
    let mut devices = vec![first, again];
    devices.extend(Device::open_all(Backend::Cuda).unwrap().into_iter().skip(1));
    for (to_index, to) in devices.iter().enumerate() {
        for (from_index, from) in devices.iter().enumerate() {
            if to_index == from_index {
                continue;
            }
            let path = to.copy_path(from);
            if to_index < 2 && from_index < 2 {
                assert_eq!(path, CopyPath::SameDevice);
            } else {
                assert!(
                    matches!(path, CopyPath::Peer | CopyPath::DriverStaged),
                    "{path}"
                );
            }
            for len in [0usize, 1, 1000, (1 << 20) + 3] {
                let x: Vec<f32> = (0..len).map(|i| i as f32).collect();
                let mut y = from.upload(&vec![1.0f32; len]).unwrap();
                // Queued on `from`; the copy must come after it.
                saxpy(from, &ARTIFACTS, len as u32, &x[..], &mut y, 2.0).unwrap();
                let copy = to.copy_from(&y).unwrap();
                let want: Vec<f32> = x.iter().map(|v| 2.0 * v + 1.0).collect();
                assert!(copy.read().unwrap() == want, "{len} elements, {path}");
                let mut into = to.upload(&vec![5.0f32; len]).unwrap();
                into.copy_from(&y).unwrap();
                assert!(into.read().unwrap() == want, "into, {len} elements, {path}");
                drop(y); // the copy is its own memory
                assert!(copy.read().unwrap() == want);
            }
            if to_index == 0 || from_index == 0 {
                let bytes = 1usize << 28;
                let src = from.zeros::<u8>(bytes).unwrap();
                let (mut direct, mut into, mut host) = (f64::MAX, f64::MAX, f64::MAX);
                let mut dst = to.zeros::<u8>(bytes).unwrap();
                for _ in 0..5 {
                    let start = std::time::Instant::now();
                    let copy = to.copy_from(&src).unwrap();
                    direct = direct.min(start.elapsed().as_secs_f64());
                    drop(copy);
                    let start = std::time::Instant::now();
                    dst.copy_from(&src).unwrap();
                    into = into.min(start.elapsed().as_secs_f64());
                    let start = std::time::Instant::now();
                    let copy = to.upload(&src.read().unwrap()).unwrap();
                    to.sync().unwrap();
                    host = host.min(start.elapsed().as_secs_f64());
                    drop(copy);
                }
                eprintln!(
                    "cuda {from_index} -> {to_index} ({path}): 256 MiB in {:.2} ms ({:.1} GB/s), \
                     into a buffer made before {:.2} ms ({:.1} GB/s); through host memory \
                     {:.2} ms ({:.1} GB/s)",
                    direct * 1e3,
                    gbps(bytes, direct),
                    into * 1e3,
                    gbps(bytes, into),
                    host * 1e3,
                    gbps(bytes, host)
                );
            }
        }
    }
}

/// `Collective` over every GPU, once each: NCCL (the GPU machine has libnccl.so.2), each
/// operation exact after a launch queued on every device, and two openings of one GPU
/// refused (NCCL takes each GPU once). With one GPU NCCL runs one rank; with several, the
/// bus bandwidth of a 256 MiB f32 all-reduce (best of 5) is printed.
#[test]
fn collectives_over_the_gpus_go_through_nccl() {
    let Some(first) = open() else {
        return;
    };
    let twice = [first.clone(), Device::open(Backend::Cuda).unwrap()];
    let e = Collective::new(&twice)
        .err()
        .expect("two openings of one GPU");
    assert!(e.to_string().contains("are the same GPU"), "{e}");
    let devices = Device::open_all(Backend::Cuda).unwrap();
    let group = Collective::new(&devices).unwrap();
    let n = devices.len();
    eprintln!("cuda: {n} GPUs, collectives through {}", group.engine());
    assert!(group.engine().starts_with("NCCL 2."), "{}", group.engine());
    let len = 1_000_003usize;
    let ones = vec![1.0f32; len];
    // Rank r: y = 2 * x + 1 with x = i + r (a launch queued before the collective).
    let mut y: Vec<Buffer<f32>> = devices
        .iter()
        .enumerate()
        .map(|(r, d)| {
            let x: Vec<f32> = (0..len).map(|i| (i % 1000 + r) as f32).collect();
            let mut y = d.upload(&ones).unwrap();
            saxpy(d, &ARTIFACTS, len as u32, &x[..], &mut y, 2.0).unwrap();
            y
        })
        .collect();
    group.all_reduce(&mut y, ReduceOp::Sum).unwrap();
    let want: Vec<f32> = (0..len)
        .map(|i| (0..n).map(|r| 2.0 * (i % 1000 + r) as f32 + 1.0).sum())
        .collect();
    for b in &y {
        assert!(b.read().unwrap() == want, "all_reduce sum");
    }
    let mut u: Vec<Buffer<u32>> = devices
        .iter()
        .enumerate()
        .map(|(r, d)| d.upload(&vec![r as u32 + 7; 1000]).unwrap())
        .collect();
    group.all_reduce(&mut u, ReduceOp::Max).unwrap();
    assert!(u
        .iter()
        .all(|b| b.read().unwrap() == vec![n as u32 + 6; 1000]));
    group.broadcast(&mut u, 0).unwrap();
    let parts: Vec<Buffer<i32>> = devices
        .iter()
        .enumerate()
        .map(|(r, d)| d.upload(&[-(r as i32); 5]).unwrap())
        .collect();
    let mut gathered: Vec<Buffer<i32>> = devices.iter().map(|d| d.zeros(5 * n).unwrap()).collect();
    group.all_gather(&parts, &mut gathered).unwrap();
    let all: Vec<i32> = (0..n).flat_map(|r| vec![-(r as i32); 5]).collect();
    assert!(gathered.iter().all(|b| b.read().unwrap() == all));
    let wide: Vec<Buffer<f64>> = devices
        .iter()
        .map(|d| d.upload(&vec![0.5f64; 8 * n]).unwrap())
        .collect();
    let mut parts_out: Vec<Buffer<f64>> = devices.iter().map(|d| d.zeros(8).unwrap()).collect();
    group
        .reduce_scatter(&wide, &mut parts_out, ReduceOp::Sum)
        .unwrap();
    assert!(parts_out
        .iter()
        .all(|b| b.read().unwrap() == vec![0.5 * n as f64; 8]));
    exchange::exchanges(&devices, &group);
    let len = 1usize << 26;
    let mut big: Vec<Buffer<f32>> = devices.iter().map(|d| d.zeros(len).unwrap()).collect();
    let mut best = f64::MAX;
    for _ in 0..5 {
        let start = std::time::Instant::now();
        group.all_reduce(&mut big, ReduceOp::Sum).unwrap();
        devices.iter().for_each(|d| d.sync().unwrap());
        best = best.min(start.elapsed().as_secs_f64());
    }
    // NCCL's bus bandwidth of an all-reduce: bytes * 2 (n - 1) / n over the time.
    let bus = (len * 4) as f64 * 2.0 * (n as f64 - 1.0) / n as f64;
    eprintln!(
        "cuda: all_reduce of 256 MiB f32 on {n} GPUs: {:.3} ms, bus bandwidth {:.1} GB/s",
        best * 1e3,
        bus / best / 1e9
    );
}

/// A job of processes: one process joins as rank 0 of 1 with a fresh unique id and
/// all-reduces; a job of 2 whose second rank never comes is `Error::Timeout` within the
/// device's launch timeout, not a hang.
#[test]
fn a_job_of_processes_joins_through_nccls_unique_id() {
    let Some(device) = open() else {
        return;
    };
    let id = Collective::unique_id().unwrap();
    assert_eq!(id.len(), 256);
    let group = Collective::join(&device, 0, 1, &id).unwrap();
    assert_eq!(group.len(), 1);
    let mut one = vec![device.upload(&[3u32, 4, 5]).unwrap()];
    group.all_reduce(&mut one, ReduceOp::Sum).unwrap();
    assert_eq!(one[0].read().unwrap(), vec![3, 4, 5]);
    let (patient, _) = Device::options()
        .backend(Backend::Cuda)
        .launch_timeout(std::time::Duration::from_millis(1500))
        .select()
        .unwrap();
    let started = std::time::Instant::now();
    let id = Collective::unique_id().unwrap();
    let e = Collective::join(&patient, 0, 2, &id)
        .err()
        .expect("rank 1 never comes");
    let took = started.elapsed();
    assert!(matches!(e, Error::Timeout { .. }), "{e}");
    assert!(e.to_string().contains("not every rank came"), "{e}");
    assert!(took < std::time::Duration::from_secs(10), "{took:?}");
    eprintln!("cuda: {e} (after {took:?})");
    let e = Collective::join(&device, 0, 1, "not an id").err().unwrap();
    assert!(e.to_string().contains("is not the 256 hex digits"), "{e}");
}

/// A job of two processes on two GPUs (this test as rank 0, itself again as rank 1, the
/// launcher's variables set as torchrun sets them): an all-reduce and an all-to-all exact
/// across the processes; then rank 1 exits without a word and rank 0's next all-reduce is
/// `Error::Collective` naming rank 0 after its launch timeout (NCCL's communicator
/// aborted), not a hang. With one GPU both ranks take it and NCCL refuses: an error saying
/// to give each rank its own GPU.
#[test]
fn a_job_of_two_processes_and_a_rank_that_dies() {
    let child = std::env::var("RGPU_TEST_JOB_RANK").ok();
    let rank: usize = child.as_deref().map_or(0, |r| r.parse().unwrap());
    let Some(_) = open() else {
        return;
    };
    // With one GPU both ranks take it, which NCCL refuses: each says so.
    let gpus = Device::open_all(Backend::Cuda).unwrap().len();
    let (device, _) = Device::options()
        .backend(Backend::Cuda)
        .device(rank % gpus)
        .launch_timeout(std::time::Duration::from_secs(5))
        .select()
        .unwrap();
    let shared = |e: Error| {
        let text = e.to_string();
        assert!(matches!(e, Error::Config { .. }), "{text}");
        assert!(
            text.contains(&format!("rank {rank} of 2 could not join the job")),
            "{text}"
        );
        assert!(text.contains("ncclInvalidUsage"), "{text}");
        assert!(text.contains("give each rank its own GPU"), "{text}");
        eprintln!("rank {rank}, both ranks on one GPU: {text}");
    };
    let mut peer = None;
    let group = if child.is_some() {
        match Collective::from_env(&device) {
            Ok(group) => group,
            Err(e) if gpus == 1 => {
                shared(e);
                std::process::exit(0);
            }
            Err(e) => panic!("{e}"),
        }
    } else {
        let id = Collective::unique_id().unwrap();
        peer = Some(
            std::process::Command::new(std::env::current_exe().unwrap())
                .args(["--exact", "a_job_of_two_processes_and_a_rank_that_dies"])
                .args(["--nocapture", "--test-threads", "1"])
                .env("RGPU_TEST_JOB_RANK", "1")
                .env(rgpu_runtime::NCCL_ID_VAR, &id)
                .env("RANK", "1")
                .env("WORLD_SIZE", "2")
                .spawn()
                .unwrap(),
        );
        match Collective::join(&device, 0, 2, &id) {
            Ok(group) => group,
            Err(e) if gpus == 1 => {
                shared(e);
                let status = peer.unwrap().wait().unwrap();
                assert!(status.success(), "rank 1: {status}");
                return;
            }
            Err(e) => panic!("{e}"),
        }
    };
    assert_eq!(group.len(), 2);
    let mut x = vec![device.upload(&vec![rank as u32 + 1; 4099]).unwrap()];
    group.all_reduce(&mut x, ReduceOp::Sum).unwrap();
    assert!(x[0].read().unwrap() == vec![3u32; 4099], "rank {rank}");
    // counts[r][q] = 10 r + q + 1: rank q gets q + 1 elements from rank 0, q + 11 from 1.
    let counts = vec![vec![1, 2], vec![11, 12]];
    let mine: Vec<u32> = (0..counts[rank].iter().sum::<usize>())
        .map(|i| (100 * rank + i) as u32)
        .collect();
    let inputs = vec![device.upload(&mine).unwrap()];
    let mut outputs = vec![device
        .zeros::<u32>(counts[0][rank] + counts[1][rank])
        .unwrap()];
    group.all_to_all(&inputs, &counts, &mut outputs).unwrap();
    let from = |r: usize| {
        let start: usize = counts[r][..rank].iter().sum();
        (start..start + counts[r][rank]).map(move |i| (100 * r + i) as u32)
    };
    let want: Vec<u32> = from(0).chain(from(1)).collect();
    assert_eq!(outputs[0].read().unwrap(), want, "rank {rank}");
    if child.is_some() {
        eprintln!("rank 1: exact; exits without a word");
        std::process::exit(0);
    }
    let status = peer.unwrap().wait().unwrap();
    assert!(status.success(), "rank 1: {status}");
    let started = std::time::Instant::now();
    let e = group
        .all_reduce(&mut x, ReduceOp::Sum)
        .and_then(|()| x[0].read().map(drop))
        .unwrap_err();
    let took = started.elapsed();
    eprintln!("rank 0, rank 1 gone: {e} (after {took:?})");
    assert!(
        matches!(
            e,
            Error::Collective {
                rank: 0,
                ranks: 2,
                ..
            }
        ),
        "{e:#?}"
    );
    assert!(took < std::time::Duration::from_secs(30), "{took:?}");
    assert!(device.sync().is_err(), "the device is lost after it");
}

/// ptxas of the CUDA toolkit (`CUDA_PATH`, /usr/local/cuda) or PATH, for the SASS test.
fn ptxas() -> Option<std::path::PathBuf> {
    let roots = [
        std::env::var("CUDA_PATH").ok(),
        Some("/usr/local/cuda".into()),
    ];
    roots
        .into_iter()
        .flatten()
        .map(|root| std::path::Path::new(&root).join("bin").join("ptxas"))
        .find(|p| p.is_file())
        .or_else(|| {
            Command::new("ptxas")
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
                .then(|| "ptxas".into())
        })
}

/// The FIXTURE PTX assembled by ptxas for `arch` (what `rgpu build` embeds beside a PTX).
fn fixture_sass(ptxas: &std::path::Path, arch: &str) -> &'static [u8] {
    let dir = std::env::temp_dir().join(format!("rgpu-cuda-sass-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (ptx, cubin) = (dir.join("fixture.ptx"), dir.join(format!("{arch}.cubin")));
    std::fs::write(&ptx, KERNELS_PTX).unwrap();
    let made = Command::new(ptxas)
        .arg(format!("-arch={arch}"))
        .arg(&ptx)
        .arg("-o")
        .arg(&cubin)
        .status()
        .unwrap();
    assert!(made.success(), "ptxas -arch={arch} failed");
    Box::leak(std::fs::read(&cubin).unwrap().into_boxed_slice())
}

/// The FIXTURE PTX and a cubin of `target` with `bytes` (leaked: artifacts are `'static`).
fn with_cubin(target: &str, bytes: &'static [u8]) -> &'static [Artifact] {
    let cubin = Artifact {
        kind: "cubin",
        target: Box::leak(target.to_string().into_boxed_str()),
        sha256: Box::leak(format!("cubin-{target}-{}", bytes.len()).into_boxed_str()),
        bytes,
        ..ARTIFACTS[0]
    };
    Box::leak(vec![ARTIFACTS[0], cubin].into_boxed_slice())
}

fn saxpy_is_right(device: &Device, artifacts: &'static [Artifact]) {
    let n = 10_007usize;
    let x: Vec<f32> = (0..n).map(|i| (i % 1000) as f32).collect();
    let mut y = vec![1.0f32; n];
    saxpy(device, artifacts, n as u32, &x, &mut y, 2.0).unwrap();
    assert!(y
        .iter()
        .enumerate()
        .all(|(i, &v)| v == 2.0 * (i % 1000) as f32 + 1.0));
}

/// A cubin the GPU runs is loaded instead of the PTX (no JIT); a cubin of another major
/// leaves the PTX to the JIT; one the driver refuses falls back to the PTX, and the
/// description says which was loaded each time.
#[test]
fn sass_is_loaded_where_it_runs_and_the_ptx_elsewhere() {
    let Some(device) = open() else {
        return;
    };
    let Some(ptxas) = ptxas() else {
        assert!(
            std::env::var("RGPU_REQUIRE_CUDA").as_deref() != Ok("1"),
            "RGPU_REQUIRE_CUDA=1, but no ptxas (CUDA_PATH, /usr/local/cuda, PATH)"
        );
        eprintln!("skipped: no ptxas to make the SASS");
        return;
    };
    let description = device.description();
    let cc = description
        .split("compute ")
        .nth(1)
        .and_then(|rest| rest.split([',', ' ']).next())
        .unwrap_or_else(|| panic!("no compute capability in {description}"));
    let arch = format!("sm_{}", cc.replace('.', ""));
    let native = with_cubin(&arch, fixture_sass(&ptxas, &arch));
    saxpy_is_right(&device, native);
    let text = device.description();
    assert!(text.contains(&format!("SASS {arch} (cubin)")), "{text}");
    assert!(!text.contains("JIT-compiled"), "{text}");

    let other = if cc.starts_with('7') {
        "sm_90"
    } else {
        "sm_75"
    };
    let device = open().unwrap();
    saxpy_is_right(&device, with_cubin(other, fixture_sass(&ptxas, other)));
    let text = device.description();
    assert!(text.contains("PTX sm_50 (ISA 7.0) JIT-compiled"), "{text}");
    assert!(!text.contains("SASS"), "{text}");

    let device = open().unwrap();
    saxpy_is_right(
        &device,
        with_cubin(&arch, b"not a cubin, refused by the driver"),
    );
    let text = device.description();
    assert!(
        text.contains(&format!(
            "PTX sm_50 (ISA 7.0) JIT-compiled (the {arch} cubin was refused"
        )),
        "{text}"
    );
}
