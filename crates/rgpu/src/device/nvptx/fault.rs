//! Checked builds (`rgpu build --checked`, which compiles every crate with `--cfg
//! rgpu_checked`; rgpu/checked.py): the panic handler records the launch's first fault (an
//! index out of bounds: core's message holds the index and the length) in the module's
//! global `RGPU_FAULT`, then ends only its own thread with PTX `exit`. `trap` would abort the
//! launch with a sticky error, after which every call on the CUDA context fails. The host
//! reads and clears the record when it waits for the GPU
//! (crates/rgpu-runtime/src/cuda/fault.rs reads the same layout).

use core::arch::asm;
use core::fmt::{self, Write};
use core::panic::PanicInfo;

/// Bytes kept of the file name and of the message (longer ones are cut).
const FILE_BYTES: usize = 128;
const MESSAGE_BYTES: usize = 256;

/// The record: `state` 0 (no fault), 1 (a thread is writing it), 2 (written); then line,
/// column, the lengths and the bytes. `#[repr(C)]`: the host reads it as bytes.
#[repr(C)]
pub struct Fault {
    state: u32,
    line: u32,
    column: u32,
    file_len: u32,
    message_len: u32,
    file: [u8; FILE_BYTES],
    message: [u8; MESSAGE_BYTES],
}

/// The module's fault record (its name is the host's: `cuModuleGetGlobal`).
#[no_mangle]
#[used]
pub static mut RGPU_FAULT: Fault = Fault {
    state: 0,
    line: 0,
    column: 0,
    file_len: 0,
    message_len: 0,
    file: [0; FILE_BYTES],
    message: [0; MESSAGE_BYTES],
};

/// A fixed buffer that `write!` fills and cuts at its end.
struct Bytes<'a> {
    out: &'a mut [u8],
    len: usize,
}

impl Write for Bytes<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let take = s.len().min(self.out.len() - self.len);
        self.out[self.len..self.len + take].copy_from_slice(&s.as_bytes()[..take]);
        self.len += take;
        Ok(())
    }
}

/// Claims the record (0 -> 1) for this thread: false when another thread has. (Generic
/// addresses: a Rust pointer to a static is one.)
fn claim(state: *mut u32) -> bool {
    let old: u32;
    // SAFETY: `state` is the record's first word, in global memory; a compare-and-swap on it.
    unsafe {
        asm!(
            "atom.relaxed.gpu.cas.b32 {old}, [{address}], 0, 1;",
            old = out(reg32) old,
            address = in(reg64) state,
            options(nostack)
        );
    }
    old == 0
}

#[panic_handler]
fn panic(info: &PanicInfo) -> ! {
    let record = &raw mut RGPU_FAULT;
    // SAFETY: only the thread that claimed the record writes it; the host reads it after
    // the launch.
    unsafe {
        if claim(&raw mut (*record).state) {
            let fault = &mut *record;
            if let Some(place) = info.location() {
                fault.line = place.line();
                fault.column = place.column();
                let mut file = Bytes {
                    out: &mut fault.file,
                    len: 0,
                };
                let _ = file.write_str(place.file());
                fault.file_len = file.len as u32;
            }
            let mut message = Bytes {
                out: &mut fault.message,
                len: 0,
            };
            let _ = write!(message, "{}", info.message());
            fault.message_len = message.len as u32;
            asm!(
                "st.release.gpu.u32 [{address}], 2;",
                address = in(reg64) &raw mut fault.state,
                options(nostack)
            );
        }
        asm!("exit;", options(noreturn, nostack));
    }
}
