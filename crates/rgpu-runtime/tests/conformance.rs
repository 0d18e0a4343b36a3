//! The runtime's conformance suite: each behaviour every GPU backend must have, written once
//! and run on each one built into the test binary (cuda, wgpu, ash: a module of the same
//! tests per backend, as wgpu's `#[gpu_test]` harness runs its tests on every adapter).
//! The kernels are FIXTURES (`fixtures`) launched through `launch()` as a generated launcher
//! would: hand-written PTX on cuda, GLSL compiled to SPIR-V at test time on Vulkan (lavapipe
//! here, any Vulkan GPU elsewhere). What only one backend has stays in its own file
//! (cuda.rs: copies between GPUs, NCCL, SASS; vulkan.rs: no driver, auto's choice); the cpu
//! backend runs host functions, not artifacts (cpu_executor.rs).
//!
//! A backend that cannot open here (no driver, no glslangValidator) is skipped and says so,
//! unless `RGPU_REQUIRE_CUDA=1` or `RGPU_REQUIRE_VULKAN=1` (a machine that has it) makes
//! that a failure.
#![cfg(any(feature = "cuda", feature = "wgpu", feature = "ash"))]

#[path = "common/child.rs"]
mod child;
mod fixtures;

use std::sync::OnceLock;

use rgpu_runtime::__private::{launch, Access, Arg, Artifact, BufferInfo, KernelInfo, Mode};
use rgpu_runtime::{Backend, Device, Error, Input, InputOutput};

use child::run_self;
use fixtures::{saxpy, SAXPY};

/// A kernel that no embedded module has.
static NOT_EMBEDDED: KernelInfo = KernelInfo {
    name: "not_embedded",
    ..SAXPY
};

static REVERSE_BUFFERS: [BufferInfo; 1] = [BufferInfo {
    name: "data",
    access: Access::ReadWrite,
    elem_size: 4,
    item: false,
}];

/// `reverse_tiles(data: &mut [u32])`, a groups kernel with 1 KiB of workgroup memory.
static REVERSE_TILES: KernelInfo = KernelInfo {
    name: "reverse_tiles",
    threads: 256,
    mode: Mode::Groups,
    buffers: &REVERSE_BUFFERS,
    params_size: 8,
    shared_bytes: 1024,
    places: &[],
};

/// The variable that makes a skip of `backend` a failure.
fn required(backend: Backend) -> &'static str {
    match backend {
        Backend::Cuda => "RGPU_REQUIRE_CUDA",
        _ => "RGPU_REQUIRE_VULKAN",
    }
}

fn skip(backend: Backend, why: impl std::fmt::Display) {
    let var = required(backend);
    assert!(
        std::env::var(var).as_deref() != Ok("1"),
        "{var}=1, but {backend}: {why}"
    );
    eprintln!("skipped {backend}: {why}");
}

/// The FIXTURE artifacts of `backend`: the PTX module, or the SPIR-V modules (one linked
/// module holding two entry points, rust-gpu's default, and one with its own).
fn artifacts(backend: Backend) -> Option<&'static [Artifact]> {
    if backend == Backend::Cuda {
        return Some(&fixtures::PTX_ARTIFACTS);
    }
    static SPIRV: OnceLock<Option<&'static [Artifact]>> = OnceLock::new();
    *SPIRV.get_or_init(|| {
        if !fixtures::have_spirv_tools() {
            skip(
                backend,
                "glslangValidator, spirv-val or spirv-link is not installed",
            );
            return None;
        }
        let saxpy = fixtures::glsl_fixture_spirv("saxpy", fixtures::SAXPY_GLSL);
        let reverse = fixtures::glsl_fixture_spirv("reverse_tiles", fixtures::REVERSE_TILES_GLSL);
        let linked = fixtures::link_fixtures("kernels", &[saxpy, reverse]);
        let add = fixtures::glsl_fixture_spirv("add", fixtures::ADD_GLSL);
        let table = vec![
            fixtures::spirv_artifact(&linked, &["saxpy", "reverse_tiles"]),
            fixtures::spirv_artifact(&add, &["add"]),
        ];
        Some(Box::leak(table.into_boxed_slice()))
    })
}

