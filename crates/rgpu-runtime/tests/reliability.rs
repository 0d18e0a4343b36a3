//! Reliability (issue 38): launch timeouts and load, on every backend that opens here.
//!
//! - A kernel that never ends (it spins on an atomic load of a flag nobody sets) is
//!   `Error::Timeout` naming it, within a bound, and the process still exits cleanly: on
//!   the Vulkan backends and cuda each case runs in a child process (this binary, an ignored
//!   test), and the parent asserts that the child exited 0 in time.
//! - Load: 8 threads x `RGPU_LOAD_LAUNCHES` (default 1000; 10000 on a GPU) mixed launches on
//!   one device, each result checked exactly, while one thread also makes an argument error
//!   now and then; an allocation larger than the device is `Error::OutOfMemory` and the
//!   device stays usable (`RGPU_LOAD_FILL=1`: also allocate 256 MiB buffers until the
//!   device is full, for a GPU).
//!
//! The Vulkan kernels are GLSL FIXTURES (see `fixtures`), the cuda ones hand-written PTX
//! FIXTURES, standing in for rust-gpu's and rustc's output of `#[rgpu::kernel]`s; the cpu
//! ones are launched as the generated launchers do (`run_items_on`). Without a driver or
//! glslang a backend is skipped with a message (`RGPU_REQUIRE_VULKAN=1` makes that fail).

mod fixtures;

use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use rgpu_runtime::__private::cpu::run_items_on;
use rgpu_runtime::__private::{launch, Access, Arg, Artifact, BufferInfo, KernelInfo, Mode};
use rgpu_runtime::{Backend, Device, Error, Global, Input, InputOutput, Item};

/// The timeout the spin tests set (ms).
const LIMIT_MS: u64 = 400;
/// How long a timed-out launch may take to come back, and a child to exit.
const BOUND: Duration = Duration::from_secs(20);

static SPIN_BUFFERS: [BufferInfo; 1] = [BufferInfo {
    name: "flag",
    access: Access::ReadWrite,
    elem_size: 4,
    item: false,
}];

/// `spin(flag: &mut [u32])`: every item waits until `flag[0]` is non-zero, which never
/// happens. An atomic read-modify-write in the loop, so no compiler may hoist or drop it.
static SPIN: KernelInfo = KernelInfo {
    name: "spin",
    threads: 64,
    mode: Mode::Items,
    buffers: &SPIN_BUFFERS,
    params_size: 8,
    shared_bytes: 0,
    places: &[],
};

const SPIN_GLSL: &str = r#"#version 450
// FIXTURE standing in for rust-gpu's output of an endless rgpu items kernel.
layout(local_size_x = 64) in;
layout(push_constant) uniform Params { uint count; uint len_0; } p;
layout(set = 0, binding = 0) buffer Flag { uint flag[]; };
void main() {
    while (atomicAdd(flag[0], 0u) == 0u) {
    }
    flag[1] = 1u;
}
"#;

/// FIXTURE: hand-written PTX standing in for rustc's nvptx64 output of `spin` and `add`
/// (params by value, then one pointer per buffer; one thread per item).
const KERNELS_PTX: &str = r#"
// FIXTURE: hand-written PTX standing in for rustc's nvptx64 output of rgpu kernels.
.version 7.0
.target sm_50
.address_size 64

.visible .entry spin(
    .param .align 4 .b8 spin_param_0[8],
    .param .u64 spin_param_1
)
{
    .reg .pred %p<2>;
    .reg .b32 %r<2>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [spin_param_1];
    cvta.to.global.u64 %rd2, %rd1;
WAIT:
    atom.global.add.u32 %r1, [%rd2], 0;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 bra WAIT;
    ret;
}

