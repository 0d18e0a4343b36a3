//! `Collective` over CUDA devices: NCCL, loaded at run time (`libnccl.so.2`, found as the
//! driver is: the library search path; NVIDIA's `nvidia-nccl-cu12`/`-cu13` wheels carry it).
//! One communicator per device from `ncclCommInitAll` (the devices of one process, each GPU
//! once); each operation is queued on every device's stream inside one NCCL group, after
//! the launches queued there, and returns without waiting (a read of a buffer waits).

use std::ffi::c_void;
use std::sync::{Arc, Mutex, OnceLock};

use bytemuck::Pod;
use cudarc::driver::{DevicePtr, DevicePtrMut};
use cudarc::nccl::{result, sys};

use super::{cuda, memory, memory_mut, peer, CudaDevice, BACKEND};
use crate::buffer::Buffer;
use crate::collective::{ElementKind, ReduceOp, Reducible, Transfer};
use crate::device::Device;
use crate::error::Error;

/// One `ncclSend` or `ncclRecv`: `bytes` bytes at `ptr` on this process's rank `rank`'s
/// device, with global rank `peer`.
struct P2p {
    rank: usize,
    ptr: u64,
    bytes: usize,
    peer: usize,
    send: bool,
}

impl P2p {
    fn new(rank: usize, ptr: u64, bytes: usize, peer: usize, send: bool) -> Self {
        Self {
            rank,
            ptr,
            bytes,
            peer,
            send,
        }
    }
}

/// One NCCL communicator per device, in rank order.
pub(crate) struct Comms {
    shared: Arc<Shared>,
    version: i32,
    /// NCCL's communicators are used by one thread at a time.
    busy: Mutex<()>,
}

/// The communicators, and what the devices' waits ask of them (`CudaDevice::wait` holds a
/// `Weak` of it): whether NCCL reported an error, and aborting them when a wait runs out of
/// time, so that NCCL's kernels waiting for a rank that died end (`ncclCommAbort`).
pub(crate) struct Shared {
    comms: Vec<sys::ncclComm_t>,
    /// The global rank of `comms[0]`, and the job's size.
    first: usize,
    ranks: usize,
    /// Set once the communicators are aborted: the error every later call returns.
    aborted: OnceLock<Error>,
}

// SAFETY: a communicator is used by one thread at a time (`Comms::busy`), except
// `ncclCommGetAsyncError` and `ncclCommAbort`, which NCCL lets any thread call at any time.
unsafe impl Send for Shared {}
// SAFETY: as above.
unsafe impl Sync for Shared {}

impl Shared {
    /// The error NCCL reported on any communicator (its asynchronous error), after
    /// aborting them all; or the abort's error if it came before. `local`: the rank in this
    /// process whose device waits.
    pub(crate) fn failure(&self, local: usize) -> Option<Error> {
        if let Some(e) = self.aborted.get() {
            return Some(e.clone());
        }
        for &comm in &self.comms {
            let mut state = sys::ncclResult_t::ncclSuccess;
            // SAFETY: a live communicator (not aborted: checked above); NCCL allows this
            // call from any thread.
            unsafe { sys::ncclCommGetAsyncError(comm, &mut state) };
            if !matches!(
                state,
                sys::ncclResult_t::ncclSuccess | sys::ncclResult_t::ncclInProgress
            ) {
                // SAFETY: as above.
                let text = c_text(unsafe { sys::ncclGetLastError(comm) });
                let reason = format!("NCCL reported {state:?}: {}", text.trim());
                return Some(self.abort(local, reason));
            }
        }
        None
    }

    /// Aborts the communicators (once) because of `reason`: the error naming rank `local`
    /// of this process.
    pub(crate) fn abort(&self, local: usize, reason: String) -> Error {
        let error = Error::Collective {
            rank: self.first + local,
            ranks: self.ranks,
            reason,
        };
        let mut first = false;
        let kept = self.aborted.get_or_init(|| {
            first = true;
            error
        });
        if first {
            for &comm in &self.comms {
                // SAFETY: made by NCCL, aborted once (the `OnceLock`); never destroyed
                // after (`Shared::drop`).
                let _ = unsafe { result::comm_abort(comm) };
            }
        }
        kept.clone()
    }
}

fn data_type(kind: ElementKind) -> sys::ncclDataType_t {
    match kind {
        ElementKind::U32 => sys::ncclDataType_t::ncclUint32,
        ElementKind::I32 => sys::ncclDataType_t::ncclInt32,
        ElementKind::F32 => sys::ncclDataType_t::ncclFloat32,
        ElementKind::F64 => sys::ncclDataType_t::ncclFloat64,
    }
}

