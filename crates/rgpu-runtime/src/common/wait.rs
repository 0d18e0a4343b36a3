//! Waiting for a future from synchronous Rust (wgpu's calls that wait are futures): on a
//! native target the thread blocks (pollster); in a browser it cannot, and waits through
//! JSPI (JavaScript Promise Integration), as below. The wgpu and webgpu backends call
//! `block_on` and need not know which.
//!
//! A browser never lets its main thread block, and wgpu's WebGPU calls that wait (adapter,
//! device, buffer mapping, error scopes) are futures completed by JavaScript promises. rgpu's
//! page calls the program's `main` through `WebAssembly.promising`, and imports `suspend`
//! (module `rgpu-page`) wrapped in `WebAssembly.Suspending`: a call suspends the whole wasm
//! stack until the promise it returns resolves (one turn of the event loop), during which
//! the browser runs the callbacks that complete wgpu's futures. So `block_on` polls, and
//! suspends while the future is pending: `Device::open`, launches and reads stay synchronous
//! calls, on the web as everywhere else.

/// Runs `future` to completion, blocking this thread.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn block_on<F: std::future::Future>(future: F) -> F::Output {
    pollster::block_on(future)
}

#[cfg(target_arch = "wasm32")]
pub(crate) use jspi::block_on;

#[cfg(target_arch = "wasm32")]
mod jspi {
    use std::future::Future;
    use std::pin::pin;
    use std::task::{Context, Poll, Waker};

    #[link(wasm_import_module = "rgpu-page")]
    extern "C" {
        /// Suspends this wasm stack for one turn of the browser's event loop (JSPI).
        #[link_name = "suspend"]
        fn page_suspend();
    }

    /// Runs `future` to completion, giving the event loop a turn while it is pending.
    pub(crate) fn block_on<F: Future>(future: F) -> F::Output {
        let mut future = pin!(future);
        // Rust 1.85's `Waker::noop`: the webgpu feature needs wgpu 30, which needs Rust 1.87.
        #[allow(clippy::incompatible_msrv)]
        let mut cx = Context::from_waker(Waker::noop());
        loop {
            if let Poll::Ready(value) = future.as_mut().poll(&mut cx) {
                return value;
            }
            // SAFETY: an import without arguments or results; the page provides it (JSPI),
            // and runs `main` through `WebAssembly.promising`, so the stack may suspend here.
            unsafe { page_suspend() };
        }
    }
}
