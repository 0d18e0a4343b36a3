//! Launch timeouts: how long a launch or a wait for the device may take before it is
//! `Error::Timeout` (`RGPU_LAUNCH_TIMEOUT_MS`, `DeviceOptions::launch_timeout`), and a
//! device's lost state: once a wait timed out or the driver reported the device lost,
//! every later call on that device returns the same error instead of touching the driver.

use std::sync::OnceLock;
use std::time::Duration;

use crate::error::Error;

/// The variable that sets the launch timeout in milliseconds (`0` or `off`: no timeout).
pub const TIMEOUT_VAR: &str = "RGPU_LAUNCH_TIMEOUT_MS";

/// The limit unless the program or `RGPU_LAUNCH_TIMEOUT_MS` says otherwise: generous, so
/// that only a kernel that hangs reaches it.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// The timeout a device gets: the program's (`DeviceOptions::launch_timeout`), else
/// `RGPU_LAUNCH_TIMEOUT_MS`, else 60 s. `None`: no limit.
pub(crate) fn launch_timeout(asked: Option<Option<Duration>>) -> Result<Option<Duration>, Error> {
    match asked {
        Some(limit) => Ok(limit.filter(|d| !d.is_zero())),
        None => timeout_from(std::env::var(TIMEOUT_VAR).ok().as_deref()),
    }
}

fn timeout_from(value: Option<&str>) -> Result<Option<Duration>, Error> {
    match value.map(str::trim) {
        None | Some("") => Ok(Some(DEFAULT_TIMEOUT)),
        Some("0") | Some("off") => Ok(None),
        Some(text) => text
            .parse::<u64>()
            .map(|ms| Some(Duration::from_millis(ms)))
            .map_err(|_| Error::Config {
                reason: format!(
                    "{TIMEOUT_VAR}={text:?} is not a number of milliseconds: set it to e.g. \
                     60000, or 0 (or off) for no timeout"
                ),
            }),
    }
}

// Used by the GPU backends only.
#[cfg_attr(
    not(any(
        feature = "cuda",
        feature = "wgpu",
        feature = "ash",
        all(feature = "webgpu", target_arch = "wasm32")
    )),
    allow(dead_code)
)]
/// A device that can no longer be used: the first error that made it so, returned by every
/// later call.
#[derive(Default)]
pub(crate) struct Lost(OnceLock<Error>);

#[cfg_attr(
    not(any(
        feature = "cuda",
        feature = "wgpu",
        feature = "ash",
        all(feature = "webgpu", target_arch = "wasm32")
    )),
    allow(dead_code)
)]
impl Lost {
    /// Marks the device lost with `error` (the first one wins) and returns that first one.
    /// A timeout also makes the process exit without waiting for the kernel
    /// (`common::runaway`).
    pub(crate) fn set(&self, error: Error) -> Error {
        #[cfg(any(feature = "wgpu", feature = "ash", feature = "cuda"))]
        if matches!(error, Error::Timeout { .. } | Error::Collective { .. }) {
            super::runaway::exit_without_driver_handlers();
        }
        let _ = self.0.set(error);
        self.0.get().cloned().expect("set above")
    }

    /// `Err` with the error that lost the device, once it is lost.
    pub(crate) fn check(&self) -> Result<(), Error> {
        match self.0.get() {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    pub(crate) fn is_lost(&self) -> bool {
        self.0.get().is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_variable_the_option_and_the_default() {
        assert_eq!(timeout_from(None).unwrap(), Some(DEFAULT_TIMEOUT));
        assert_eq!(timeout_from(Some(" ")).unwrap(), Some(DEFAULT_TIMEOUT));
        assert_eq!(timeout_from(Some("0")).unwrap(), None);
        assert_eq!(timeout_from(Some("off")).unwrap(), None);
        assert_eq!(
            timeout_from(Some("250")).unwrap(),
            Some(Duration::from_millis(250))
        );
        let bad = timeout_from(Some("2s")).unwrap_err().to_string();
        assert!(
            bad.starts_with("RGPU_LAUNCH_TIMEOUT_MS=\"2s\" is not"),
            "{bad}"
        );
        let five = Duration::from_secs(5);
        assert_eq!(launch_timeout(Some(Some(five))).unwrap(), Some(five));
        assert_eq!(launch_timeout(Some(None)).unwrap(), None);
        assert_eq!(launch_timeout(Some(Some(Duration::ZERO))).unwrap(), None);
    }

    #[test]
    fn a_lost_device_keeps_its_first_error() {
        let lost = Lost::default();
        assert!(lost.check().is_ok() && !lost.is_lost());
        let first = Error::Config { reason: "a".into() };
        assert_eq!(lost.set(first.clone()), first);
        assert_eq!(lost.set(Error::Config { reason: "b".into() }), first);
        assert_eq!(lost.check(), Err(first));
    }
}