fn open(backend: Backend) -> Option<(Device, &'static [Artifact])> {
    let artifacts = artifacts(backend)?;
    match Device::open(backend) {
        Ok(device) => Some((device, artifacts)),
        Err(e @ Error::Unavailable { .. }) => {
            skip(backend, e);
            None
        }
        Err(e) => panic!("opening {backend}: {e}"),
    }
}

fn reverse_tiles(
    device: &Device,
    artifacts: &'static [Artifact],
    groups: u32,
    data: &mut (impl InputOutput<u32> + ?Sized),
) -> Result<(), Error> {
    launch(
        device,
        &REVERSE_TILES,
        artifacts,
        groups,
        &mut [Arg::InOut(data.dst())],
        &|lens| bytemuck::cast_slice(&[groups, lens[0]]).to_vec(),
    )
}

fn xs(n: usize) -> Vec<f32> {
    (0..n).map(|i| i as f32).collect()
}

fn saxpy_on_host_slices(backend: Backend) {
    let Some((device, artifacts)) = open(backend) else {
        return;
    };
    let n = 1000;
    let x = xs(n);
    let mut y = vec![1.0f32; n];
    saxpy(&device, artifacts, n as u32, &x, &mut y, 2.0).unwrap();
    assert!(y
        .iter()
        .enumerate()
        .all(|(i, &v)| v == 2.0 * i as f32 + 1.0));
    // A slice of a Vec works the same (and leaves the rest alone).
    saxpy(&device, artifacts, 10, &x[..10], &mut y[..10], -1.0).unwrap();
    assert_eq!(y[9], 10.0);
    assert_eq!(y[10], 21.0);
}

fn saxpy_on_device_buffers(backend: Backend) {
    let Some((device, artifacts)) = open(backend) else {
        return;
    };
    let n = 100_003;
    let x = device.upload(&xs(n)).unwrap();
    let mut y = device.zeros::<f32>(n).unwrap();
    assert_eq!((x.len(), y.len(), y.backend()), (n, n, backend));
    saxpy(&device, artifacts, n as u32, &x, &mut y, 3.0).unwrap();
    let out = y.read().unwrap();
    assert!(out.iter().enumerate().all(|(i, &v)| v == 3.0 * i as f32));
    // Write, launch, read_into.
    y.write(&vec![1.0; n]).unwrap();
    saxpy(&device, artifacts, n as u32, &x, &mut y, 1.0).unwrap();
    let mut back = vec![0.0f32; n];
    y.read_into(&mut back).unwrap();
    assert!(back.iter().enumerate().all(|(i, &v)| v == i as f32 + 1.0));
    // A GPU buffer has no host view; the wrong length is refused.
    assert!(matches!(Input::host(&x), Err(Error::WrongDevice { .. })));
    assert!(y.read_into(&mut [0.0; 3]).is_err());
}

fn many_queued_launches_then_one_read(backend: Backend) {
    let Some((device, artifacts)) = open(backend) else {
        return;
    };
    let n = 4099;
    let x = device.upload(&xs(n)).unwrap();
    let mut y = device.upload(&vec![1.0f32; n]).unwrap();
    let launches = 100;
    let (_, ms) = device
        .timed(|| {
            for _ in 0..launches {
                saxpy(&device, artifacts, n as u32, &x, &mut y, 2.0)?;
            }
            Ok(())
        })
        .unwrap();
    if let Some(ms) = ms {
        assert!(ms > 0.0, "{ms}");
    }
    // Each launch saw the one before it: 1 + 2 * launches * i.
    let out = y.read().unwrap();
    for (i, &v) in out.iter().enumerate() {
        assert_eq!(v, 1.0 + 2.0 * launches as f32 * i as f32, "element {i}");
    }
    device.sync().unwrap();
}