fn red_op(op: ReduceOp) -> sys::ncclRedOp_t {
    match op {
        ReduceOp::Sum => sys::ncclRedOp_t::ncclSum,
        ReduceOp::Min => sys::ncclRedOp_t::ncclMin,
        ReduceOp::Max => sys::ncclRedOp_t::ncclMax,
    }
}

fn failed(what: &str, e: result::NcclError) -> Error {
    Error::api_call(BACKEND, &format!("NCCL's {what}"), explained(&e))
}

/// NCCL's result code with its own text (cudarc's `NcclError` prints neither), and for the
/// code a mistake in the job's setup gives, what to do.
fn explained(e: &result::NcclError) -> String {
    // SAFETY: NCCL returns a static NUL-terminated string for every code.
    let text = c_text(unsafe { sys::ncclGetErrorString(e.0) });
    let text = if text.is_empty() {
        text
    } else {
        format!(": {text}")
    };
    let hint = match e.0 {
        sys::ncclResult_t::ncclInvalidUsage => {
            " (two ranks of one job on one GPU are refused: give each rank its own GPU, e.g. \
             by LOCAL_RANK; NCCL_DEBUG=WARN prints NCCL's reason)"
        }
        _ => " (NCCL_DEBUG=WARN prints NCCL's reason)",
    };
    format!("{:?}{text}{hint}", e.0)
}

/// A NUL-terminated string NCCL returned (its error texts), or "" for none.
fn c_text(text: *const std::ffi::c_char) -> String {
    if text.is_null() {
        return String::new();
    }
    // SAFETY: NCCL's texts are NUL-terminated and outlive this call.
    unsafe { std::ffi::CStr::from_ptr(text) }
        .to_string_lossy()
        .into_owned()
}

/// NCCL's library loads, or the error that says how to install it.
fn library() -> Result<(), Error> {
    // SAFETY: only tries to open the library.
    if unsafe { sys::is_culib_present() } {
        return Ok(());
    }
    Err(Error::unavailable(
        BACKEND,
        "NCCL's library (libnccl.so.2) is not on the library search path: install it (pip \
         install nvidia-nccl-cu12, then add its nvidia/nccl/lib folder to LD_LIBRARY_PATH; \
         or NVIDIA's libnccl2 package); without it collectives run only over non-CUDA \
         devices, through host memory",
    ))
}

/// A new job's unique id as 256 hex digits.
pub(crate) fn unique_id() -> Result<String, Error> {
    library()?;
    let id = result::get_uniqueid().map_err(|e| failed("ncclGetUniqueId", e))?;
    Ok(id
        .internal
        .iter()
        .map(|&b| format!("{:02x}", b as u8))
        .collect())
}

fn parse_id(text: &str) -> Result<sys::ncclUniqueId, Error> {
    let text = text.trim();
    let bad = || Error::Config {
        reason: format!(
            "the NCCL id {:?}... is not the 256 hex digits Collective::unique_id makes: give \
             every process the launcher's id unchanged",
            text.chars().take(16).collect::<String>()
        ),
    };
    if text.len() != 256 || !text.is_ascii() {
        return Err(bad());
    }
    let mut id = sys::ncclUniqueId { internal: [0; 128] };
    for (i, byte) in id.internal.iter_mut().enumerate() {
        let pair = &text[2 * i..2 * i + 2];
        *byte = u8::from_str_radix(pair, 16).map_err(|_| bad())? as ::core::ffi::c_char;
    }
    Ok(id)
}

