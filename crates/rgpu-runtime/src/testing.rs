//! `each_backend`: run one test on every backend built into the test binary, and say per
//! backend what happened: passed, failed, or skipped and why. Never a silent pass.
//!
//! - A backend this machine cannot run (no GPU, no driver) is skipped, on stderr
//!   (`SKIPPED <backend>: <why>`), unless `RGPU_REQUIRE_BACKENDS` names it: then it fails.
//! - `RGPU_TEST_BACKENDS` (set by `rgpu test --backend B`) limits the run to those backends;
//!   one not built in fails the test.
//! - With `RGPU_TEST_REPORT=FILE` (set by `rgpu test`), each outcome is appended to FILE as
//!   one JSON line, `{"test", "backend", "status", "reason"}`, which `rgpu test` turns into
//!   its per-backend summary.

use std::fs::OpenOptions;
use std::io::Write;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use crate::{Backend, Device, Error};

pub const REPORT_VAR: &str = "RGPU_TEST_REPORT";
pub const REQUIRE_VAR: &str = "RGPU_REQUIRE_BACKENDS";
pub const ONLY_VAR: &str = "RGPU_TEST_BACKENDS";

fn names(var: &str) -> Vec<String> {
    std::env::var(var)
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

fn json_str(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Appends one outcome to the `RGPU_TEST_REPORT` file (when set).
pub fn report(test: &str, backend: Backend, status: &str, reason: &str) {
    let Ok(path) = std::env::var(REPORT_VAR) else {
        return;
    };
    let line = format!(
        "{{\"test\": {}, \"backend\": {}, \"status\": {}, \"reason\": {}}}\n",
        json_str(test),
        json_str(backend.name()),
        json_str(status),
        json_str(reason)
    );
    // One write per line, in append mode: lines of parallel tests do not interleave.
    if let Ok(mut file) = OpenOptions::new().create(true).append(true).open(&path) {
        let _ = file.write_all(line.as_bytes());
    }
}

fn parsed(var: &str) -> Vec<Backend> {
    let list = names(var);
    list.iter()
        .map(|name| {
            Backend::parse(name)
                .unwrap_or_else(|| panic!("{var}={}: `{name}` is not a backend", list.join(",")))
        })
        .collect()
}

/// The backends to test: `RGPU_TEST_BACKENDS`, else every backend built in and every one
/// `RGPU_REQUIRE_BACKENDS` names (one not built in then fails the test, never passes it).
pub fn backends() -> Vec<Backend> {
    let only = parsed(ONLY_VAR);
    if !only.is_empty() {
        return only;
    }
    let required = parsed(REQUIRE_VAR);
    Backend::ALL
        .into_iter()
        .filter(|b| b.is_built() || required.contains(b))
        .collect()
}

/// Whether `RGPU_REQUIRE_BACKENDS` (or `RGPU_TEST_BACKENDS`) asks for this backend.
pub fn required(backend: Backend) -> bool {
    names(REQUIRE_VAR)
        .iter()
        .chain(names(ONLY_VAR).iter())
        .any(|n| n == backend.name())
}

/// Runs `check` on a device of every backend to test (see the module). Panics (the test
/// fails) when a check fails or a required backend cannot run.
pub fn each_backend(test: &str, mut check: impl FnMut(&Device) -> Result<(), String>) {
    let mut failures = Vec::new();
    for backend in backends() {
        let device = match Device::open(backend) {
            Ok(device) => device,
            Err(why @ (Error::Unavailable { .. } | Error::NotBuilt { .. }))
                if !required(backend) =>
            {
                eprintln!("SKIPPED {backend} ({test}): {why}");
                report(test, backend, "skipped", &why.to_string());
                continue;
            }
            Err(why) => {
                report(test, backend, "failed", &why.to_string());
                failures.push(format!("{backend}: {why}"));
                continue;
            }
        };
        match catch_unwind(AssertUnwindSafe(|| check(&device))) {
            Ok(Ok(())) => {
                eprintln!("PASSED {backend} ({test}) on {}", device.description());
                report(test, backend, "passed", &device.description());
            }
            Ok(Err(message)) => {
                report(test, backend, "failed", &message);
                failures.push(format!("{backend}: {message}"));
            }
            Err(panic) => {
                let message = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_else(|| "panicked".into());
                report(test, backend, "failed", &message);
                resume_unwind(panic);
            }
        }
    }
    assert!(failures.is_empty(), "{test}: {}", failures.join("; "));
}
