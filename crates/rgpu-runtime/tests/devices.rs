//! Choosing a device and using several: `Device::list`, `open_on` (an index or a part of a
//! name), `RGPU_DEVICE` with `select`, `open_all`/`select_all`, `Device::info`, moving data
//! between devices, and several devices used at once from threads of their own. On every
//! backend built in that opens here: the cpu (one device), wgpu and ash on the Vulkan
//! driver here (lavapipe: one CPU-type device), cuda on a machine with NVIDIA GPUs.
//!
//! Without a Vulkan driver the Vulkan parts say so and pass, unless `RGPU_REQUIRE_VULKAN=1`.

mod fixtures;

use std::process::Command;

use rgpu_runtime::__private::{launch, Arg, KernelInfo};
use rgpu_runtime::{
    Backend, CopyPath, Device, DeviceChoice, DeviceType, Error, Input, InputOutput, DEVICE_VAR,
};

/// `saxpy`'s launcher description (no kernel code is embedded: the launches here fail
/// before any is needed).
static SAXPY: KernelInfo = fixtures::saxpy_info(64);

/// The backends built in (the cpu always) whose devices can be listed here.
fn listed() -> Vec<(Backend, Vec<rgpu_runtime::DeviceInfo>)> {
    let mut found = Vec::new();
    for backend in [Backend::Cpu, Backend::Cuda, Backend::Wgpu, Backend::Ash] {
        if !backend.is_built() {
            continue;
        }
        match Device::list(backend) {
            Ok(list) => found.push((backend, list)),
            Err(e @ Error::Unavailable { .. }) => {
                let vulkan = matches!(backend, Backend::Wgpu | Backend::Ash);
                assert!(
                    !(vulkan && std::env::var("RGPU_REQUIRE_VULKAN").as_deref() == Ok("1")),
                    "RGPU_REQUIRE_VULKAN=1, but: {e}"
                );
                eprintln!("skipped {backend}: {e}");
            }
            Err(e) => panic!("listing {backend}: {e}"),
        }
    }
    found
}

#[test]
fn each_backend_lists_its_devices_in_index_order() {
    for (backend, list) in listed() {
        assert!(!list.is_empty(), "{backend} lists no device");
        for (i, device) in list.iter().enumerate() {
            eprintln!("{backend} {device}");
            assert_eq!((device.backend, device.index), (backend, i));
            assert!(!device.name.is_empty(), "{device}");
            assert!(!device.to_string().contains('\n'), "{device}");
        }
        if backend == Backend::Cpu {
            assert_eq!(list.len(), 1, "the cpu backend has one device");
            assert_eq!(list[0].kind, DeviceType::Cpu);
        }
        if list[0].name.contains("llvmpipe") {
            // lavapipe: a CPU-type Vulkan device with device-local memory.
            assert_eq!(list[0].kind, DeviceType::Cpu, "{}", list[0]);
            if backend == Backend::Ash {
                assert!(list[0].memory.is_some_and(|m| m > 0), "{}", list[0]);
            }
        }
    }
}

#[test]
fn a_device_opens_by_index_and_by_a_part_of_its_name_and_says_which_it_is() {
    for (backend, list) in listed() {
        for device in list.iter().filter(|d| d.unusable.is_none()) {
            let by_index = Device::open_on(backend, device.index).unwrap();
            assert_eq!(by_index.info(), *device);
            // A part of the name, in other case, finds it where it is the only match.
            let part = device
                .name
                .split_whitespace()
                .next()
                .unwrap()
                .to_uppercase();
            let matching = list
                .iter()
                .filter(|d| d.name.to_uppercase().contains(&part))
                .count();
            if matching == 1 {
                let by_name = Device::open_on(backend, part.as_str()).unwrap();
                assert_eq!(by_name.info(), *device);
                assert!(format!("{by_name:?}")
                    .starts_with(&format!("{backend} device {} (", device.index)));
            }
        }
        // The best device is one of the list.
        let best = Device::open(backend).unwrap().info();
        assert!(list.contains(&best), "{best}");
    }
}