fn a_groups_kernel_with_shared_memory_and_barriers(backend: Backend) {
    let Some((device, artifacts)) = open(backend) else {
        return;
    };
    let groups = 37u32;
    let data: Vec<u32> = (0..groups * 256).collect();
    let mut buffer = device.upload(&data).unwrap();
    reverse_tiles(&device, artifacts, groups, &mut buffer).unwrap();
    let mut host = data.clone();
    reverse_tiles(&device, artifacts, groups, &mut host).unwrap();
    let out = buffer.read().unwrap();
    for (g, chunk) in out.chunks(256).enumerate() {
        let expected: Vec<u32> = (0..256).rev().map(|t| g as u32 * 256 + t).collect();
        assert_eq!(chunk, expected, "workgroup {g}");
    }
    assert_eq!(host, out);
    // Twice is the identity.
    reverse_tiles(&device, artifacts, groups, &mut buffer).unwrap();
    assert_eq!(buffer.read().unwrap(), data);
}

fn one_buffer_as_two_inputs(backend: Backend) {
    let Some((device, artifacts)) = open(backend) else {
        return;
    };
    let n = 1000u32;
    let x = device.upload(&(0..n).collect::<Vec<u32>>()).unwrap();
    let mut out = device.zeros::<u32>(n as usize).unwrap();
    launch(
        &device,
        &fixtures::ADD,
        artifacts,
        n,
        &mut [Arg::In(x.src()), Arg::In(x.src()), Arg::InOut(out.dst())],
        &|lens| bytemuck::cast_slice(&[n, lens[0], lens[1], lens[2]]).to_vec(),
    )
    .unwrap();
    let doubled: Vec<u32> = (0..n).map(|i| 2 * i).collect();
    assert_eq!(out.read().unwrap(), doubled);
}

fn a_zero_length_launch(backend: Backend) {
    let Some((device, artifacts)) = open(backend) else {
        return;
    };
    let mut empty: Vec<f32> = Vec::new();
    saxpy(&device, artifacts, 0, &[][..], &mut empty, 2.0).unwrap();
    let x = device.upload::<f32>(&[]).unwrap();
    let mut y = device.zeros::<f32>(0).unwrap();
    assert!(x.is_empty() && y.is_empty());
    saxpy(&device, artifacts, 0, &x, &mut y, 2.0).unwrap();
    assert_eq!(y.read().unwrap(), Vec::<f32>::new());
}

fn a_missing_entry_point_names_the_build(backend: Backend) {
    let Some((device, artifacts)) = open(backend) else {
        return;
    };
    let (x, mut y) = (vec![0.0f32; 4], vec![0.0f32; 4]);
    let e = launch(
        &device,
        &NOT_EMBEDDED,
        artifacts,
        4,
        &mut [Arg::In(x.src()), Arg::InOut(y.dst())],
        &|_| vec![0; 16],
    )
    .unwrap_err();
    assert!(matches!(e, Error::MissingArtifact { .. }), "{e}");
    assert!(
        e.to_string()
            .ends_with(&format!(": run rgpu build --backend {backend}")),
        "{e}"
    );
    // A short item buffer is refused before anything reaches the GPU.
    let e = saxpy(&device, artifacts, 8, &x, &mut y, 1.0).unwrap_err();
    assert_eq!(
        e.to_string(),
        "kernel `saxpy`, parameter `x`: 4 elements, the launch needs at least 8"
    );
}

fn buffers_of_another_device_are_refused(backend: Backend) {
    let (Some((a, artifacts)), Some((b, _))) = (open(backend), open(backend)) else {
        return;
    };
    let x = b.upload(&[1.0f32; 4]).unwrap();
    let mut y = vec![0.0f32; 4];
    let e = saxpy(&a, artifacts, 4, &x, &mut y, 1.0).unwrap_err();
    assert!(matches!(e, Error::WrongDevice { .. }), "{e}");
    // The cpu backend refuses GPU buffers the same way.
    let mut z = b.upload(&[0.0f32; 4]).unwrap();
    assert!(matches!(z.host_mut(), Err(Error::WrongDevice { .. })));
}

