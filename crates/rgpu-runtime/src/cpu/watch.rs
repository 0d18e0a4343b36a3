//! Launch timeouts on the cpu backend. A kernel here is Rust running on the host's threads,
//! on memory the caller lent for the call: no thread can be stopped from outside, and a
//! launch cannot return while its threads still use that memory. So a kernel is stopped
//! from inside: every atomic operation, fence and barrier (what a kernel that waits for
//! something does) checks, once every `CHECK_EVERY` calls, the deadline its launch set on
//! the thread, and past it unwinds the kernel (`resume_unwind`, so no panic message); the
//! launch catches that and returns `Error::Timeout`. The device stays usable. A loop that
//! touches none of these (pure arithmetic) is not stopped.
//!
//! Checked launches (a kernel crate built with `rgpu build --checked`): the kernel's panic
//! (an index out of range, ...) is `Error::OutOfRange` with its place and message, not a
//! panic of the caller. The launch's id travels with its deadline to every thread that runs
//! the kernel; rgpu's panic hook (installed at the first checked launch, in front of the
//! one before it) records a panic on such a thread under that id, without printing it, and
//! the launch returns it. A panic elsewhere goes to the hook before rgpu's.

use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, Once};
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
/// panics in a browser; `limit` None: no limit), and the id of a checked launch (0: not
/// checked).
#[derive(Clone, Copy)]
pub(crate) struct Deadline {
    start: Instant,
    limit: Option<Duration>,
    checked: u64,
}

/// The next checked launch's id.
static NEXT_CHECKED: AtomicU64 = AtomicU64::new(1);
/// Each running checked launch by its id, with its first panic (place, message) once it
/// has one. A worker thread keeps the last launch's id after it ends: a panic there later,
/// outside any launch, finds no entry and goes to the hook before rgpu's.
static FAULTS: Mutex<Vec<(u64, Option<Fault>)>> = Mutex::new(Vec::new());

/// A panic's place (`file:line:column`) and message.
type Fault = (String, String);
static HOOK: Once = Once::new();

/// Puts rgpu's hook in front of the current one: a panic on a thread of a checked launch
/// is recorded for the launch (the first of each), any other goes on to the hook before.
fn install_hook() {
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            let launch = DEADLINE.with(Cell::get).map_or(0, |d| d.checked);
            let mut faults = FAULTS.lock().unwrap_or_else(|e| e.into_inner());
            let Some(entry) = faults.iter_mut().find(|f| f.0 == launch) else {
                drop(faults);
                return previous(info);
            };
            if entry.1.is_some() {
                return; // the launch's first panic is the one it returns
            }
            let place = info
                .location()
                .map_or_else(|| "an unknown place".into(), |l| l.to_string());
            let payload = info.payload();
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "the kernel panicked".into());
            entry.1 = Some((place, message));
        }));
    });
}

/// Launch `id` ends: its entry leaves the list, with its first panic if it had one.
fn take_fault(id: u64) -> Option<Fault> {
    let mut faults = FAULTS.lock().unwrap_or_else(|e| e.into_inner());
    let at = faults.iter().position(|f| f.0 == id)?;
    faults.swap_remove(at).1
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
    if let Some(Deadline {
        start,
        limit: Some(limit),
        ..
    }) = DEADLINE.with(Cell::get)
    {
        if start.elapsed() >= limit {
            panic::resume_unwind(Box::new(TimedOut));
        }
    }
}

/// Runs the launch `run` (which calls `enter` with the deadline on each of its threads)
/// with `limit`; a kernel stopped at the deadline is `Error::Timeout`; in a `checked`
/// launch a panic is `Error::OutOfRange`, else it goes on unwinding.
pub(crate) fn run_limited(
    kernel: &'static str,
    limit: Option<Duration>,
    checked: bool,
    run: impl FnOnce(Option<Deadline>),
) -> Result<(), Error> {
    let id = if checked {
        install_hook();
        let id = NEXT_CHECKED.fetch_add(1, Ordering::Relaxed);
        FAULTS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((id, None));
        id
    } else {
        0
    };
    let deadline = (limit.is_some() || checked).then(|| Deadline {
        start: Instant::now(),
        limit,
        checked: id,
    });
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| run(deadline)));
    // This thread may have run some of the kernel: its deadline ends with the launch.
    enter(None);
    let fault = if checked { take_fault(id) } else { None };
    match outcome {
        Ok(()) => Ok(()),
        Err(payload) if payload.is::<TimedOut>() => Err(Error::timeout(
            Backend::Cpu,
            kernel,
            limit.unwrap_or_default(),
        )),
        Err(payload) if checked => {
            let (place, message) = fault.unwrap_or_else(|| {
                let text = payload
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned());
                (
                    "an unknown place".into(),
                    text.unwrap_or_else(|| "the kernel panicked".into()),
                )
            });
            Err(Error::out_of_range(
                Backend::Cpu,
                vec![kernel],
                place,
                message,
            ))
        }
        Err(payload) => panic::resume_unwind(payload),
    }
}