#[test]
fn a_device_that_is_not_there_is_an_error_naming_what_was_asked_and_what_exists() {
    for (backend, list) in listed() {
        let past = list.len();
        let e = Device::open_on(backend, past).unwrap_err();
        let text = e.to_string();
        assert!(matches!(e, Error::NoDevice { .. }), "{text}");
        assert!(
            text.starts_with(&format!(
                "{backend}: device {past}: there is no device {past}; "
            )),
            "{text}"
        );
        for device in &list {
            assert!(text.contains(&device.to_string()), "{text} lacks {device}");
        }
        assert!(
            text.ends_with("(Device::list lists them; rgpu doctor too)"),
            "{text}"
        );
        let e = Device::open_on(backend, "no such gpu").unwrap_err();
        assert!(
            e.to_string().starts_with(&format!(
                "{backend}: device \"no such gpu\": no device's name contains \"no such gpu\"; "
            )),
            "{e}"
        );
    }
    // A backend not built in says so.
    for backend in Backend::ALL
        .into_iter()
        .filter(|b| !b.is_built() && b.for_this_target())
    {
        assert_eq!(
            Device::open_on(backend, 0).err(),
            Some(Error::NotBuilt { backend })
        );
        assert_eq!(
            Device::list(backend).err(),
            Some(Error::NotBuilt { backend })
        );
    }
}