fn the_device_describes_itself(backend: Backend) {
    let Some((device, artifacts)) = open(backend) else {
        return;
    };
    assert_eq!(device.backend(), backend);
    if backend == Backend::Cuda {
        // After a launch it names the module it runs: the fixture's PTX, compiled by the
        // driver for this GPU.
        let (x, mut y) = (vec![1.0f32; 4], vec![0.0f32; 4]);
        saxpy(&device, artifacts, 4, &x, &mut y, 1.0).unwrap();
        let description = device.description();
        assert!(description.contains("PTX sm_50 (ISA 7.0)"), "{description}");
        return;
    }
    let description = device.description();
    assert!(description.contains("Vulkan"), "{description}");
    if backend == Backend::Wgpu {
        let path = match std::env::var("RGPU_WGPU_SHADER").as_deref() {
            Ok("naga") => "SPIR-V via naga",
            _ => "SPIR-V ",
        };
        assert!(description.contains(path), "{description}");
    }
}

fn the_device_facts_give_the_subgroup_size(backend: Backend) {
    let Some((device, _)) = open(backend) else {
        return;
    };
    let facts = device.facts();
    assert_eq!(facts.backend, backend);
    let (min, max) = (facts.subgroup_min.unwrap(), facts.subgroup_max.unwrap());
    assert!(min.is_power_of_two() && min <= max, "{facts:?}");
    if let Some(size) = facts.subgroup_size {
        assert!((min..=max).contains(&size), "{facts:?}");
    }
    if backend == Backend::Ash {
        // Vulkan 1.1's subgroupSize is always there.
        assert!(facts.subgroup_size.is_some(), "{facts:?}");
    }
    if backend == Backend::Cuda {
        // A warp, and the GPU's streaming multiprocessors.
        assert_eq!(
            (facts.subgroup_size, facts.subgroup_min, facts.subgroup_max),
            (Some(32), Some(32), Some(32)),
            "{facts:?}"
        );
        assert!(facts.compute_units.is_some_and(|n| n > 0), "{facts:?}");
        assert_eq!(facts.compute_unit, "SM");
    }
    assert_eq!(facts.compute_unit.is_empty(), facts.compute_units.is_none());
    if device.description().contains("llvmpipe") {
        // lavapipe: subgroups of 8 (vulkaninfo: subgroupSize = min = max = 8), and no
        // extension that counts its cores.
        assert_eq!(
            (facts.subgroup_size, facts.subgroup_min, facts.subgroup_max),
            (Some(8), Some(8), Some(8)),
            "{facts:?}"
        );
        assert_eq!(facts.compute_units, None, "{facts:?}");
    }
}

