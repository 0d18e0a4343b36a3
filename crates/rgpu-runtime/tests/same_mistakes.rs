//! The same mistake reads the same on every backend built in, but for the backend's name:
//! the cpu always, wgpu and ash on whatever Vulkan driver is here (lavapipe on CI), cuda
//! where a GPU is. Every check below fails before any kernel code is needed, so no kernel
//! is embedded: the launches go through `launch()` (the GPU backends) or the cpu path, as a
//! `#[rgpu::kernel]` launcher does.
//!
//! A GPU backend that cannot open here is skipped with a line saying why, unless
//! `RGPU_REQUIRE_VULKAN=1` (ash and wgpu) makes that a failure.

mod fixtures;

use rgpu_runtime::__private::{check_lengths, launch, Arg, KernelInfo};
use rgpu_runtime::{Backend, Device, Error, Input, InputOutput};

/// `saxpy(a: f32, #[item] x: &f32, #[item] y: &mut f32)`, an items kernel (never embedded).
static SAXPY: KernelInfo = fixtures::saxpy_info(64);

/// What `#[rgpu::kernel]` generates for `kernel` (the cpu path runs plain SAXPY).
fn saxpy_as(
    kernel: &'static KernelInfo,
    device: &Device,
    count: u32,
    x: &(impl Input<f32> + ?Sized),
    y: &mut (impl InputOutput<f32> + ?Sized),
    a: f32,
) -> Result<(), Error> {
    if device.backend() == Backend::Cpu {
        let x: &[f32] = x.host()?;
        let y: &mut [f32] = y.host_mut()?;
        check_lengths(kernel, count, &[x.len(), y.len()])?;
        for (y, x) in y.iter_mut().zip(x).take(count as usize) {
            *y += a * x;
        }
        return Ok(());
    }
    launch(
        device,
        kernel,
        &[],
        count,
        &mut [Arg::In(x.src()), Arg::InOut(y.dst())],
        &|lens| {
            let mut params = bytemuck::cast_slice(&[count, lens[0], lens[1], a.to_bits()]).to_vec();
            params.resize(kernel.params_size as usize, 0);
            params
        },
    )
}

/// Every backend built in that opens here.
fn devices() -> Vec<Device> {
    let mut devices = Vec::new();
    for backend in [Backend::Cpu, Backend::Cuda, Backend::Wgpu, Backend::Ash] {
        if !backend.is_built() {
            continue;
        }
        match Device::open(backend) {
            Ok(device) => devices.push(device),
            Err(e) => {
                let vulkan = matches!(backend, Backend::Wgpu | Backend::Ash);
                assert!(
                    !(vulkan && std::env::var("RGPU_REQUIRE_VULKAN").as_deref() == Ok("1")),
                    "RGPU_REQUIRE_VULKAN=1, but: {e}"
                );
                eprintln!("skipped {backend}: {e}");
            }
        }
    }
    devices
}

/// The message with the backend's name as `<backend>`.
fn generic(device: &Device, e: &Error) -> String {
    e.to_string().replace(device.backend().name(), "<backend>")
}

/// As `generic`, with every number as `N`: for a limit the APIs report differently.
fn numbers_aside(device: &Device, e: &Error) -> String {
    let mut text = String::new();
    for c in generic(device, e).chars() {
        if !c.is_ascii_digit() {
            text.push(c);
        } else if !text.ends_with('N') {
            text.push('N');
        }
    }
    text
}

/// Runs `mistake` on every device and checks that each says the same, but for its name.
fn reads_the_same(devices: &[Device], what: &str, mistake: impl Fn(&Device) -> Result<(), Error>) {
    reads_alike(devices, what, generic, mistake);
}

/// Runs `mistake` on every device and checks that `shown` makes the same text of each.
fn reads_alike(
    devices: &[Device],
    what: &str,
    shown: fn(&Device, &Error) -> String,
    mistake: impl Fn(&Device) -> Result<(), Error>,
) {
    let mut said: Option<(String, Backend)> = None;
    for device in devices {
        let e = mistake(device).expect_err(what);
        let text = shown(device, &e);
        eprintln!("{what} on {}: {e}", device.backend());
        assert!(!e.to_string().contains('\n'), "{e}");
        match &said {
            None => said = Some((text, device.backend())),
            Some((first, on)) => assert_eq!(&text, first, "{what}: {} vs {on}", device.backend()),
        }
    }
}

