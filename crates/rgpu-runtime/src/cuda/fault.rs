//! Checked launches on cuda: a module built with `rgpu build --checked` has the global
//! `RGPU_FAULT`, where the `rgpu` crate's panic handler records the first fault of its
//! launches (crates/rgpu/src/device/nvptx/fault.rs writes this layout) and ends only the
//! faulting thread. After each wait for the GPU the device reads the record of every such
//! module it loaded, clears it, and returns the fault as `Error::OutOfRange`.

use std::sync::Arc;

use cudarc::driver::{result, sys, CudaModule, CudaStream, DevicePtr, DriverError};

/// The global's name and layout: five `u32`s (state, line, column, file length, message
/// length), then the file's and the message's bytes.
pub(super) const SYMBOL: &str = "RGPU_FAULT";
const HEADER: usize = 20;
const FILE_BYTES: usize = 128;
const MESSAGE_BYTES: usize = 256;
const BYTES: usize = HEADER + FILE_BYTES + MESSAGE_BYTES;

/// A loaded module's fault record.
#[derive(Clone, Copy)]
pub(super) struct Record(sys::CUdeviceptr);

/// A fault read back: where (`file:line:column`) and core's message.
pub(super) struct Fault {
    pub(super) location: String,
    pub(super) message: String,
}

/// The module's record, if it has one of the right size (a checked build's module).
pub(super) fn record_of(module: &Arc<CudaModule>, stream: &Arc<CudaStream>) -> Option<Record> {
    let view = module.get_global(SYMBOL, stream).ok()?;
    if view.len() != BYTES {
        return None;
    }
    let (pointer, _record) = view.device_ptr(stream);
    Some(Record(pointer))
}

fn word(bytes: &[u8], at: usize) -> u32 {
    u32::from_ne_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

fn text(bytes: &[u8], len: u32) -> String {
    String::from_utf8_lossy(&bytes[..(len as usize).min(bytes.len())]).into_owned()
}

impl Record {
    /// The recorded fault, cleared on the device; `None` when there is none. Called with
    /// the stream idle (after a wait).
    pub(super) fn take(self) -> Result<Option<Fault>, DriverError> {
        let mut state = [0u32; 1];
        // SAFETY: the record is `BYTES` long in a loaded module; no kernel runs.
        unsafe { result::memcpy_dtoh_sync(&mut state, self.0) }?;
        if state[0] == 0 {
            return Ok(None);
        }
        let mut bytes = vec![0u8; BYTES];
        // SAFETY: as above.
        unsafe {
            result::memcpy_dtoh_sync(&mut bytes, self.0)?;
            result::memset_d8_sync(self.0, 0, BYTES)?;
        }
        let file = text(&bytes[HEADER..HEADER + FILE_BYTES], word(&bytes, 12));
        let message = text(&bytes[HEADER + FILE_BYTES..], word(&bytes, 16));
        Ok(Some(Fault {
            location: format!("{file}:{}:{}", word(&bytes, 4), word(&bytes, 8)),
            message,
        }))
    }
}