fn kernel_stats_describe_each_launched_kernel_or_say_why_not(backend: Backend) {
    let Some((device, artifacts)) = open(backend) else {
        return;
    };
    if backend == Backend::Cuda {
        assert_eq!(device.kernel_stats().unwrap(), []); // nothing launched yet
    }
    let n = 256;
    let x = xs(n);
    let mut y = vec![1.0f32; n];
    saxpy(&device, artifacts, n as u32, &x, &mut y, 2.0).unwrap();
    let mut data: Vec<u32> = (0..512).collect();
    reverse_tiles(&device, artifacts, 2, &mut data).unwrap();
    match device.kernel_stats() {
        Ok(list) => {
            let names: Vec<&str> = list.iter().map(|k| k.kernel).collect();
            assert_eq!(names, ["saxpy", "reverse_tiles"]);
            for k in &list {
                eprintln!("{backend} {}: {:?}", k.kernel, k.stats);
                match backend {
                    Backend::Ash => {
                        assert!(!k.stats.is_empty(), "{k:?}");
                        assert_eq!(k.source, "VK_KHR_pipeline_executable_properties");
                    }
                    Backend::Cuda => {
                        assert!(k.registers.is_some_and(|r| r > 0), "{k:?}");
                        assert_eq!(k.local_bytes, Some(0), "{k:?}");
                        assert_eq!(k.subgroup_size, Some(32));
                        assert_eq!(k.source, "cuFuncGetAttribute");
                        // The fixture's PTX is `.target sm_50`; the binary is compiled for
                        // this GPU (90 on an H100 or H200).
                        let version = |name| k.get(name).and_then(|s| s.value.as_u64());
                        assert_eq!(version("PTX_VERSION"), Some(50), "{k:?}");
                        assert!(version("BINARY_VERSION").is_some_and(|v| v >= 50), "{k:?}");
                    }
                    _ => panic!("{backend} cannot report statistics"),
                }
            }
            if backend == Backend::Cuda {
                assert_eq!(list[0].shared_bytes, Some(0));
                // The fixture's `.shared .b8 tile[1024]`.
                assert_eq!(list[1].shared_bytes, Some(1024));
            }
        }
        Err(e) => {
            let text = e.to_string();
            assert!(matches!(e, Error::NoKernelStats { .. }), "{text}");
            assert!(!text.contains("  "), "{text}");
            let prefix = format!("{backend}: no per-kernel statistics: ");
            assert!(text.starts_with(&prefix), "{text}");
            match backend {
                Backend::Wgpu => assert!(text.contains("wgpu 30 has no API"), "{text}"),
                _ => assert!(
                    text.contains("lacks VK_KHR_pipeline_executable_properties")
                        || text.contains("without its pipelineExecutableInfo feature"),
                    "{text}"
                ),
            }
            if backend == Backend::Ash && device.description().contains("llvmpipe") {
                eprintln!("{text}");
                assert!(
                    text.contains("the Vulkan driver 'llvmpipe' lacks"),
                    "{text}"
                );
            }
        }
    }
    // Asking compiled nothing that launches use: they still run, and right.
    saxpy(&device, artifacts, n as u32, &x, &mut y, 1.0).unwrap();
    assert!(y
        .iter()
        .enumerate()
        .all(|(i, &v)| v == 3.0 * i as f32 + 1.0));
}

/// Not a pattern a copy could get right by accident.
fn pattern(len: usize, seed: u32) -> Vec<u32> {
    (0..len as u32)
        .map(|i| (i ^ seed).wrapping_mul(2_654_435_761) ^ 0x5bd1_e995)
        .collect()
}

fn transfers_round_trip(backend: Backend) {
    let Some((device, _)) = open(backend) else {
        return;
    };
    // Up to past two staging chunks (8 MiB each), ending mid-chunk.
    for len in [0usize, 1, 1000, (1 << 20) + 7, (5 << 20) + 3] {
        let data = pattern(len, 1);
        let mut source = data.clone();
        let mut buffer = device.upload(&source).unwrap();
        // The upload has its own copy: changing the source changes nothing.
        source.iter_mut().for_each(|v| *v = !*v);
        assert!(buffer.read().unwrap() == data, "{len}: upload, read");
        let other = pattern(len, 2);
        buffer.write(&other).unwrap();
        let mut out = vec![7u32; len];
        buffer.read_into(&mut out).unwrap();
        assert!(out == other, "{len}: write, read_into");
    }
    // Byte buffers that are no whole number of words.
    for len in [3usize, (8 << 20) + 1, (16 << 20) + 5] {
        let bytes: Vec<u8> = (0..len).map(|i| (i * 31 % 253) as u8).collect();
        let buffer = device.upload(&bytes).unwrap();
        assert!(buffer.read().unwrap() == bytes, "{len} bytes");
    }
}