.visible .entry add(
    .param .align 4 .b8 add_param_0[16],
    .param .u64 add_param_1,
    .param .u64 add_param_2,
    .param .u64 add_param_3
)
{
    .reg .pred %p<2>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<11>;
    ld.param.u32 %r1, [add_param_0];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r2, %r3, %r4;
    setp.ge.u32 %p1, %r5, %r1;
    @%p1 bra DONE;
    ld.param.u64 %rd1, [add_param_1];
    ld.param.u64 %rd2, [add_param_2];
    ld.param.u64 %rd3, [add_param_3];
    cvta.to.global.u64 %rd4, %rd1;
    cvta.to.global.u64 %rd5, %rd2;
    cvta.to.global.u64 %rd6, %rd3;
    mul.wide.u32 %rd7, %r5, 4;
    add.s64 %rd8, %rd4, %rd7;
    add.s64 %rd9, %rd5, %rd7;
    add.s64 %rd10, %rd6, %rd7;
    ld.global.u32 %r6, [%rd8];
    ld.global.u32 %r7, [%rd9];
    add.s32 %r6, %r6, %r7;
    st.global.u32 [%rd10], %r6;
DONE:
    ret;
}
"#;

fn skip(why: impl std::fmt::Display) {
    assert!(
        std::env::var("RGPU_REQUIRE_VULKAN").as_deref() != Ok("1"),
        "RGPU_REQUIRE_VULKAN=1, but: {why}"
    );
    eprintln!("skipped: {why}");
}

/// The FIXTURE artifacts of `backend`: SPIR-V (one module per kernel) or PTX.
fn artifacts(backend: Backend) -> Option<&'static [Artifact]> {
    static SPIRV: OnceLock<Option<&'static [Artifact]>> = OnceLock::new();
    static PTX: OnceLock<&'static [Artifact]> = OnceLock::new();
    if backend == Backend::Cuda {
        return Some(PTX.get_or_init(|| {
            let table = vec![Artifact {
                kind: "ptx",
                target: "sm_50",
                codegen: "ptx-fixture",
                entry_points: &["spin", "add"],
                sha256: "",
                bytes: KERNELS_PTX.as_bytes(),
                faults: &[],
            }];
            Box::leak(table.into_boxed_slice())
        }));
    }
    *SPIRV.get_or_init(|| {
        if !fixtures::have_spirv_tools() {
            skip("glslangValidator, spirv-val or spirv-link is not installed");
            return None;
        }
        let spin = fixtures::glsl_fixture_spirv("spin", SPIN_GLSL);
        let add = fixtures::glsl_fixture_spirv("add", fixtures::ADD_GLSL);
        let table = vec![
            fixtures::spirv_artifact(&spin, &["spin"]),
            fixtures::spirv_artifact(&add, &["add"]),
        ];
        Some(Box::leak(table.into_boxed_slice()))
    })
}

/// `backend`'s best device with launch timeout `limit`, or `None` (skipped) where it has
/// none here.
fn open(backend: Backend, limit: Option<Duration>) -> Option<Device> {
    let mut options = Device::options()
        .backend(backend)
        .device(rgpu_runtime::DeviceChoice::Best);
    if let Some(limit) = limit {
        options = options.launch_timeout(limit);
    }
    match options.select() {
        Ok((device, _)) => Some(device),
        Err(e @ (Error::Unavailable { .. } | Error::NotBuilt { .. })) => {
            skip(e);
            None
        }
        Err(e) => panic!("opening {backend}: {e}"),
    }
}

/// What `#[rgpu::kernel] fn spin(flag: &mut [u32])` generates, on any backend.
fn spin(device: &Device, flag: &mut rgpu_runtime::Buffer<u32>) -> Result<(), Error> {
    if device.backend() == Backend::Cpu {
        let flag: &mut [u32] = InputOutput::host_mut(flag)?;
        // SAFETY: the slice lives for the whole launch; access is atomic only.
        let flag = unsafe { Global::from_raw(flag.as_mut_ptr(), flag.len() as u32) };
        return run_items_on(device, "spin", 64, 64, &|_item: Item| {
            while flag.atomic(0).load(std::sync::atomic::Ordering::Acquire) == 0 {}
        });
    }
    let artifacts = artifacts(device.backend()).expect("artifacts");
    launch(
        device,
        &SPIN,
        artifacts,
        64,
        &mut [Arg::InOut(flag.dst())],
        &|lens| bytemuck::cast_slice(&[64, lens[0]]).to_vec(),
    )
}