#[test]
fn several_devices_run_at_once_each_from_its_own_thread() {
    // Every device here, twice (each opening is a device of its own), and a cpu device of
    // its own pool: each uploads, transforms and reads back its data on its own thread.
    let mut devices = vec![Device::cpu_with_threads(2).unwrap()];
    for (backend, _) in listed() {
        devices.extend(Device::open_all(backend).unwrap());
        devices.extend(Device::open_all(backend).unwrap());
    }
    let results: Vec<Result<Vec<u32>, Error>> = std::thread::scope(|scope| {
        let handles: Vec<_> = devices
            .iter()
            .enumerate()
            .map(|(k, device)| {
                scope.spawn(move || {
                    let data: Vec<u32> = (0..100_000).map(|i| i ^ k as u32).collect();
                    let mut buffer = device.upload(&data)?;
                    for _ in 0..20 {
                        let back = buffer.read()?;
                        buffer.write(&back)?;
                    }
                    device.sync()?;
                    buffer.read()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (k, result) in results.into_iter().enumerate() {
        let expected: Vec<u32> = (0..100_000).map(|i| i ^ k as u32).collect();
        assert!(result.unwrap() == expected, "device {k}");
    }
}

#[test]
fn data_moves_between_devices_through_the_host() {
    let mut devices: Vec<Device> = listed()
        .into_iter()
        .flat_map(|(backend, _)| Device::open_all(backend).unwrap())
        .collect();
    devices.push(Device::open(Backend::Cpu).unwrap());
    let data: Vec<f32> = (0..300_001).map(|i| i as f32 * 0.25).collect();
    let mut buffer = devices[0].upload(&data).unwrap();
    for device in devices.iter().cycle().skip(1).take(devices.len()) {
        let from = devices
            .iter()
            .find(|d| d.backend() == buffer.backend())
            .unwrap();
        if device.backend() != from.backend() {
            assert_eq!(device.copy_path(from), CopyPath::Host);
        }
        buffer = device.copy_from(&buffer).unwrap();
        assert_eq!(buffer.backend(), device.backend());
        // Into a buffer that exists (host memory between backends).
        let mut into = device.zeros::<f32>(data.len()).unwrap();
        into.copy_from(&buffer).unwrap();
        assert!(into.read().unwrap() == data);
    }
    assert!(buffer.read().unwrap() == data);
    let mut short = devices[0].zeros::<f32>(3).unwrap();
    let e = short.copy_from(&buffer).unwrap_err().to_string();
    assert!(
        e.contains("copy_from got 300001 elements for a buffer of 3"),
        "{e}"
    );
}

#[test]
fn open_all_gives_every_gpu_or_the_one_cpu_device() {
    for (backend, list) in listed() {
        let all = Device::open_all(backend).unwrap();
        let gpus: Vec<_> = list
            .iter()
            .filter(|d| d.unusable.is_none() && d.kind != DeviceType::Cpu)
            .collect();
        let indices: Vec<usize> = all.iter().map(|d| d.info().index).collect();
        if gpus.is_empty() {
            // The CPU-type devices where that is all there is (the cpu, lavapipe).
            assert!(!all.is_empty());
            assert!(all.iter().all(|d| d.info().kind == DeviceType::Cpu));
        } else {
            assert_eq!(indices, gpus.iter().map(|d| d.index).collect::<Vec<_>>());
        }
    }
}

/// Runs this test binary again with `env`, on the test `name` (a child of the caller).
fn run_child(name: &str, env: &[(&str, &str)]) -> String {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command.args([name, "--exact", "--nocapture", "--test-threads=1"]);
    for var in ["RGPU_BACKEND", DEVICE_VAR, "RGPU_CPU_THREADS"] {
        command.env_remove(var);
    }
    command.env("RGPU_DEVICES_CHILD", "1");
    for (k, v) in env {
        command.env(k, v);
    }
    let output = command.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{command:?}:\n{text}");
    text
}

/// The child of the `RGPU_DEVICE` test: prints what `select` and `select_all` gave (does
/// nothing in a normal run).
#[test]
fn select_child() {
    if std::env::var_os("RGPU_DEVICES_CHILD").is_none() {
        return;
    }
    println!(); // after the test harness's "test select_child ... "
    match Device::select() {
        Ok((device, _)) => println!("select: {}", device.info()),
        Err(e) => println!("select error: {e}"),
    }
    match Device::options().select_all() {
        Ok((devices, _)) => {
            let names: Vec<String> = devices.iter().map(|d| format!("{:?}", d)).collect();
            println!("select_all: {}", names.join("; "));
        }
        Err(e) => println!("select_all error: {e}"),
    }
    match Device::options().device(0).select() {
        Ok((device, _)) => println!("options: {}", device.info()),
        Err(e) => println!("options error: {e}"),
    }
}

fn selected(env: &[(&str, &str)]) -> (String, String, String) {
    let out = run_child("select_child", env);
    let line = |prefix: &str| {
        out.lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no `{prefix}` in:\n{out}"))
            .to_string()
    };
    let select = out
        .lines()
        .find(|l| l.starts_with("select:") || l.starts_with("select error:"))
        .unwrap_or_else(|| panic!("no select line in:\n{out}"))
        .to_string();
    (select, line("select_all"), line("options"))
}

#[test]
fn rgpu_device_chooses_the_device_and_never_opens_another() {
    let cpu = Device::list(Backend::Cpu).unwrap().remove(0);
    // The cpu backend has one device: 0 opens it, 1 is an error naming it.
    let (one, all, _) = selected(&[("RGPU_BACKEND", "cpu"), (DEVICE_VAR, "0")]);
    assert_eq!(one, format!("select: {cpu}"));
    assert!(all.starts_with("select_all: cpu device 0 ("), "{all}");
    let (one, all, options) = selected(&[("RGPU_BACKEND", "cpu"), (DEVICE_VAR, "1")]);
    assert_eq!(
        one,
        format!(
            "select error: cpu: RGPU_DEVICE=1: there is no device 1; cpu has one device, \
             {cpu}: set RGPU_DEVICE to one of those indices or a part of one name, or unset it"
        )
    );
    assert!(
        all.starts_with("select_all error: cpu: RGPU_DEVICE=1: "),
        "{all}"
    );
    // A device chosen in code wins over the variable.
    assert_eq!(options, format!("options: {cpu}"));
    for (backend, list) in listed().into_iter().filter(|(b, _)| *b != Backend::Cpu) {
        let name = backend.name();
        // By name: a CPU-type Vulkan device too, since it was asked for.
        let part = list[0].name.split_whitespace().next().unwrap().to_string();
        if list.iter().filter(|d| d.name.contains(&part)).count() == 1 {
            let (one, _, _) = selected(&[("RGPU_BACKEND", name), (DEVICE_VAR, &part)]);
            assert_eq!(one, format!("select: {}", list[0]));
        }
        // Past the last one: an error, not the backend's best device.
        let past = list.len().to_string();
        let (one, all, _) = selected(&[("RGPU_BACKEND", name), (DEVICE_VAR, &past)]);
        let said = format!("{backend}: RGPU_DEVICE={past}: there is no device {past}; ");
        assert!(one.starts_with(&format!("select error: {said}")), "{one}");
        assert!(
            all.starts_with(&format!("select_all error: {said}")),
            "{all}"
        );
    }
    // Auto with a device named: the first backend that opens must have it; it never
    // falls through to a device of another backend.
    let (one, _, _) = selected(&[(DEVICE_VAR, "99")]);
    assert!(one.starts_with("select error: "), "{one}");
    assert!(
        one.contains(": RGPU_DEVICE=99: there is no device 99; "),
        "{one}"
    );
    // Auto without one passes over a backend that has only a CPU-type Vulkan device.
    let (one, all, _) = selected(&[]);
    assert!(one.starts_with("select: "), "{one}");
    if one.contains("(CPU") {
        assert_eq!(one, format!("select: {cpu}"));
        assert!(all.starts_with("select_all: cpu device 0 ("), "{all}");
    }
    assert_eq!(DeviceChoice::parse("0"), DeviceChoice::Index(0));
}

/// The Vulkan driver here, listed twice: a FIXTURE of the driver list (not of a driver) that
/// makes this machine one with two Vulkan devices. `None` without lavapipe's manifest.
fn two_vulkan_devices() -> Option<String> {
    // Mesa names it lvp_icd.x86_64.json (Debian 12's 22.3) or lvp_icd.json (Mesa 25).
    let names = ["lvp_icd.x86_64.json", "lvp_icd.json"];
    let dir = std::path::Path::new("/usr/share/vulkan/icd.d");
    let Some(icd) = names.iter().map(|n| dir.join(n)).find(|p| p.is_file()) else {
        assert!(
            std::env::var("RGPU_REQUIRE_VULKAN").as_deref() != Ok("1"),
            "RGPU_REQUIRE_VULKAN=1, but lavapipe's manifest ({}) is not in {}",
            names.join(" or "),
            dir.display()
        );
        eprintln!("skipped: no lavapipe manifest in {}", dir.display());
        return None;
    };
    let copy = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("second_lvp_icd.json");
    std::fs::copy(&icd, &copy).unwrap();
    Some(format!("{}:{}", icd.display(), copy.display()))
}

#[test]
fn two_devices_of_a_backend_are_told_apart() {
    if !(Backend::Ash.is_built() || Backend::Wgpu.is_built()) {
        return;
    }
    let Some(files) = two_vulkan_devices() else {
        return;
    };
    run_child(
        "two_devices_child",
        &[
            ("VK_ICD_FILENAMES", files.as_str()),
            ("VK_DRIVER_FILES", files.as_str()),
        ],
    );
}

/// The child of `two_devices_of_a_backend_are_told_apart` (does nothing in a normal run).
#[test]
fn two_devices_child() {
    if std::env::var_os("RGPU_DEVICES_CHILD").is_none() {
        return;
    }
    for backend in [Backend::Wgpu, Backend::Ash]
        .into_iter()
        .filter(|b| b.is_built())
    {
        let list = Device::list(backend).unwrap();
        assert_eq!(list.len(), 2, "{list:?}");
        assert_eq!(list[0].name, list[1].name);
        let devices = Device::open_all(backend).unwrap();
        let indices: Vec<usize> = devices.iter().map(|d| d.info().index).collect();
        assert_eq!(indices, [0, 1]);
        assert_eq!(Device::open_on(backend, 1).unwrap().info(), list[1]);
        // A name both have is not enough.
        let part = list[0].name.split_whitespace().next().unwrap();
        let e = Device::open_on(backend, part).unwrap_err();
        assert!(
            e.to_string().contains(&format!(
                "2 devices' names contain {part:?} ({}, {}): give the index of one instead",
                list[0], list[1]
            )),
            "{e}"
        );
        // A buffer of device 0 is device 0's: a launch on device 1 says whose it is (before
        // any kernel code is needed), and device 1 can have a copy.
        let data: Vec<f32> = (0..5000).map(|i| i as f32).collect();
        let on_0 = devices[0].upload(&data).unwrap();
        let mut y = vec![0.0f32; 5000];
        let e = launch(
            &devices[1],
            &SAXPY,
            &[],
            5000,
            &mut [Arg::In(on_0.src()), Arg::InOut(y.dst())],
            &|_| vec![0; 16],
        )
        .unwrap_err();
        let name = &list[0].name;
        assert_eq!(
            e.to_string(),
            format!(
                "a buffer of {backend} device 0 ({name}) was used on {backend} device 1 \
                 ({name}): upload the data to that device (Device::upload, \
                 Device::copy_from) or pass a host slice"
            )
        );
        // Vulkan has no GPU-to-GPU path in rgpu: the copy goes through host memory.
        assert_eq!(devices[1].copy_path(&devices[0]), CopyPath::Host);
        let on_1 = devices[1].copy_from(&on_0).unwrap();
        assert!(on_1.read().unwrap() == data);
        assert_eq!(
            format!("{:?} / {:?}", devices[0], devices[1]),
            format!("{backend} device 0 ({name}) / {backend} device 1 ({name})")
        );
    }
}