/// Parts of a buffer: reads and writes of element ranges, in staging chunks and not, and
/// of byte ranges that start or end inside a word (whose other bytes stay as they were).
fn ranges_read_and_write_part_of_a_buffer(backend: Backend) {
    let Some((device, artifacts)) = open(backend) else {
        return;
    };
    let len = (5 << 20) + 3;
    let data = pattern(len, 3);
    let mut buffer = device.upload(&data).unwrap();
    for (a, b) in [
        (0, 0),
        (0, 1),
        (7, 1000),
        (len - 1, len),
        (1 << 20, (3 << 20) + 1),
    ] {
        assert!(buffer.read_range(a..b).unwrap() == data[a..b], "{a}..{b}");
    }
    let mut expected = data.clone();
    for (at, n, seed) in [
        (5, 3, 4),
        (len - 2, 2, 5),
        ((1 << 20) + 1, (2 << 20) + 9, 6),
    ] {
        let part = pattern(n, seed);
        buffer.write_at(at, &part).unwrap();
        expected[at..at + n].copy_from_slice(&part);
    }
    assert!(buffer.read().unwrap() == expected);
    // A write lands between the launches queued around it.
    let ones = device.upload(&vec![1.0f32; 1000]).unwrap();
    let mut y = device.zeros::<f32>(1000).unwrap();
    saxpy(&device, artifacts, 1000, &ones, &mut y, 1.0).unwrap();
    y.write_at(10, &[100.0; 5]).unwrap();
    saxpy(&device, artifacts, 1000, &ones, &mut y, 1.0).unwrap();
    let y = y.read_range(8..17).unwrap();
    assert_eq!(y, [2.0, 2.0, 101.0, 101.0, 101.0, 101.0, 101.0, 2.0, 2.0]);
    // Bytes: 11 of them, so the last word is partial.
    let bytes: Vec<u8> = (0..11).collect();
    let mut b = device.upload(&bytes).unwrap();
    assert_eq!(b.read_range(3..6).unwrap(), [3, 4, 5]);
    assert_eq!(b.read_range(9..).unwrap(), [9, 10]);
    b.write_at(1, &[21]).unwrap();
    b.write_at(4, &[24, 25]).unwrap();
    b.write_at(6, &[26, 27, 28, 29, 30]).unwrap();
    b.write_at(2, &[22, 23]).unwrap();
    assert_eq!(
        b.read().unwrap(),
        [0, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30]
    );
    let e = b.read_range(5..12).unwrap_err();
    assert!(
        e.to_string().contains("elements 5..12 are not inside"),
        "{e}"
    );
}

fn uploads_and_writes_queue_with_launches(backend: Backend) {
    let Some((device, artifacts)) = open(backend) else {
        return;
    };
    // More small uploads than the staging memory holds at once, none read in between.
    let n = (1 << 16) + 3;
    let buffers: Vec<_> = (0..300)
        .map(|k| device.upload(&pattern(n, k)).unwrap())
        .collect();
    for (k, b) in buffers.iter().enumerate() {
        assert!(b.read().unwrap() == pattern(n, k as u32), "upload {k}");
    }
    // Each write lands after the launch before it and before the one after it.
    let ones = device.upload(&vec![1.0f32; n]).unwrap();
    let mut y = device.zeros::<f32>(n).unwrap();
    for k in 0..50 {
        y.write(&vec![k as f32 * 10.0; n]).unwrap();
        saxpy(&device, artifacts, n as u32, &ones, &mut y, 1.0).unwrap();
    }
    assert!(y.read().unwrap().iter().all(|&v| v == 491.0));
    // Large host slices through a launch: uploaded and downloaded in chunks.
    let n = (3 << 20) + 5;
    let x = xs(n);
    let mut host = vec![1.0f32; n];
    saxpy(&device, artifacts, n as u32, &x, &mut host, 2.0).unwrap();
    assert!(host
        .iter()
        .enumerate()
        .all(|(i, &v)| v == 2.0 * i as f32 + 1.0));
    let a: Vec<u32> = (0..n as u32).collect();
    let mut sum = vec![0u32; n];
    launch(
        &device,
        &fixtures::ADD,
        artifacts,
        n as u32,
        &mut [Arg::In(a.src()), Arg::In(a.src()), Arg::InOut(sum.dst())],
        &|lens| bytemuck::cast_slice(&[n as u32, lens[0], lens[1], lens[2]]).to_vec(),
    )
    .unwrap();
    assert!(sum.iter().enumerate().all(|(i, &v)| v == 2 * i as u32));
}