#[test]
fn the_same_mistake_reads_the_same_on_every_backend() {
    let devices = devices();
    assert!(devices.iter().any(|d| d.backend() == Backend::Cpu));
    let (x, mut y) = (vec![1.0f32; 4], vec![0.0f32; 4]);
    reads_the_same(&devices, "a short item buffer", |d| {
        saxpy_as(&SAXPY, d, 8, &x, &mut y.clone(), 2.0)
    });
    reads_the_same(&devices, "a write of the wrong length", |d| {
        d.upload(&x)?.write(&[1.0; 3])
    });
    reads_the_same(&devices, "a read of the wrong length", |d| {
        d.upload(&x)?.read_into(&mut [0.0; 5])
    });
    reads_the_same(&devices, "more elements than memory has addresses", |d| {
        d.zeros::<u64>(usize::MAX).map(drop)
    });
    // A buffer of another device: on a GPU backend the launch refuses it, on the cpu the
    // launcher's host view does; both say whose buffer it was and where it was used. (A
    // buffer of another cpu device is host memory like any: the cpu uses it.)
    for device in &devices {
        let mut others = vec![Device::open(Backend::Cpu).unwrap()];
        if device.backend() == Backend::Cpu {
            others = devices
                .iter()
                .filter(|d| d.backend() != Backend::Cpu)
                .cloned()
                .collect();
        } else {
            others.push(Device::open(device.backend()).unwrap());
        }
        for other in others {
            let foreign = other.upload(&x).unwrap();
            let e = saxpy_as(&SAXPY, device, 4, &foreign, &mut y, 2.0).unwrap_err();
            let text = e.to_string();
            assert!(matches!(e, Error::WrongDevice { .. }), "{text}");
            assert!(
                text.starts_with(&format!("a buffer of {} device ", other.backend())),
                "{text}"
            );
            let fix = if other.backend() == device.backend() {
                // Two openings of one device: the message says that is what happened.
                "was used on another opening of the same device (each Device::open is a \
                 device of its own): clone the Device to share its buffers, or copy the data \
                 over (Device::copy_from)"
            } else {
                ": upload the data to that device (Device::upload, Device::copy_from) or pass \
                 a host slice"
            };
            assert!(text.ends_with(fix), "{text}");
        }
    }
    let y = y;
    assert_eq!(y, [0.0; 4], "no mistake ran a kernel");
}

#[test]
fn the_gpu_backends_check_a_launch_against_the_device_the_same_way() {
    let gpus: Vec<Device> = devices()
        .into_iter()
        .filter(|d| d.backend() != Backend::Cpu)
        .collect();
    let (x, y) = (vec![1.0f32; 4], vec![0.0f32; 4]);
    let launch_of = |kernel: KernelInfo| {
        let kernel: &'static KernelInfo = Box::leak(Box::new(kernel));
        let (x, y) = (x.clone(), y.clone());
        move |d: &Device| saxpy_as(kernel, d, 4, &x, &mut y.clone(), 2.0)
    };
    // Checked before the kernel's code is looked up (none is embedded here): the same
    // launch fails the same way on every GPU backend.
    reads_the_same(
        &gpus,
        "too much workgroup memory",
        launch_of(KernelInfo {
            shared_bytes: 1 << 30,
            ..SAXPY
        }),
    );
    reads_the_same(
        &gpus,
        "too many threads",
        launch_of(KernelInfo {
            threads: 1 << 16,
            ..SAXPY
        }),
    );
    // The largest buffer is the device's (wgpu caps it at i32::MAX bytes on Mesa drivers).
    reads_alike(
        &gpus,
        "a buffer larger than the device's largest",
        numbers_aside,
        |d| d.zeros::<u8>(1 << 44).map(drop),
    );
    // Push constants: the Vulkan backends (CUDA passes the params by value).
    let vulkan: Vec<Device> = gpus
        .iter()
        .filter(|d| matches!(d.backend(), Backend::Wgpu | Backend::Ash))
        .cloned()
        .collect();
    reads_the_same(
        &vulkan,
        "params larger than the push constants",
        launch_of(KernelInfo {
            params_size: 1 << 16,
            ..SAXPY
        }),
    );
    for device in &gpus {
        // The kernel itself is missing: named with the build that makes it.
        let e = launch_of(SAXPY)(device).unwrap_err();
        assert!(matches!(e, Error::MissingArtifact { .. }), "{e}");
        assert!(
            e.to_string()
                .ends_with(&format!(": run rgpu build --backend {}", device.backend())),
            "{e}"
        );
    }
}
