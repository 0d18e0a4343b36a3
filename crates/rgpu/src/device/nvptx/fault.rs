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

use super::super::atomic::ord;
use super::atomic::{cas_global, store_global};

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

#[panic_handler]
fn panic(info: &PanicInfo) -> ! {
    let record = &raw mut RGPU_FAULT;
    // SAFETY: only the thread that claimed the record writes it; the host reads it after
    // the launch.
    unsafe {
        // Claims the record (0 -> 1) for this thread: another thread may have.
        if cas_global((&raw mut (*record).state) as u64, 0, 1, ord::RELAXED) == 0 {
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
            store_global((&raw mut fault.state) as u64, 2, ord::RELEASE);
        }
        asm!("exit;", options(noreturn, nostack));
    }
}