impl Comms {
    /// Rank `rank` of a job of `ranks` processes on `device`; waits for the others at most
    /// the device's launch timeout (NCCL's init blocks until every rank has come: it is left
    /// waiting on a thread of its own then).
    pub(crate) fn join(
        device: &Device,
        rank: usize,
        ranks: usize,
        id: &str,
    ) -> Result<Comms, Error> {
        library()?;
        let id = parse_id(id)?;
        let d = cuda(device);
        d.lost.check()?;
        let ctx = std::sync::Arc::clone(d.stream.context());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let made = ctx
                .bind_to_thread()
                .map_err(|e| format!("{e:?}"))
                .and_then(|()| {
                    let mut comm = std::ptr::null_mut();
                    // SAFETY: `comm` receives the communicator; this thread's context is the
                    // device's.
                    unsafe { result::comm_init_rank(&mut comm, ranks as i32, id, rank as i32) }
                        .map(|_| comm as usize)
                        .map_err(|e| explained(&e))
                });
            let _ = tx.send(made);
        });
        let limit = d
            .timeout
            .unwrap_or(std::time::Duration::from_secs(u64::MAX / 4));
        let comm = match rx.recv_timeout(limit) {
            Ok(Ok(comm)) => comm as sys::ncclComm_t,
            // The job's setup, not a transfer: the reason alone, naming the rank.
            Ok(Err(e)) => {
                return Err(Error::Config {
                    reason: format!(
                        "rank {rank} of {ranks} could not join the job (NCCL's \
                         ncclCommInitRank: {e})"
                    ),
                });
            }
            Err(_) => {
                return Err(Error::timeout(BACKEND, "Collective::join", limit));
            }
        };
        Comms::made(vec![comm], rank, ranks, std::slice::from_ref(device))
    }

    pub(crate) fn new(devices: &[Device]) -> Result<Comms, Error> {
        library()?;
        let mut ordinals = Vec::with_capacity(devices.len());
        for (rank, device) in devices.iter().enumerate() {
            let d = cuda(device);
            d.lost.check()?;
            let ordinal = d.stream.context().ordinal() as i32;
            if let Some(other) = ordinals.iter().position(|&o| o == ordinal) {
                return Err(Error::Argument {
                    kernel: "Collective::new",
                    param: "devices",
                    reason: format!(
                        "ranks {other} and {rank} are the same GPU (CUDA device {ordinal}): \
                         NCCL takes each GPU once; open each GPU once (Device::open_all)"
                    ),
                });
            }
            ordinals.push(ordinal);
        }
        let mut comms = vec![std::ptr::null_mut(); devices.len()];
        // SAFETY: `comms` holds one slot per ordinal; the ordinals are CUDA devices.
        unsafe {
            result::comm_init_all(comms.as_mut_ptr(), ordinals.len() as i32, ordinals.as_ptr())
        }
        .map_err(|e| failed("ncclCommInitAll", e))?;
        Comms::made(comms, 0, devices.len(), devices)
    }

    /// `comms` (rank `first` on, of a job of `ranks`), just made, with the library's version;
    /// each of `devices` watches its communicator's state in its waits.
    fn made(
        comms: Vec<sys::ncclComm_t>,
        first: usize,
        ranks: usize,
        devices: &[Device],
    ) -> Result<Comms, Error> {
        let shared = Arc::new(Shared {
            comms,
            first,
            ranks,
            aborted: OnceLock::new(),
        });
        for (local, device) in devices.iter().enumerate() {
            cuda(device).watch(Arc::downgrade(&shared), local);
        }
        let mut made = Comms {
            shared,
            version: 0,
            busy: Mutex::new(()),
        };
        // (Made first: a failed version call still destroys the communicators.)
        made.version = result::get_nccl_version().map_err(|e| failed("ncclGetVersion", e))?;
        Ok(made)
    }

    /// "NCCL 2.28.3" (NCCL's version code: major * 10000 + minor * 100 + patch).
    pub(crate) fn name(&self) -> String {
        let v = self.version;
        format!("NCCL {}.{}.{}", v / 10000, v / 100 % 100, v % 100)
    }

    /// Runs `calls` (NCCL's enqueue calls; the first error they met) inside one NCCL group,
    /// one thread at a time, on devices not lost.
    fn grouped(
        &self,
        devices: &[Device],
        what: &str,
        calls: impl FnOnce() -> Option<result::NcclError>,
    ) -> Result<(), Error> {
        let _busy = self.busy.lock().unwrap_or_else(|e| e.into_inner());
        for device in devices {
            cuda(device).lost.check()?;
        }
        if let Some(e) = self.shared.aborted.get() {
            return Err(e.clone());
        }
        result::group_start().map_err(|e| failed("ncclGroupStart", e))?;
        let first_error = calls();
        let ended = result::group_end();
        match (first_error, ended) {
            (Some(e), _) | (None, Err(e)) => Err(failed(what, e)),
            _ => Ok(()),
        }
    }

    /// Queues `call(rank, device, comm, stream)` for every rank inside one NCCL group.
    fn each(
        &self,
        devices: &[Device],
        what: &str,
        mut call: impl FnMut(
            usize,
            &CudaDevice,
            sys::ncclComm_t,
            sys::cudaStream_t,
        ) -> Result<(), result::NcclError>,
    ) -> Result<(), Error> {
        self.grouped(devices, what, || {
            let mut first_error = None;
            for (rank, device) in devices.iter().enumerate() {
                let d = cuda(device);
                let stream = d.stream.cu_stream() as sys::cudaStream_t;
                if let Err(e) = call(rank, d, self.shared.comms[rank], stream) {
                    first_error.get_or_insert(e);
                }
            }
            first_error
        })
    }

    /// `ncclSend`/`ncclRecv` for every transfer (`local[i]`: transfer i's rank in this
    /// process), as bytes, in one group.
    pub(crate) fn send_recv<T: Pod>(
        &self,
        devices: &[Device],
        transfers: &mut [Transfer<'_, T>],
        local: &[usize],
    ) -> Result<(), Error> {
        let size = std::mem::size_of::<T>();
        let mut ops = Vec::with_capacity(transfers.len());
        let mut held = Vec::with_capacity(transfers.len());
        for (transfer, &rank) in transfers.iter_mut().zip(local) {
            let stream = &cuda(&devices[rank]).stream;
            let (ptr, guard, range, peer, send) = match transfer {
                Transfer::Send { buffer, range, to } => {
                    let (p, g) = memory(buffer).slice.device_ptr(stream);
                    (p, g, range.clone(), *to, true)
                }
                Transfer::Recv {
                    buffer,
                    range,
                    from,
                } => {
                    let (p, g) = memory_mut(buffer).slice.device_ptr_mut(stream);
                    (p, g, range.clone(), *from, false)
                }
            };
            held.push(guard);
            ops.push(P2p {
                rank,
                ptr: ptr + (range.start * size) as u64,
                bytes: range.len() * size,
                peer,
                send,
            });
        }
        self.p2p(devices, &ops)
    }

    /// Rank r's `inputs` part for rank q (`counts[r][q]` elements, parts in rank order) to
    /// rank q's `outputs`, packed in rank order: one send and one receive per pair of ranks,
    /// in one group. `first`: the global rank of this process's first device.
    pub(crate) fn all_to_all<T: Pod>(
        &self,
        devices: &[Device],
        inputs: &[Buffer<T>],
        counts: &[Vec<usize>],
        outputs: &mut [Buffer<T>],
        first: usize,
    ) -> Result<(), Error> {
        let size = std::mem::size_of::<T>();
        let mut ops = Vec::with_capacity(2 * counts.len() * devices.len());
        let mut held = Vec::with_capacity(2 * devices.len());
        for (rank, (input, output)) in inputs.iter().zip(outputs.iter_mut()).enumerate() {
            let stream = &cuda(&devices[rank]).stream;
            let me = first + rank;
            let (sent, g) = memory(input).slice.device_ptr(stream);
            held.push(g);
            let (got, g) = memory_mut(output).slice.device_ptr_mut(stream);
            held.push(g);
            let (mut at_sent, mut at_got) = (0usize, 0usize);
            for (peer, row) in counts.iter().enumerate() {
                let (out, inn) = (counts[me][peer], row[me]);
                let (from, to) = (sent + (at_sent * size) as u64, got + (at_got * size) as u64);
                if peer == me {
                    // A rank's own part is a copy inside its memory, queued before the
                    // group: NCCL's send to itself goes through its channels at a fraction
                    // of the memory's speed.
                    if out > 0 {
                        let d = cuda(&devices[rank]);
                        let what = "copying a rank's own part";
                        peer::copy_on(d, d, to, from, out * size, what)?;
                    }
                } else {
                    // Empty parts are left out on both sides (the table is the job's).
                    if out > 0 {
                        ops.push(P2p::new(rank, from, out * size, peer, true));
                    }
                    if inn > 0 {
                        ops.push(P2p::new(rank, to, inn * size, peer, false));
                    }
                }
                at_sent += out;
                at_got += inn;
            }
        }
        self.p2p(devices, &ops)
    }

    /// Every op's `ncclSend` or `ncclRecv` (as bytes) in one group.
    fn p2p(&self, devices: &[Device], ops: &[P2p]) -> Result<(), Error> {
        let bytes = sys::ncclDataType_t::ncclUint8;
        self.grouped(devices, "ncclSend/ncclRecv", || {
            let mut first_error = None;
            for op in ops {
                let stream = cuda(&devices[op.rank]).stream.cu_stream() as sys::cudaStream_t;
                let (comm, peer) = (self.shared.comms[op.rank], op.peer as i32);
                // SAFETY: `ptr` and `bytes` lie inside a buffer of this rank's device
                // (checked by `Collective`), borrowed for the whole call.
                let done = unsafe {
                    if op.send {
                        result::send(op.ptr as *const c_void, op.bytes, bytes, peer, comm, stream)
                    } else {
                        result::recv(op.ptr as *mut c_void, op.bytes, bytes, peer, comm, stream)
                    }
                };
                if let Err(e) = done {
                    first_error.get_or_insert(e);
                }
            }
            first_error
        })
    }

    pub(crate) fn all_reduce<T: Reducible>(
        &self,
        devices: &[Device],
        buffers: &mut [Buffer<T>],
        op: ReduceOp,
    ) -> Result<(), Error> {
        let (dtype, op, len) = (data_type(T::KIND), red_op(op), buffers[0].len());
        self.each(devices, "ncclAllReduce", |rank, d, comm, stream| {
            let (p, _w) = memory_mut(&mut buffers[rank])
                .slice
                .device_ptr_mut(&d.stream);
            let p = p as *mut c_void;
            // SAFETY: `p` holds `len` elements of `T` on this rank's device (checked).
            unsafe { result::all_reduce(p, p, len, dtype, op, comm, stream) }.map(drop)
        })
    }

    pub(crate) fn broadcast<T: Reducible>(
        &self,
        devices: &[Device],
        buffers: &mut [Buffer<T>],
        root: usize,
    ) -> Result<(), Error> {
        let (dtype, len) = (data_type(T::KIND), buffers[0].len());
        self.each(devices, "ncclBroadcast", |rank, d, comm, stream| {
            let (p, _w) = memory_mut(&mut buffers[rank])
                .slice
                .device_ptr_mut(&d.stream);
            let p = p as *mut c_void;
            // SAFETY: as in all_reduce.
            unsafe { result::broadcast(p, p, len, dtype, root as i32, comm, stream) }.map(drop)
        })
    }

    pub(crate) fn all_gather<T: Reducible>(
        &self,
        devices: &[Device],
        inputs: &[Buffer<T>],
        outputs: &mut [Buffer<T>],
    ) -> Result<(), Error> {
        let (dtype, len) = (data_type(T::KIND), inputs[0].len());
        self.each(devices, "ncclAllGather", |rank, d, comm, stream| {
            let (s, _r) = memory(&inputs[rank]).slice.device_ptr(&d.stream);
            let (r, _w) = memory_mut(&mut outputs[rank])
                .slice
                .device_ptr_mut(&d.stream);
            // SAFETY: `s` holds `len` elements, `r` `len` per rank (checked).
            unsafe {
                result::all_gather(
                    s as *const c_void,
                    r as *mut c_void,
                    len,
                    dtype,
                    comm,
                    stream,
                )
            }
            .map(drop)
        })
    }

    pub(crate) fn reduce_scatter<T: Reducible>(
        &self,
        devices: &[Device],
        inputs: &[Buffer<T>],
        outputs: &mut [Buffer<T>],
        op: ReduceOp,
    ) -> Result<(), Error> {
        let (dtype, op, part) = (data_type(T::KIND), red_op(op), outputs[0].len());
        self.each(devices, "ncclReduceScatter", |rank, d, comm, stream| {
            let (s, _r) = memory(&inputs[rank]).slice.device_ptr(&d.stream);
            let (r, _w) = memory_mut(&mut outputs[rank])
                .slice
                .device_ptr_mut(&d.stream);
            // SAFETY: `s` holds `part` elements per rank, `r` `part` (checked).
            unsafe {
                result::reduce_scatter(
                    s as *const c_void,
                    r as *mut c_void,
                    part,
                    dtype,
                    op,
                    comm,
                    stream,
                )
            }
            .map(drop)
        })
    }
}

/// The communicators are destroyed with the last reference to them: a device's wait that
/// holds one (upgraded from its `Weak`) keeps them alive while it asks them.
impl Drop for Shared {
    fn drop(&mut self) {
        if self.aborted.get().is_some() {
            return; // `ncclCommAbort` freed them
        }
        for &comm in &self.comms {
            // SAFETY: made by NCCL, destroyed once, here (not aborted: checked above).
            // Errors have nobody to go to.
            let _ = unsafe { result::comm_destroy(comm) };
        }
    }
}
