//! `Collective` through host memory: three cpu devices, and (where a Vulkan driver opens) a
//! cpu, an ash and a wgpu device together: every operation, element type and reduction
//! against plain Rust, and each kind of bad input as a clear error. The NCCL path over CUDA
//! devices is tests/cuda.rs's (a GPU machine).

use rgpu_runtime::{Backend, Buffer, Collective, Device, Error, ReduceOp, Reducible};

#[path = "common/exchange.rs"]
mod exchange;

/// Rank r's input: `len` elements from `value(r, i)`.
fn inputs<T: Reducible>(
    devices: &[Device],
    len: usize,
    value: impl Fn(usize, usize) -> T,
) -> Vec<Buffer<T>> {
    devices
        .iter()
        .enumerate()
        .map(|(r, d)| {
            d.upload(&(0..len).map(|i| value(r, i)).collect::<Vec<T>>())
                .unwrap()
        })
        .collect()
}

fn every_operation(devices: &[Device]) {
    let group = Collective::new(devices).unwrap();
    let n = devices.len();
    assert!(
        group.engine().starts_with("host memory"),
        "{}",
        group.engine()
    );
    let len = 6 * n + 3;
    // all_reduce on every type and op.
    for op in [ReduceOp::Sum, ReduceOp::Min, ReduceOp::Max] {
        let mut u = inputs(devices, len, |r, i| {
            (i as u32).wrapping_mul(2_654_435_761) ^ r as u32
        });
        let want: Vec<u32> = (0..len)
            .map(|i| {
                (0..n)
                    .map(|r| (i as u32).wrapping_mul(2_654_435_761) ^ r as u32)
                    .reduce(|a, b| u32::combine(op, a, b))
                    .unwrap()
            })
            .collect();
        group.all_reduce(&mut u, op).unwrap();
        for b in &u {
            assert!(b.read().unwrap() == want, "u32 {op:?}");
        }
        let mut f = inputs(devices, len, |r, i| i as f32 - 2.0 * r as f32);
        group.all_reduce(&mut f, op).unwrap();
        let want: Vec<f32> = (0..len)
            .map(|i| {
                (0..n)
                    .map(|r| i as f32 - 2.0 * r as f32)
                    .reduce(|a, b| f32::combine(op, a, b))
                    .unwrap()
            })
            .collect();
        assert!(f.iter().all(|b| b.read().unwrap() == want), "f32 {op:?}");
    }
    let mut i = inputs(devices, len, |r, i| i as i32 - 100 * r as i32);
    group.all_reduce(&mut i, ReduceOp::Min).unwrap();
    let low: Vec<i32> = (0..len).map(|i| i as i32 - 100 * (n as i32 - 1)).collect();
    assert!(i.iter().all(|b| b.read().unwrap() == low));
    let mut d = inputs(devices, len, |r, i| (i * r) as f64 * 0.5);
    group.all_reduce(&mut d, ReduceOp::Max).unwrap();
    let high: Vec<f64> = (0..len).map(|i| (i * (n - 1)) as f64 * 0.5).collect();
    assert!(d.iter().all(|b| b.read().unwrap() == high));
    // broadcast from the last rank.
    let mut b = inputs(devices, len, |r, i| (r * 1000 + i) as u32);
    group.broadcast(&mut b, n - 1).unwrap();
    let root: Vec<u32> = (0..len).map(|i| ((n - 1) * 1000 + i) as u32).collect();
    assert!(b.iter().all(|b| b.read().unwrap() == root));
    // all_gather: every rank's input, in rank order.
    let parts = inputs(devices, len, |r, i| (r * 1000 + i) as u32);
    let mut gathered: Vec<Buffer<u32>> =
        devices.iter().map(|d| d.zeros(len * n).unwrap()).collect();
    group.all_gather(&parts, &mut gathered).unwrap();
    let all: Vec<u32> = (0..n)
        .flat_map(|r| (0..len).map(move |i| (r * 1000 + i) as u32))
        .collect();
    assert!(gathered.iter().all(|b| b.read().unwrap() == all));
    // reduce_scatter: rank r gets part r of the sum.
    let whole = 4 * n;
    let summed = inputs(devices, whole, |r, i| (r + i) as u32);
    let mut scattered: Vec<Buffer<u32>> = devices.iter().map(|d| d.zeros(4).unwrap()).collect();
    group
        .reduce_scatter(&summed, &mut scattered, ReduceOp::Sum)
        .unwrap();
    for (r, out) in scattered.iter().enumerate() {
        let want: Vec<u32> = (4 * r..4 * r + 4)
            .map(|i| (0..n).map(|k| (k + i) as u32).sum())
            .collect();
        assert_eq!(out.read().unwrap(), want, "rank {r}");
    }
}

fn cpu_devices(n: usize) -> Vec<Device> {
    (0..n)
        .map(|_| Device::open(Backend::Cpu).unwrap())
        .collect()
}

#[test]
fn every_operation_through_host_memory_on_cpu_devices() {
    every_operation(&cpu_devices(3));
    every_operation(&cpu_devices(1));
}