/// A launch on device buffers binds what its buffers are now, whatever launches before it
/// bound (the backends keep a launch's descriptor set / bind group for the next launch on
/// the same buffers): other buffers, the same buffers in other roles, buffers dropped and
/// new ones made in their place (the driver may give them the same handles), inside one
/// batch and across batches.
fn kept_bindings_follow_the_buffers(backend: Backend) {
    let Some((device, artifacts)) = open(backend) else {
        return;
    };
    let n = 1000;
    let ones = device.upload(&vec![1.0f32; n]).unwrap();
    let twos = device.upload(&vec![2.0f32; n]).unwrap();
    let mut y = device.zeros::<f32>(n).unwrap();
    let mut z = device.zeros::<f32>(n).unwrap();
    saxpy(&device, artifacts, n as u32, &ones, &mut y, 1.0).unwrap(); // y = 1
    saxpy(&device, artifacts, n as u32, &twos, &mut y, 1.0).unwrap(); // y = 3
    saxpy(&device, artifacts, n as u32, &ones, &mut z, 5.0).unwrap(); // z = 5
    saxpy(&device, artifacts, n as u32, &ones, &mut y, 1.0).unwrap(); // y = 4, as the first
    assert!(y.read().unwrap().iter().all(|&v| v == 4.0));
    assert!(z.read().unwrap().iter().all(|&v| v == 5.0));
    // The same buffers in other roles: z is the input now.
    saxpy(&device, artifacts, n as u32, &z, &mut y, 2.0).unwrap(); // y = 14
    assert!(y.read().unwrap().iter().all(|&v| v == 14.0));
    // Drop buffers and make new ones of the same size, again and again, each launched on
    // right after it was made: queued in one batch, then read (the old buffers are freed
    // only after the batch, their kept bindings with them).
    for round in 0..3u32 {
        let mut outs = Vec::new();
        for k in 0..40u32 {
            let x = device.upload(&vec![(k + round) as f32; n]).unwrap();
            let mut out = device.zeros::<f32>(n).unwrap();
            saxpy(&device, artifacts, n as u32, &x, &mut out, 1.0).unwrap();
            saxpy(&device, artifacts, n as u32, &ones, &mut out, 1.0).unwrap();
            outs.push(out);
            drop(x);
            if k % 3 == 0 {
                drop(outs.remove(0));
            }
        }
        let first = 40 - outs.len() as u32;
        for (i, out) in outs.iter().enumerate() {
            let want = (first + i as u32 + round) as f32 + 1.0;
            assert!(
                out.read().unwrap().iter().all(|&v| v == want),
                "{backend}: round {round}, buffer {}",
                first + i as u32
            );
        }
    }
    // Across batches: each launch read back before the next buffer is made.
    for k in 0..20u32 {
        let x = device.upload(&vec![k as f32; n]).unwrap();
        let mut out = device.zeros::<f32>(n).unwrap();
        saxpy(&device, artifacts, n as u32, &x, &mut out, 3.0).unwrap();
        assert!(
            out.read().unwrap().iter().all(|&v| v == 3.0 * k as f32),
            "{k}"
        );
    }
    // Host slices and device buffers mixed, then device buffers alone again.
    let mut host = vec![1.0f32; n];
    saxpy(&device, artifacts, n as u32, &twos, &mut host, 1.0).unwrap();
    assert!(host.iter().all(|&v| v == 3.0));
    saxpy(&device, artifacts, n as u32, &host[..], &mut y, 1.0).unwrap(); // y = 17
    saxpy(&device, artifacts, n as u32, &twos, &mut y, 1.0).unwrap(); // y = 19
    assert!(y.read().unwrap().iter().all(|&v| v == 19.0));
}

