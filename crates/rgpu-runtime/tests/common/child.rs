//! Runs the test binary again in a child process (a fresh process: the Vulkan loader reads
//! its environment once), for the tests that need another environment.

use std::process::Command;

/// Runs this test binary again on the tests that `filter` selects, with `env` set and the
/// variables of `remove` unset; panics with the child's output unless it passes.
pub fn run_self(filter: &str, env: &[(&str, &str)], remove: &[&str]) {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command.args([filter, "--test-threads=2"]);
    for (k, v) in env {
        command.env(k, v);
    }
    for k in remove {
        command.env_remove(k);
    }
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "{command:?}:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