#[test]
fn transfers_between_ranks_through_host_memory() {
    for n in [1, 2, 3] {
        let devices = cpu_devices(n);
        exchange::exchanges(&devices, &Collective::new(&devices).unwrap());
    }
}

#[test]
fn every_operation_across_backends() {
    let mut devices = cpu_devices(1);
    for backend in [Backend::Ash, Backend::Wgpu] {
        if !backend.is_built() {
            continue;
        }
        match Device::open(backend) {
            Ok(d) => devices.push(d),
            Err(e) => {
                assert!(
                    std::env::var("RGPU_REQUIRE_VULKAN").as_deref() != Ok("1"),
                    "RGPU_REQUIRE_VULKAN=1, but: {e}"
                );
                eprintln!("skipped {backend}: {e}");
            }
        }
    }
    every_operation(&devices);
    exchange::exchanges(&devices, &Collective::new(&devices).unwrap());
}

#[test]
fn bad_input_is_a_clear_error() {
    let devices = cpu_devices(2);
    let group = Collective::new(&devices).unwrap();
    let text = |e: Error| e.to_string();
    assert!(Collective::new(&[]).is_err());
    let mut one = vec![devices[0].zeros::<u32>(4).unwrap()];
    let e = text(group.all_reduce(&mut one, ReduceOp::Sum).unwrap_err());
    assert!(
        e.contains("1 buffers for 2 devices: pass one per device, in rank order"),
        "{e}"
    );
    let mut swapped = vec![
        devices[1].zeros::<u32>(4).unwrap(),
        devices[0].zeros(4).unwrap(),
    ];
    let e = group.all_reduce(&mut swapped, ReduceOp::Sum).unwrap_err();
    assert!(matches!(e, Error::WrongDevice { .. }), "{e}");
    assert!(text(e).contains("rank 0's cpu device"));
    let mut uneven = vec![
        devices[0].zeros::<u32>(4).unwrap(),
        devices[1].zeros(5).unwrap(),
    ];
    let e = text(group.all_reduce(&mut uneven, ReduceOp::Max).unwrap_err());
    assert!(
        e.contains("rank 1's buffer has 5 elements where 4 are needed"),
        "{e}"
    );
    let mut even = vec![
        devices[0].zeros::<u32>(4).unwrap(),
        devices[1].zeros(4).unwrap(),
    ];
    let e = text(group.broadcast(&mut even, 2).unwrap_err());
    assert!(e.contains("rank 2 of 2 devices"), "{e}");
    let odd = vec![
        devices[0].zeros::<u32>(3).unwrap(),
        devices[1].zeros(3).unwrap(),
    ];
    let mut outs = vec![
        devices[0].zeros::<u32>(1).unwrap(),
        devices[1].zeros(1).unwrap(),
    ];
    let e = text(
        group
            .reduce_scatter(&odd, &mut outs, ReduceOp::Sum)
            .unwrap_err(),
    );
    assert!(
        e.contains("3 elements do not split into 2 equal parts"),
        "{e}"
    );
    let mut short = vec![
        devices[0].zeros::<u32>(4).unwrap(),
        devices[1].zeros(4).unwrap(),
    ];
    let e = text(group.all_gather(&even, &mut short).unwrap_err());
    assert!(e.contains("where 8 are needed"), "{e}");
}

#[test]
fn a_job_of_several_processes_needs_nccl_and_says_what_to_set() {
    let cpu = Device::open(Backend::Cpu).unwrap();
    let e = Collective::join(&cpu, 0, 2, "00")
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("collectives across processes need NCCL: join with a CUDA device"),
        "{e}"
    );
    let e = Collective::join(&cpu, 2, 2, "00")
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("rank 2 of a job of 2: ranks count from 0"),
        "{e}"
    );
    // The variables: only this test reads or sets them.
    for var in [
        rgpu_runtime::NCCL_ID_VAR,
        "RANK",
        "WORLD_SIZE",
        "OMPI_COMM_WORLD_RANK",
        "PMI_RANK",
    ] {
        std::env::remove_var(var);
    }
    let e = Collective::from_env(&cpu).err().unwrap().to_string();
    assert!(e.contains("RGPU_NCCL_ID is not set"), "{e}");
    std::env::set_var(rgpu_runtime::NCCL_ID_VAR, "ab");
    let e = Collective::from_env(&cpu).err().unwrap().to_string();
    assert!(
        e.contains("set RANK and WORLD_SIZE (as torchrun does)"),
        "{e}"
    );
    std::env::set_var("RANK", "one");
    std::env::set_var("WORLD_SIZE", "2");
    let e = Collective::from_env(&cpu).err().unwrap().to_string();
    assert!(e.contains("RANK=\"one\" is not a number"), "{e}");
    std::env::set_var("RANK", "1");
    let e = Collective::from_env(&cpu).err().unwrap().to_string();
    assert!(e.contains("need NCCL"), "{e}");
    if !Backend::Cuda.is_built() {
        let e = Collective::unique_id().unwrap_err();
        assert!(matches!(e, Error::NotBuilt { .. }), "{e}");
    }
}