macro_rules! conformance {
    ($module:ident, $backend:expr) => {
        mod $module {
            use super::*;

            #[test]
            fn saxpy_on_host_slices() {
                super::saxpy_on_host_slices($backend);
            }

            #[test]
            fn saxpy_on_device_buffers() {
                super::saxpy_on_device_buffers($backend);
            }

            #[test]
            fn many_queued_launches_then_one_read() {
                super::many_queued_launches_then_one_read($backend);
            }

            #[test]
            fn a_groups_kernel_with_shared_memory_and_barriers() {
                super::a_groups_kernel_with_shared_memory_and_barriers($backend);
            }

            #[test]
            fn one_buffer_as_two_inputs() {
                super::one_buffer_as_two_inputs($backend);
            }

            #[test]
            fn a_zero_length_launch() {
                super::a_zero_length_launch($backend);
            }

            #[test]
            fn a_missing_entry_point_names_the_build() {
                super::a_missing_entry_point_names_the_build($backend);
            }

            #[test]
            fn buffers_of_another_device_are_refused() {
                super::buffers_of_another_device_are_refused($backend);
            }

            #[test]
            fn the_device_describes_itself() {
                super::the_device_describes_itself($backend);
            }

            #[test]
            fn the_device_facts_give_the_subgroup_size() {
                super::the_device_facts_give_the_subgroup_size($backend);
            }

            #[test]
            fn kernel_stats_describe_each_launched_kernel_or_say_why_not() {
                super::kernel_stats_describe_each_launched_kernel_or_say_why_not($backend);
            }

            #[test]
            fn transfers_round_trip() {
                super::transfers_round_trip($backend);
            }

            #[test]
            fn ranges_read_and_write_part_of_a_buffer() {
                super::ranges_read_and_write_part_of_a_buffer($backend);
            }

            #[test]
            fn uploads_and_writes_queue_with_launches() {
                super::uploads_and_writes_queue_with_launches($backend);
            }

            #[test]
            fn kept_bindings_follow_the_buffers() {
                super::kept_bindings_follow_the_buffers($backend);
            }
        }
    };
}

#[cfg(feature = "cuda")]
conformance!(cuda, Backend::Cuda);
#[cfg(feature = "wgpu")]
conformance!(wgpu, Backend::Wgpu);
#[cfg(feature = "ash")]
conformance!(ash, Backend::Ash);

#[cfg(feature = "wgpu")]
#[test]
fn the_wgpu_tests_pass_through_naga_too() {
    if std::env::var_os("RGPU_WGPU_SHADER").is_some() {
        return; // the child of this test, or a run that forces one path
    }
    if open(Backend::Wgpu).is_none() {
        return;
    }
    run_self("wgpu::", &[("RGPU_WGPU_SHADER", "naga")], &[]);
}

/// Launches, reads and chunked transfers again with waits that poll before they block (on
/// lavapipe a wait blocks at once unless `RGPU_SPIN_WAIT_US` says otherwise:
/// common/spin.rs).
#[test]
fn launches_and_transfers_pass_with_polling_waits() {
    if std::env::var_os("RGPU_SPIN_WAIT_US").is_some() {
        return; // the child of this test
    }
    let built = [Backend::Cuda, Backend::Wgpu, Backend::Ash];
    if !built
        .iter()
        .any(|&b| b.is_built() && artifacts(b).is_some())
    {
        return;
    }
    for filter in ["kept_bindings_follow_the_buffers", "transfers_round_trip"] {
        run_self(filter, &[("RGPU_SPIN_WAIT_US", "300")], &[]);
    }
}