/// What `#[rgpu::kernel] fn add(#[item] x: &u32, #[item] y: &u32, #[item] out: &mut u32)`
/// generates, on any backend.
fn add(
    device: &Device,
    count: u32,
    x: &(impl Input<u32> + ?Sized),
    y: &(impl Input<u32> + ?Sized),
    out: &mut (impl InputOutput<u32> + ?Sized),
) -> Result<(), Error> {
    if device.backend() == Backend::Cpu {
        let (x, y): (&[u32], &[u32]) = (Input::host(x)?, Input::host(y)?);
        let out: &mut [u32] = InputOutput::host_mut(out)?;
        rgpu_runtime::__private::check_lengths(
            &fixtures::ADD,
            count,
            &[x.len(), y.len(), out.len()],
        )?;
        // SAFETY: the slice lives for the whole launch; each item writes its own element.
        let out = unsafe { Global::from_raw(out.as_mut_ptr(), out.len() as u32) };
        return run_items_on(device, "add", count, 64, &|item: Item| {
            let i = item.index();
            // SAFETY: i < count <= every length (checked above), one writer per element.
            unsafe { out.write(i, x[i as usize].wrapping_add(y[i as usize])) };
        });
    }
    let artifacts = artifacts(device.backend()).expect("artifacts");
    launch(
        device,
        &fixtures::ADD,
        artifacts,
        count,
        &mut [Arg::In(x.src()), Arg::In(y.src()), Arg::InOut(out.dst())],
        &|lens| bytemuck::cast_slice(&[count, lens[0], lens[1], lens[2]]).to_vec(),
    )
}

// --- timeouts ------------------------------------------------------------------------------

/// Opens `backend` with a short timeout, launches `spin` and waits: `Error::Timeout` naming
/// it, within the bound; on a GPU every later call says so too.
fn spin_times_out(backend: Backend) {
    let Some(device) = open(backend, Some(Duration::from_millis(LIMIT_MS))) else {
        return;
    };
    if artifacts(backend).is_none() {
        return;
    }
    let mut flag = device.zeros::<u32>(2).unwrap();
    let started = Instant::now();
    // A GPU backend may queue the launch: the wait after it times out.
    let result = spin(&device, &mut flag).and_then(|()| device.sync());
    let took = started.elapsed();
    let e = result.expect_err("an endless kernel returned");
    assert!(
        matches!(e, Error::Timeout { kernel: "spin", backend: b, after_ms: LIMIT_MS } if b == backend),
        "{e:#?}"
    );
    let text = e.to_string();
    assert!(
        text.starts_with(&format!(
            "kernel `spin` did not finish on {backend} within 400 ms"
        )),
        "{text}"
    );
    assert!(
        took >= Duration::from_millis(LIMIT_MS) && took < BOUND,
        "{took:?}"
    );
    eprintln!("{backend}: {text} (after {took:?})");
    if backend == Backend::Cpu {
        // The kernel was stopped from inside: the device goes on.
        let mut out = vec![0u32; 1000];
        let x: Vec<u32> = (0..1000).collect();
        add(&device, 1000, &x, &x, &mut out).unwrap();
        assert!(out.iter().enumerate().all(|(i, &v)| v == 2 * i as u32));
    } else {
        // The GPU may run on forever: the device is unusable, and says why.
        assert_eq!(device.sync().unwrap_err(), e);
        assert_eq!(device.zeros::<u32>(4).unwrap_err(), e);
        assert_eq!(flag.read().unwrap_err(), e);
        let x = vec![1u32; 4];
        let mut out = vec![0u32; 4];
        assert_eq!(add(&device, 4, &x, &x, &mut out).unwrap_err(), e);
    }
    // Dropping the device and its buffers must not wait for the GPU either.
    drop(flag);
    drop(device);
    assert!(started.elapsed() < BOUND, "{:?}", started.elapsed());
}

#[test]
fn an_endless_kernel_times_out_on_the_cpu_and_the_device_goes_on() {
    spin_times_out(Backend::Cpu);
}

