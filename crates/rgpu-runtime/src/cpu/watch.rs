//! Launch timeouts on the cpu backend. A kernel here is Rust running on the host's threads,
//! on memory the caller lent for the call: no thread can be stopped from outside, and a
//! launch cannot return while its threads still use that memory. So a kernel is stopped
//! from inside: every atomic operation, fence and barrier (what a kernel that waits for
//! something does) checks, once every `CHECK_EVERY` calls, the deadline its launch set on
//! the thread, and past it unwinds the kernel (`resume_unwind`, so no panic message); the
//! launch catches that and returns `Error::Timeout`. The device stays usable. A loop that
//! touches none of these (pure arithmetic) is not stopped.

use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};
use std::time::Duration;

use crate::backend::Backend;
use crate::error::Error;
use crate::program::Instant;

/// Checks between two clock reads.
const CHECK_EVERY: u32 = 1024;

thread_local! {
    /// The deadline of the launch whose kernel runs on this thread, if it has one.
    static DEADLINE: Cell<Option<Deadline>> = const { Cell::new(None) };
    /// Checks left until the next clock read.
    static TICKS: Cell<u32> = const { Cell::new(0) };
}

/// When a launch started and how long it may run (`program::Instant`: std's `Instant::now`
/// panics in a browser).
#[derive(Clone, Copy)]
pub(crate) struct Deadline {
    start: Instant,
    limit: Duration,
}

/// The unwinding payload of a kernel stopped at its deadline.
struct TimedOut;

/// Sets the deadline of the launch that runs on this thread from now on (what each of its
/// rayon tasks does first).
pub(crate) fn enter(deadline: Option<Deadline>) {
    DEADLINE.with(|d| d.set(deadline));
    TICKS.with(|t| t.set(0));
}

/// Stops the running kernel when its launch's deadline has passed (checked every
/// `CHECK_EVERY` calls).
#[inline]
pub(crate) fn tick() {
    let left = TICKS.with(Cell::get);
    if left > 0 {
        TICKS.with(|t| t.set(left - 1));
        return;
    }
    TICKS.with(|t| t.set(CHECK_EVERY));
    if let Some(deadline) = DEADLINE.with(Cell::get) {
        if deadline.start.elapsed() >= deadline.limit {
            panic::resume_unwind(Box::new(TimedOut));
        }
    }
}

/// Runs the launch `run` (which calls `enter` with the deadline on each of its threads)
/// with `limit`; a kernel stopped at the deadline is `Error::Timeout`, another panic goes on
/// unwinding.
pub(crate) fn run_limited(
    kernel: &'static str,
    limit: Option<Duration>,
    run: impl FnOnce(Option<Deadline>),
) -> Result<(), Error> {
    let deadline = limit.map(|limit| Deadline {
        start: Instant::now(),
        limit,
    });
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| run(deadline)));
    // This thread may have run some of the kernel: its deadline ends with the launch.
    enter(None);
    match outcome {
        Ok(()) => Ok(()),
        Err(payload) if payload.is::<TimedOut>() => Err(Error::timeout(
            Backend::Cpu,
            kernel,
            limit.unwrap_or_default(),
        )),
        Err(payload) => panic::resume_unwind(payload),
    }
}
