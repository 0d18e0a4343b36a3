//! A kernel that never ended: how the process still exits. After a launch timeout on a GPU
//! backend the kernel may run on, and NVIDIA's drivers wait for it when the process exits:
//! their exit handlers (registered when the driver was loaded) spin until the GPU is idle,
//! forever (seen on the H200 with cuda, ash and wgpu: the main thread running in the driver
//! after `main` returned; a `SIGKILL` ended it within a second, the kernel with it). So at
//! the first timeout rgpu registers an exit handler of its own, which runs before those
//! (handlers run in the reverse order of their registration) and ends the process with the
//! status `exit` was given, without running the handlers registered before it. Rust's own
//! output is flushed before `exit` runs; C's is flushed here. glibc only (`on_exit` passes
//! the status); elsewhere nothing is registered.

/// Registers the handler, once per process.
pub(crate) fn exit_without_driver_handlers() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    glibc::register();
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod glibc {
    use std::ffi::{c_int, c_void};
    use std::sync::Once;

    extern "C" {
        fn on_exit(handler: extern "C" fn(c_int, *mut c_void), arg: *mut c_void) -> c_int;
        fn fflush(stream: *mut c_void) -> c_int;
        fn _exit(status: c_int) -> !;
    }

    extern "C" fn end_now(status: c_int, _: *mut c_void) {
        // SAFETY: fflush(NULL) flushes every C stream; _exit ends the process.
        unsafe {
            fflush(std::ptr::null_mut());
            _exit(status)
        }
    }

    pub(super) fn register() {
        static ONCE: Once = Once::new();
        ONCE.call_once(|| {
            // SAFETY: `end_now` is a valid handler for the whole process; no argument.
            // Registration can only fail for lack of memory: the process then exits as
            // before.
            let _ = unsafe { on_exit(end_now, std::ptr::null_mut()) };
        });
    }
}