#[test]
fn an_endless_group_kernel_times_out_at_its_barrier_on_the_cpu() {
    let (device, _) = Device::options()
        .backend(Backend::Cpu)
        .launch_timeout(Duration::from_millis(LIMIT_MS))
        .select()
        .unwrap();
    let started = Instant::now();
    let e = rgpu_runtime::__private::cpu::run_groups_on(&device, "barriers", 4, 32, 0, &|g, _| {
        // Every invocation waits at the barrier, forever.
        loop {
            g.barrier();
        }
    })
    .unwrap_err();
    assert!(
        matches!(
            e,
            Error::Timeout {
                kernel: "barriers",
                ..
            }
        ),
        "{e:#?}"
    );
    assert!(started.elapsed() < BOUND);
    // A launch without a limit on the same pool still runs.
    let (unlimited, _) = Device::options()
        .backend(Backend::Cpu)
        .launch_timeout(Duration::ZERO)
        .select()
        .unwrap();
    let x = vec![5u32; 64];
    let mut out = vec![0u32; 64];
    add(&unlimited, 64, &x, &x, &mut out).unwrap();
    assert!(out.iter().all(|&v| v == 10));
}

/// Runs this binary's ignored test `name` in a child process and asserts that it passed
/// and exited within the bound (a device that waits for an endless kernel on exit, or a
/// driver thread that keeps the process alive, would fail here).
#[cfg_attr(
    not(any(feature = "ash", feature = "wgpu", feature = "cuda")),
    allow(dead_code)
)]
fn in_child(name: &str) {
    let exe = std::env::current_exe().unwrap();
    let started = Instant::now();
    let mut child = Command::new(exe)
        .args([
            name,
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .spawn()
        .unwrap();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "{name}: {status}");
            eprintln!("{name}: exited 0 after {:?}", started.elapsed());
            return;
        }
        if started.elapsed() > BOUND * 2 {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{name} did not exit within {:?}", BOUND * 2);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(feature = "ash")]
#[test]
#[ignore = "run in a child process by an_endless_kernel_times_out_on_ash"]
fn spin_on_ash() {
    spin_times_out(Backend::Ash);
}

#[cfg(feature = "ash")]
#[test]
fn an_endless_kernel_times_out_on_ash() {
    in_child("spin_on_ash");
}

#[cfg(feature = "wgpu")]
#[test]
#[ignore = "run in a child process by an_endless_kernel_times_out_on_wgpu"]
fn spin_on_wgpu() {
    spin_times_out(Backend::Wgpu);
}

#[cfg(feature = "wgpu")]
#[test]
fn an_endless_kernel_times_out_on_wgpu() {
    in_child("spin_on_wgpu");
}

#[cfg(feature = "cuda")]
#[test]
#[ignore = "run in a child process by an_endless_kernel_times_out_on_cuda"]
fn spin_on_cuda() {
    spin_times_out(Backend::Cuda);
}

#[cfg(feature = "cuda")]
#[test]
fn an_endless_kernel_times_out_on_cuda() {
    in_child("spin_on_cuda");
}

// --- load ------------------------------------------------------------------------------------

/// `RGPU_LOAD_LAUNCHES`: launches per thread.
fn launches_per_thread() -> usize {
    std::env::var("RGPU_LOAD_LAUNCHES")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(1000)
}

/// 8 threads x `RGPU_LOAD_LAUNCHES` mixed launches on one device (host slices; device
/// buffers queued, then read; sizes that vary), every result checked exactly; thread 0 also
/// launches with a too-short output every 25 iterations, which is `Error::Argument` and
/// leaves the others alone. Then an allocation past the device's memory.
fn load(backend: Backend) {
    let Some(device) = open(backend, None) else {
        return;
    };
    if backend != Backend::Cpu && artifacts(backend).is_none() {
        return;
    }
    let per_thread = launches_per_thread();
    let started = Instant::now();
    std::thread::scope(|s| {
        for t in 0..8u32 {
            let device = &device;
            s.spawn(move || {
                let n = 1000 + 37 * t as usize;
                let x: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(t + 1)).collect();
                let x_dev = device.upload(&x).unwrap();
                let mut out_dev = device.zeros::<u32>(n).unwrap();
                for j in 0..per_thread {
                    let y: Vec<u32> = (0..n as u32).map(|i| i ^ j as u32).collect();
                    let count = (n - j % 17) as u32;
                    let expected = |i: usize| x[i].wrapping_add(y[i]);
                    match j % 3 {
                        0 => {
                            let mut out = vec![0u32; n];
                            add(device, count, &x, &y, &mut out).unwrap();
                            for (i, &v) in out.iter().enumerate() {
                                let want = if i < count as usize { expected(i) } else { 0 };
                                assert_eq!(v, want, "thread {t} launch {j} item {i}");
                            }
                        }
                        1 => {
                            // Queued on device buffers, read back.
                            add(device, count, &x_dev, &y, &mut out_dev).unwrap();
                            let out = out_dev.read().unwrap();
                            for (i, &v) in out.iter().enumerate().take(count as usize) {
                                assert_eq!(v, expected(i), "thread {t} launch {j} item {i}");
                            }
                        }
                        _ => {
                            // Two queued launches, the second reading the first's output.
                            let y_dev = device.upload(&y).unwrap();
                            let mut twice = device.zeros::<u32>(n).unwrap();
                            add(device, count, &x_dev, &y_dev, &mut out_dev).unwrap();
                            add(device, count, &out_dev, &y_dev, &mut twice).unwrap();
                            let out = twice.read().unwrap();
                            for (i, &v) in out.iter().enumerate().take(count as usize) {
                                let want = expected(i).wrapping_add(y[i]);
                                assert_eq!(v, want, "thread {t} launch {j} item {i}");
                            }
                        }
                    }
                    if t == 0 && j % 25 == 0 {
                        let mut short = vec![0u32; 10];
                        let e = add(device, count, &x, &y, &mut short).unwrap_err();
                        assert!(matches!(e, Error::Argument { param: "out", .. }), "{e}");
                    }
                }
            });
        }
    });
    eprintln!(
        "{backend}: 8 threads x {per_thread} launches in {:?}",
        started.elapsed()
    );
    too_much_memory(&device);
}

/// An allocation larger than the device is `Error::OutOfMemory` (or `TooLarge`), never a
/// panic or an abort, and the device works afterwards. `RGPU_LOAD_FILL=1`: also fill a GPU
/// with 256 MiB buffers until it refuses one (not the cpu: Linux gives zeroed host memory
/// lazily, so the buffers would take no memory until touched, and touching them would wake
/// the OOM killer, not return an error).
fn too_much_memory(device: &Device) {
    let backend = device.backend();
    let memory = device.info().memory.unwrap_or(1 << 40);
    let words = usize::try_from((memory * 2) / 4).unwrap_or(usize::MAX / 8);
    let e = device.zeros::<u32>(words).unwrap_err();
    assert!(
        matches!(e, Error::OutOfMemory { .. } | Error::TooLarge { .. }),
        "{backend}: {e:#?}"
    );
    eprintln!("{backend}: {e}");
    if std::env::var("RGPU_LOAD_FILL").as_deref() == Ok("1") && backend != Backend::Cpu {
        let mut held = Vec::new();
        let chunk = (256 << 20) / 4;
        let e = loop {
            match device.zeros::<u32>(chunk) {
                Ok(b) => held.push(b),
                Err(e) => break e,
            }
            assert!(held.len() < 100_000, "{backend}: never ran out of memory");
        };
        assert!(matches!(e, Error::OutOfMemory { .. }), "{backend}: {e:#?}");
        eprintln!("{backend}: full after {} MiB: {e}", held.len() * 256);
        drop(held);
    }
    let x = vec![3u32; 100];
    let mut out = vec![0u32; 100];
    add(device, 100, &x, &x, &mut out).unwrap();
    assert!(out.iter().all(|&v| v == 6), "{backend}: {out:?}");
}

#[test]
fn load_on_the_cpu() {
    load(Backend::Cpu);
}

#[cfg(feature = "ash")]
#[test]
fn load_on_ash() {
    load(Backend::Ash);
}

#[cfg(feature = "wgpu")]
#[test]
fn load_on_wgpu() {
    load(Backend::Wgpu);
}

#[cfg(feature = "cuda")]
#[test]
fn load_on_cuda() {
    load(Backend::Cuda);
}
