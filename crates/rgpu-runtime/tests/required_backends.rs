//! `RGPU_REQUIRE_BACKENDS` makes a backend that cannot run a failure, also when the binary
//! was built without it: it is never passed over in silence. (Own test binary: it sets the
//! variable for the whole process.)

use std::panic::catch_unwind;

use rgpu_runtime::testing::{backends, each_backend};
use rgpu_runtime::{Backend, Device};

#[test]
fn a_required_backend_that_cannot_run_fails_the_test() {
    // Edition 2021 and no other test in this binary: setting the variable is sound here.
    std::env::set_var("RGPU_REQUIRE_BACKENDS", "cuda");
    assert!(
        backends().contains(&Backend::Cuda),
        "cuda is tested when required"
    );
    if Device::open(Backend::Cuda).is_ok() {
        eprintln!("a CUDA device is here: nothing to refuse");
        return;
    }
    let outcome = catch_unwind(|| each_backend("required", |_| Ok(())));
    let message = outcome.expect_err("a required backend that cannot run must fail");
    let text = message
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(text.contains("cuda"), "{text}");
}
