//! Waiting for the GPU on the Vulkan and CUDA backends: poll for a while, then block (CUDA:
//! pause between polls, for its launch timeout).
//!
//! A blocking wait (`vkWaitForFences`, wgpu's waiting poll) returns when the driver wakes the
//! thread, which on a GPU can come long after the work finished; for a short kernel, launch
//! plus sync is then mostly that wake-up. CUDA's default (`cudaDeviceScheduleAuto` with
//! fewer contexts than cores) spins instead. The Vulkan backends poll the work's fence
//! without blocking (`vkGetFenceStatus`, wgpu's non-blocking poll) for up to the spin time,
//! and block only after it: a long kernel costs at most that much CPU per wait. On a device
//! that is the CPU (lavapipe, llvmpipe) they block at once: its work runs on the cores a spin
//! would take. `RGPU_SPIN_WAIT_US` sets the spin time in microseconds for any device (0:
//! block at once); it is read when the device opens.

use std::time::{Duration, Instant};

use crate::error::Error;

/// The variable that sets the spin time (microseconds).
pub(crate) const SPIN_VAR: &str = "RGPU_SPIN_WAIT_US";
/// The spin time on a GPU unless `RGPU_SPIN_WAIT_US` says otherwise.
const GPU_SPIN: Duration = Duration::from_millis(1);

/// How long a wait polls before it blocks: `RGPU_SPIN_WAIT_US`, else 1 ms on a GPU and none
/// on a CPU device.
pub(crate) fn spin_time(cpu_device: bool) -> Result<Duration, Error> {
    spin_time_from(std::env::var(SPIN_VAR).ok().as_deref(), cpu_device)
}

fn spin_time_from(value: Option<&str>, cpu_device: bool) -> Result<Duration, Error> {
    match value.map(str::trim) {
        None | Some("") => Ok(if cpu_device { Duration::ZERO } else { GPU_SPIN }),
        Some(text) => text
            .parse::<u64>()
            .map(Duration::from_micros)
            .map_err(|_| Error::Config {
                reason: format!(
                    "{SPIN_VAR}={text:?} is not a number of microseconds: set it to e.g. 1000, \
                     or 0 to wait without polling"
                ),
            }),
    }
}

/// The shortest and longest pauses between polls of a wait past its spin time.
#[cfg(feature = "cuda")]
const PAUSES: (Duration, Duration) = (Duration::from_micros(10), Duration::from_millis(1));

/// The pause before the next poll of a wait that has waited `waited`: a 64th of it, from
/// 10 us to 1 ms. The wait then ends at most ~2% (plus the thread's wake-up) after the work
/// does, where pauses doubling to 1 ms ended a 2.7 ms copy at 3.7 ms (BENCHMARKS.md, the
/// 1 GiB copies between two H200s), and a long kernel still costs a poll a millisecond.
#[cfg(feature = "cuda")]
pub(crate) fn pause_after(waited: Duration) -> Duration {
    (waited / 64).clamp(PAUSES.0, PAUSES.1)
}

/// Calls `done` until it says the work finished (true) or `spin` has passed (false).
pub(crate) fn poll_for<E>(
    spin: Duration,
    mut done: impl FnMut() -> Result<bool, E>,
) -> Result<bool, E> {
    if spin.is_zero() {
        return Ok(false);
    }
    let started = Instant::now();
    loop {
        if done()? {
            return Ok(true);
        }
        if started.elapsed() >= spin {
            return Ok(false);
        }
        std::hint::spin_loop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "cuda")]
    #[test]
    fn pauses_grow_with_the_wait_within_bounds() {
        assert_eq!(pause_after(Duration::ZERO), PAUSES.0);
        assert_eq!(
            pause_after(Duration::from_micros(3200)),
            Duration::from_micros(50)
        );
        assert_eq!(pause_after(Duration::from_secs(5)), PAUSES.1);
    }

    #[test]
    fn a_gpu_spins_a_cpu_device_blocks_and_the_variable_wins() {
        assert_eq!(spin_time_from(None, false).unwrap(), GPU_SPIN);
        assert_eq!(spin_time_from(None, true).unwrap(), Duration::ZERO);
        assert_eq!(spin_time_from(Some(""), true).unwrap(), Duration::ZERO);
        assert_eq!(
            spin_time_from(Some("250"), true).unwrap(),
            Duration::from_micros(250)
        );
        assert_eq!(spin_time_from(Some(" 0 "), false).unwrap(), Duration::ZERO);
        let bad = spin_time_from(Some("1ms"), false).unwrap_err().to_string();
        assert!(bad.contains("RGPU_SPIN_WAIT_US=\"1ms\""), "{bad}");
    }

    #[test]
    fn polling_stops_when_done_or_after_the_spin_time() {
        let mut calls = 0;
        let done = poll_for::<()>(Duration::from_secs(5), || {
            calls += 1;
            Ok(calls == 3)
        });
        assert_eq!((done, calls), (Ok(true), 3));
        let started = Instant::now();
        assert_eq!(
            poll_for::<()>(Duration::from_millis(2), || Ok(false)),
            Ok(false)
        );
        assert!(started.elapsed() >= Duration::from_millis(2));
        let mut called = false;
        let none = poll_for::<()>(Duration::ZERO, || {
            called = true;
            Ok(true)
        });
        assert_eq!((none, called), (Ok(false), false));
        assert_eq!(
            poll_for(Duration::from_secs(1), || Err("lost")),
            Err("lost")
        );
    }
}
