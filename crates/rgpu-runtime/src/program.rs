//! A program's arguments and output, the same calls on every backend: on native targets
//! they are `std::env::args` and stdout/stderr; in a browser (the webgpu backend, wasm32,
//! where std has no arguments and writes nowhere) they come from and go to the page rgpu
//! serves, which hands them to `rgpu run`.
//!
//! Host programs that should also run in a browser use `rgpu::args()`, `rgpu::println!`
//! and `rgpu::eprintln!` instead of std's, and return their status from `main`
//! (`ExitCode`): the page reads `main`'s result.

use std::fmt;

/// The program's arguments, the program name first (as `std::env::args`).
pub fn args() -> Vec<String> {
    #[cfg(all(feature = "webgpu", target_arch = "wasm32"))]
    {
        install_panic_hook();
        page::args()
    }
    #[cfg(not(all(feature = "webgpu", target_arch = "wasm32")))]
    std::env::args().collect()
}

/// A point in time for measuring how long something took, on every backend: std's
/// `Instant` on native targets, the page's `performance.now()` in a browser (where std's
/// `Instant::now` panics).
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct Instant {
    #[cfg(not(all(feature = "webgpu", target_arch = "wasm32")))]
    at: std::time::Instant,
    #[cfg(all(feature = "webgpu", target_arch = "wasm32"))]
    ms: f64,
}

impl Instant {
    pub fn now() -> Self {
        #[cfg(not(all(feature = "webgpu", target_arch = "wasm32")))]
        return Self {
            at: std::time::Instant::now(),
        };
        #[cfg(all(feature = "webgpu", target_arch = "wasm32"))]
        return Self { ms: page::now() };
    }

    /// The time since `now()` made it.
    pub fn elapsed(&self) -> std::time::Duration {
        #[cfg(not(all(feature = "webgpu", target_arch = "wasm32")))]
        return self.at.elapsed();
        #[cfg(all(feature = "webgpu", target_arch = "wasm32"))]
        return std::time::Duration::from_secs_f64((page::now() - self.ms).max(0.0) / 1e3);
    }
}

/// Writes to the program's stdout; what `rgpu::print!`/`rgpu::println!` call.
pub fn write_out(args: fmt::Arguments<'_>) {
    #[cfg(all(feature = "webgpu", target_arch = "wasm32"))]
    page::write(1, &args.to_string());
    #[cfg(not(all(feature = "webgpu", target_arch = "wasm32")))]
    {
        use std::io::Write;
        let _ = std::io::stdout().write_fmt(args);
    }
}

/// Writes to the program's stderr; what `rgpu::eprint!`/`rgpu::eprintln!` call.
pub fn write_err(args: fmt::Arguments<'_>) {
    #[cfg(all(feature = "webgpu", target_arch = "wasm32"))]
    page::write(2, &args.to_string());
    #[cfg(not(all(feature = "webgpu", target_arch = "wasm32")))]
    {
        use std::io::Write;
        let _ = std::io::stderr().write_fmt(args);
    }
}

/// In a browser, a panic's message goes to the page's stderr (std would drop it) before
/// the wasm traps.
#[cfg(all(feature = "webgpu", target_arch = "wasm32"))]
pub(crate) fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            page::write(2, &format!("{info}\n"));
        }))
    });
}

/// Like `std::print!`, on every backend (the page's stdout in a browser).
#[macro_export]
macro_rules! print {
    ($($arg:tt)*) => { $crate::program::write_out(::std::format_args!($($arg)*)) };
}

/// Like `std::println!`, on every backend (the page's stdout in a browser).
#[macro_export]
macro_rules! println {
    () => { $crate::program::write_out(::std::format_args!("\n")) };
    ($($arg:tt)*) => {
        $crate::program::write_out(::std::format_args!("{}\n", ::std::format_args!($($arg)*)))
    };
}

/// Like `std::eprint!`, on every backend (the page's stderr in a browser).
#[macro_export]
macro_rules! eprint {
    ($($arg:tt)*) => { $crate::program::write_err(::std::format_args!($($arg)*)) };
}

/// Like `std::eprintln!`, on every backend (the page's stderr in a browser).
#[macro_export]
macro_rules! eprintln {
    () => { $crate::program::write_err(::std::format_args!("\n")) };
    ($($arg:tt)*) => {
        $crate::program::write_err(::std::format_args!("{}\n", ::std::format_args!($($arg)*)))
    };
}

#[cfg(all(feature = "webgpu", target_arch = "wasm32"))]
mod page {
    use wasm_bindgen::prelude::wasm_bindgen;

    // `globalThis.rgpuPage`, defined by the page rgpu writes (target/rgpu/web/rgpu-page.js).
    #[wasm_bindgen]
    extern "C" {
        #[wasm_bindgen(js_namespace = rgpuPage, js_name = args)]
        pub(super) fn args() -> Vec<String>;
        #[wasm_bindgen(js_namespace = rgpuPage, js_name = write)]
        pub(super) fn write(fd: u32, text: &str);
        #[wasm_bindgen(js_namespace = performance, js_name = now)]
        pub(super) fn now() -> f64;
    }
}
