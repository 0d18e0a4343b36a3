//! What only the Vulkan backends (wgpu, ash) have: no driver is `Unavailable` in a fresh
//! process, auto's choice skips a CPU Vulkan device, a bad spin time is a config error. What
//! every GPU backend must do (launches, transfers, facts) is conformance.rs's.
//!
//! Without a Vulkan driver the tests say so and pass, unless `RGPU_REQUIRE_VULKAN=1` (CI on
//! a machine that has one) makes that a failure.
#![cfg(any(feature = "wgpu", feature = "ash"))]

#[path = "common/child.rs"]
mod child;

use child::run_self;
use rgpu_runtime::{Backend, Device, DeviceType, Error};

fn skip(why: impl std::fmt::Display) {
    assert!(
        std::env::var("RGPU_REQUIRE_VULKAN").as_deref() != Ok("1"),
        "RGPU_REQUIRE_VULKAN=1, but: {why}"
    );
    eprintln!("skipped: {why}");
}

fn open(backend: Backend) -> Option<Device> {
    match Device::open(backend) {
        Ok(device) => Some(device),
        Err(e @ Error::Unavailable { .. }) => {
            skip(e);
            None
        }
        Err(e) => panic!("opening {backend}: {e}"),
    }
}

/// The Vulkan backends built into this test binary.
fn vulkan_backends() -> Vec<Backend> {
    [Backend::Wgpu, Backend::Ash]
        .into_iter()
        .filter(|b| b.is_built())
        .collect()
}

#[test]
fn auto_skips_a_cpu_vulkan_device_that_open_accepts() {
    for backend in vulkan_backends() {
        let Some(device) = open(backend) else {
            continue;
        };
        if device.info().kind != DeviceType::Cpu {
            eprintln!("skipped: {backend} opened a GPU ({})", device.description());
            continue;
        }
        let (auto, skipped) = Device::auto();
        if auto.backend() == Backend::Cuda {
            continue;
        }
        let reason = &skipped
            .iter()
            .find(|s| s.backend == backend)
            .unwrap_or_else(|| panic!("auto did not skip {backend}: {skipped:?}"))
            .reason;
        assert!(reason.starts_with("only a CPU Vulkan device ("), "{reason}");
        assert!(
            reason.ends_with(&format!(
                "; auto prefers the cpu backend: ask for it with RGPU_BACKEND={backend}"
            )),
            "{reason}"
        );
        assert_eq!(auto.backend(), Backend::Cpu);
    }
}

#[test]
fn without_a_vulkan_driver_the_backends_are_unavailable() {
    // The loader reads the driver list when an instance is made: run in a fresh process.
    run_self(
        "no_vulkan_driver_child",
        &[
            ("VK_ICD_FILENAMES", "/nonexistent"),
            ("RGPU_NO_VULKAN_DRIVER_CHILD", "1"),
        ],
        &["VK_DRIVER_FILES", "VK_ADD_DRIVER_FILES"],
    );
}

/// The child of `without_a_vulkan_driver_the_backends_are_unavailable` (does nothing in a
/// normal run).
#[test]
fn no_vulkan_driver_child() {
    if std::env::var_os("RGPU_NO_VULKAN_DRIVER_CHILD").is_none() {
        return;
    }
    for backend in vulkan_backends() {
        match Device::open(backend) {
            Err(Error::Unavailable { reason, .. }) => eprintln!("{backend}: {reason}"),
            Err(e) => panic!("{backend}: expected Unavailable, got {e}"),
            Ok(d) => panic!("{backend} opened {} with no driver", d.description()),
        }
    }
    let (device, skipped) = Device::auto();
    assert_eq!(device.backend(), Backend::Cpu);
    for backend in vulkan_backends() {
        assert!(skipped.iter().any(|s| s.backend == backend), "{skipped:?}");
    }
}

/// A spin time that is not a number stops the device from opening, with the variable's
/// name and value.
#[test]
fn a_bad_spin_time_is_a_config_error() {
    if std::env::var_os("RGPU_BAD_SPIN_CHILD").is_some() {
        for backend in vulkan_backends() {
            match Device::open(backend) {
                Err(Error::Config { reason }) => {
                    assert!(reason.contains("RGPU_SPIN_WAIT_US=\"soon\""), "{reason}")
                }
                Err(e @ Error::Unavailable { .. }) => skip(e),
                Err(e) => panic!("{backend}: expected a config error, got {e}"),
                Ok(d) => panic!("{backend} opened {} with a bad spin time", d.description()),
            }
        }
        return;
    }
    run_self(
        "a_bad_spin_time_is_a_config_error",
        &[("RGPU_SPIN_WAIT_US", "soon"), ("RGPU_BAD_SPIN_CHILD", "1")],
        &[],
    );
}
