//! Collective operations over the devices of one process: all-reduce, broadcast,
//! all-gather and reduce-scatter on one `Buffer` per device, and point-to-point transfers
//! between ranks (`send_recv`). Over CUDA devices (each GPU
//! once) they are NCCL's, loaded at run time as the driver is (`cuda/nccl.rs`): queued on
//! each device's stream after its launches, GPU to GPU. Over any other devices (Vulkan, the
//! cpu, a mix of backends) rgpu reads every buffer back, combines them in host memory and
//! writes the results: `Collective::engine` says which.

use std::ops::Range;

use bytemuck::Pod;

use crate::buffer::Buffer;
use crate::device::Device;
use crate::error::Error;

/// How `all_reduce` and `reduce_scatter` combine the devices' elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceOp {
    /// The sum (wrapping for integers, as NCCL's).
    Sum,
    /// The smallest.
    Min,
    /// The largest.
    Max,
}

/// One half of a point-to-point transfer (`Collective::send_recv`): part of a buffer sent to
/// a rank, or received from one. Its own rank is its buffer's device's.
pub enum Transfer<'a, T: Pod> {
    /// `buffer[range]` goes to rank `to`.
    Send {
        buffer: &'a Buffer<T>,
        range: Range<usize>,
        to: usize,
    },
    /// `buffer[range]` becomes what rank `from` sends (as many elements).
    Recv {
        buffer: &'a mut Buffer<T>,
        range: Range<usize>,
        from: usize,
    },
}

impl<'a, T: Pod> Transfer<'a, T> {
    /// The whole of `buffer` to rank `to`.
    pub fn send(buffer: &'a Buffer<T>, to: usize) -> Self {
        let range = 0..buffer.len();
        Transfer::Send { buffer, range, to }
    }

    /// The whole of `buffer` from rank `from`.
    pub fn recv(buffer: &'a mut Buffer<T>, from: usize) -> Self {
        let range = 0..buffer.len();
        Transfer::Recv {
            buffer,
            range,
            from,
        }
    }

    /// The buffer's part this transfer moves, the peer rank, and whether it sends.
    fn parts(&self) -> (&Buffer<T>, &Range<usize>, usize, bool) {
        match self {
            Transfer::Send { buffer, range, to } => (buffer, range, *to, true),
            Transfer::Recv {
                buffer,
                range,
                from,
            } => (buffer, range, *from, false),
        }
    }
}

/// An element type collectives work on: `u32`, `i32`, `f32`, `f64`.
pub trait Reducible: Pod + PartialOrd {
    /// The type's name in NCCL's terms.
    #[doc(hidden)]
    const KIND: ElementKind;
    /// `a` and `b` combined by `op`.
    fn combine(op: ReduceOp, a: Self, b: Self) -> Self;
}

/// The element types `Reducible` covers.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElementKind {
    U32,
    I32,
    F32,
    F64,
}

macro_rules! reducible {
    ($t:ty, $kind:ident, $add:expr) => {
        impl Reducible for $t {
            const KIND: ElementKind = ElementKind::$kind;
            fn combine(op: ReduceOp, a: Self, b: Self) -> Self {
                match op {
                    ReduceOp::Sum => $add(a, b),
                    ReduceOp::Min => {
                        if b < a {
                            b
                        } else {
                            a
                        }
                    }
                    ReduceOp::Max => {
                        if b > a {
                            b
                        } else {
                            a
                        }
                    }
                }
            }
        }
    };
}

reducible!(u32, U32, u32::wrapping_add);
reducible!(i32, I32, i32::wrapping_add);
reducible!(f32, F32, |a: f32, b: f32| a + b);
reducible!(f64, F64, |a: f64, b: f64| a + b);

/// The devices that take part in collective operations: all of them in one process
/// (`new`), or this process's one device of a job of several processes (`join`,
/// `from_env`).
pub struct Collective {
    /// This process's devices, in rank order.
    devices: Vec<Device>,
    /// How many ranks the job has (all processes').
    ranks: usize,
    /// The rank of `devices[0]` (0 unless this is one process of a job).
    first: usize,
    #[cfg(feature = "cuda")]
    nccl: Option<crate::cuda::nccl::Comms>,
}

/// The variables `Collective::from_env` reads: NCCL's unique id (`Collective::unique_id`, made
/// once by the launcher), and the rank and the job's size as torchrun (`RANK`, `WORLD_SIZE`),
/// Open MPI (`OMPI_COMM_WORLD_RANK`, `..._SIZE`) or PMI (`PMI_RANK`, `PMI_SIZE`) set them.
pub const NCCL_ID_VAR: &str = "RGPU_NCCL_ID";
const RANK_VARS: [(&str, &str); 3] = [
    ("RANK", "WORLD_SIZE"),
    ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"),
    ("PMI_RANK", "PMI_SIZE"),
];

impl Collective {
    /// The devices `devices` (rank i is `devices[i]`). CUDA devices only, each GPU once:
    /// NCCL's communicators (`Error::Unavailable` saying how to install NCCL when its
    /// library is missing); any other set: rgpu's host path.
    pub fn new(devices: &[Device]) -> Result<Collective, Error> {
        if devices.is_empty() {
            return Err(argument(
                "Collective::new",
                "devices",
                "no devices: pass one per rank".into(),
            ));
        }
        #[cfg(feature = "cuda")]
        let nccl = if devices
            .iter()
            .all(|d| d.backend() == crate::backend::Backend::Cuda)
        {
            Some(crate::cuda::nccl::Comms::new(devices)?)
        } else {
            None
        };
        Ok(Collective {
            devices: devices.to_vec(),
            ranks: devices.len(),
            first: 0,
            #[cfg(feature = "cuda")]
            nccl,
        })
    }

    /// A new NCCL unique id, as text for the launcher to give every process of a job
    /// (`RGPU_NCCL_ID`, or `join`'s `id`). Made once per job, by one process.
    pub fn unique_id() -> Result<String, Error> {
        #[cfg(feature = "cuda")]
        return crate::cuda::nccl::unique_id();
        #[cfg(not(feature = "cuda"))]
        Err(Error::NotBuilt {
            backend: crate::backend::Backend::Cuda,
        })
    }

    /// Joins a job of `ranks` processes as rank `rank`, on `device` (a CUDA device: NCCL),
    /// with the job's unique id (`unique_id`, from the launcher). Waits for every rank to
    /// join, at most the device's launch timeout (`RGPU_LAUNCH_TIMEOUT_MS`): a rank that
    /// never comes is `Error::Timeout`, not a hang.
    pub fn join(device: &Device, rank: usize, ranks: usize, id: &str) -> Result<Collective, Error> {
        if rank >= ranks {
            let reason = format!("rank {rank} of a job of {ranks}: ranks count from 0");
            return Err(argument("Collective::join", "rank", reason));
        }
        #[cfg(feature = "cuda")]
        if device.backend() == crate::backend::Backend::Cuda {
            let nccl = crate::cuda::nccl::Comms::join(device, rank, ranks, id)?;
            return Ok(Collective {
                devices: vec![device.clone()],
                ranks,
                first: rank,
                nccl: Some(nccl),
            });
        }
        let _ = id;
        Err(Error::unavailable(
            device.backend(),
            "collectives across processes need NCCL: join with a CUDA device",
        ))
    }

    /// `join` with what the launcher set: `RGPU_NCCL_ID`, and the rank and job size of
    /// torchrun, Open MPI or PMI (`RANK`/`WORLD_SIZE`, `OMPI_COMM_WORLD_RANK`/`_SIZE`,
    /// `PMI_RANK`/`PMI_SIZE`).
    pub fn from_env(device: &Device) -> Result<Collective, Error> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        let Some(id) = var(NCCL_ID_VAR) else {
            return Err(Error::Config {
                reason: format!(
                    "{NCCL_ID_VAR} is not set: the launcher makes one id per job \
                     (Collective::unique_id) and gives it to every process"
                ),
            });
        };
        let Some((rank, size)) = RANK_VARS
            .iter()
            .find_map(|(r, s)| Some((*r, var(r)?, *s, var(s)?)))
            .map(|(r, rank, s, size)| (number(r, &rank), number(s, &size)))
        else {
            return Err(Error::Config {
                reason: "no rank is set: set RANK and WORLD_SIZE (as torchrun does), or run \
                         under mpirun (OMPI_COMM_WORLD_RANK, PMI_RANK)"
                    .into(),
            });
        };
        Collective::join(device, rank?, size?, &id)
    }

    /// How many ranks take part (all processes' devices).
    pub fn len(&self) -> usize {
        self.ranks
    }

    /// Whether no rank takes part (never: `new` and `join` refuse that).
    pub fn is_empty(&self) -> bool {
        self.ranks == 0
    }

    /// What moves the data: "NCCL 2.28.3" or "host memory (rgpu reads back and uploads)".
    pub fn engine(&self) -> String {
        #[cfg(feature = "cuda")]
        if let Some(nccl) = &self.nccl {
            return nccl.name();
        }
        "host memory (rgpu reads back and uploads)".into()
    }

    /// Every device's buffer becomes the elementwise `op` of all of them (equal lengths).
    /// NCCL queues it after each device's launches; the host path returns when done.
    pub fn all_reduce<T: Reducible>(
        &self,
        buffers: &mut [Buffer<T>],
        op: ReduceOp,
    ) -> Result<(), Error> {
        self.check("Collective::all_reduce", "buffers", buffers, None)?;
        #[cfg(feature = "cuda")]
        if let Some(nccl) = &self.nccl {
            return nccl.all_reduce(&self.devices, buffers, op);
        }
        let total = combined(&read_all(buffers)?, op);
        buffers.iter_mut().try_for_each(|b| b.write(&total))
    }

    /// Every device's buffer becomes a copy of rank `root`'s (equal lengths).
    pub fn broadcast<T: Reducible>(
        &self,
        buffers: &mut [Buffer<T>],
        root: usize,
    ) -> Result<(), Error> {
        self.check("Collective::broadcast", "buffers", buffers, None)?;
        if root >= self.len() {
            let reason = format!(
                "rank {root} of {} devices: pass 0..{}",
                self.len(),
                self.len()
            );
            return Err(argument("Collective::broadcast", "root", reason));
        }
        #[cfg(feature = "cuda")]
        if let Some(nccl) = &self.nccl {
            return nccl.broadcast(&self.devices, buffers, root);
        }
        let data = buffers[root].read()?;
        buffers.iter_mut().try_for_each(|b| b.write(&data))
    }

    /// Each device's `outputs` buffer (`len()` times an input's length) becomes every
    /// rank's input, in rank order.
    pub fn all_gather<T: Reducible>(
        &self,
        inputs: &[Buffer<T>],
        outputs: &mut [Buffer<T>],
    ) -> Result<(), Error> {
        let len = self.check("Collective::all_gather", "inputs", inputs, None)?;
        self.check(
            "Collective::all_gather",
            "outputs",
            outputs,
            Some(len * self.len()),
        )?;
        #[cfg(feature = "cuda")]
        if let Some(nccl) = &self.nccl {
            return nccl.all_gather(&self.devices, inputs, outputs);
        }
        let all: Vec<T> = read_all(inputs)?.concat();
        outputs.iter_mut().try_for_each(|b| b.write(&all))
    }

    /// Rank i's `outputs` buffer (an input's length / `len()`) becomes part i of the
    /// elementwise `op` of every rank's input.
    pub fn reduce_scatter<T: Reducible>(
        &self,
        inputs: &[Buffer<T>],
        outputs: &mut [Buffer<T>],
        op: ReduceOp,
    ) -> Result<(), Error> {
        let len = self.check("Collective::reduce_scatter", "inputs", inputs, None)?;
        if len % self.len() != 0 {
            let reason = format!(
                "{len} elements do not split into {} equal parts: pad the inputs",
                self.len()
            );
            return Err(argument("Collective::reduce_scatter", "inputs", reason));
        }
        let part = len / self.len();
        self.check("Collective::reduce_scatter", "outputs", outputs, Some(part))?;
        #[cfg(feature = "cuda")]
        if let Some(nccl) = &self.nccl {
            return nccl.reduce_scatter(&self.devices, inputs, outputs, op);
        }
        let total = combined(&read_all(inputs)?, op);
        outputs
            .iter_mut()
            .zip(total.chunks(part.max(1)))
            .try_for_each(|(b, chunk)| b.write(chunk))
    }

    /// Point-to-point transfers, all in flight together (so a ring or an all-to-all cannot
    /// deadlock): each `Send` of rank r to rank q is matched, in order, by a `Recv` on rank q
    /// from rank r of as many elements (in a job of processes, by the other process's call).
    /// A transfer's rank is its buffer's device's; a rank may send to itself. Over CUDA
    /// devices NCCL's `ncclSend`/`ncclRecv` in one group, queued after each device's
    /// launches (copies between the GPUs ordered by events measured 1.2x slower at 16 MiB
    /// and faster only from 64 MiB); otherwise rgpu reads each sent range back and writes
    /// it where it is received.
    pub fn send_recv<T: Pod>(&self, transfers: &mut [Transfer<'_, T>]) -> Result<(), Error> {
        const WHAT: &str = "Collective::send_recv";
        let mut local = Vec::with_capacity(transfers.len());
        for (i, transfer) in transfers.iter().enumerate() {
            let (buffer, range, peer, _) = transfer.parts();
            let Some(rank) = self.devices.iter().position(|d| d.owns(buffer)) else {
                return Err(Error::WrongDevice {
                    expected: "a device of this Collective".into(),
                    found: buffer.raw.device.label(),
                });
            };
            if range.start > range.end || range.end > buffer.len() {
                let reason = format!(
                    "transfer {i}'s range {range:?} is not inside its buffer of {} elements",
                    buffer.len()
                );
                return Err(argument(WHAT, "transfers", reason));
            }
            if peer >= self.ranks {
                let reason = format!(
                    "transfer {i} names rank {peer} of a job of {}: ranks count from 0",
                    self.ranks
                );
                return Err(argument(WHAT, "transfers", reason));
            }
            local.push(rank);
        }
        // Every rank is here (not a job of processes): unmatched transfers are refused
        // before NCCL would wait for them for ever.
        let matches = if self.ranks == self.devices.len() {
            matched(transfers, &local)?
        } else {
            Vec::new()
        };
        #[cfg(feature = "cuda")]
        if let Some(nccl) = &self.nccl {
            return nccl.send_recv(&self.devices, transfers, &local);
        }
        for (q, s) in matches.into_iter().enumerate() {
            if s == q {
                continue;
            }
            let (sent, range, _, _) = transfers[s].parts();
            let data = sent.read_range(range.clone())?;
            if let Transfer::Recv { buffer, range, .. } = &mut transfers[q] {
                buffer.write_at(range.start, &data)?;
            }
        }
        Ok(())
    }

    /// All to all with a part per pair of ranks: `counts[r][q]` elements of rank r's input
    /// (its parts for ranks 0, 1, ... one after another from its start) go to rank q, whose
    /// output gets its parts from ranks 0, 1, ... packed from its start. `counts` is the whole
    /// job's ranks x ranks table (in a job of processes, gather it first: `all_gather`).
    /// Over the CUDA devices of one process, copies between the GPUs ordered by events (the
    /// copy engines: both directions of a link at once, nothing waiting on the host); in a
    /// job of processes one NCCL group of sends and receives; otherwise through host memory.
    pub fn all_to_all<T: Pod>(
        &self,
        inputs: &[Buffer<T>],
        counts: &[Vec<usize>],
        outputs: &mut [Buffer<T>],
    ) -> Result<(), Error> {
        const WHAT: &str = "Collective::all_to_all";
        self.on_devices(WHAT, "inputs", inputs)?;
        self.on_devices(WHAT, "outputs", outputs)?;
        let n = self.ranks;
        if counts.len() != n || counts.iter().any(|row| row.len() != n) {
            let reason = format!(
                "counts must be {n} rows of {n} (counts[r][q]: what rank r sends to rank q)"
            );
            return Err(argument(WHAT, "counts", reason));
        }
        for (local, (input, output)) in inputs.iter().zip(outputs.iter()).enumerate() {
            let me = self.first + local;
            let (sends, gets) = (
                counts[me].iter().sum::<usize>(),
                counts.iter().map(|row| row[me]).sum::<usize>(),
            );
            if sends > input.len() {
                let reason = format!(
                    "rank {me} sends {sends} elements but its input holds {}",
                    input.len()
                );
                return Err(argument(WHAT, "inputs", reason));
            }
            if gets > output.len() {
                let reason = format!(
                    "rank {me} receives {gets} elements but its output holds {}: make it \
                     at least that long",
                    output.len()
                );
                return Err(argument(WHAT, "outputs", reason));
            }
        }
        #[cfg(feature = "cuda")]
        if let Some(nccl) = &self.nccl {
            if self.ranks == self.devices.len() {
                return crate::cuda::peer::all_to_all(&self.devices, inputs, counts, outputs);
            }
            return nccl.all_to_all(&self.devices, inputs, counts, outputs, self.first);
        }
        for (q, output) in outputs.iter_mut().enumerate() {
            let mut at = 0;
            for (r, input) in inputs.iter().enumerate() {
                let start: usize = counts[r][..q].iter().sum();
                let part = input.read_range(start..start + counts[r][q])?;
                output.write_at(at, &part)?;
                at += part.len();
            }
        }
        Ok(())
    }

    /// One buffer per device of this process, on that device.
    fn on_devices<T: Pod>(
        &self,
        what: &'static str,
        param: &'static str,
        buffers: &[Buffer<T>],
    ) -> Result<(), Error> {
        if buffers.len() != self.devices.len() {
            let reason = format!(
                "{} buffers for {} devices: pass one per device, in rank order",
                buffers.len(),
                self.devices.len()
            );
            return Err(argument(what, param, reason));
        }
        for (rank, (buffer, device)) in buffers.iter().zip(&self.devices).enumerate() {
            if !device.owns(buffer) {
                return Err(Error::WrongDevice {
                    expected: format!("rank {}'s {}", self.first + rank, device.inner.label()),
                    found: buffer.raw.device.label(),
                });
            }
        }
        Ok(())
    }

    /// One buffer per device, on that device, all of one length (`want`, or the first's):
    /// that length.
    fn check<T: Pod>(
        &self,
        what: &'static str,
        param: &'static str,
        buffers: &[Buffer<T>],
        want: Option<usize>,
    ) -> Result<usize, Error> {
        self.on_devices(what, param, buffers)?;
        let len = want.unwrap_or(buffers[0].len());
        for (rank, buffer) in buffers.iter().enumerate() {
            if buffer.len() != len {
                let reason = format!(
                    "rank {rank}'s buffer has {} elements where {len} are needed",
                    buffer.len()
                );
                return Err(argument(what, param, reason));
            }
        }
        Ok(len)
    }
}

/// `value` of variable `name` as a count.
fn number(name: &str, value: &str) -> Result<usize, Error> {
    value.trim().parse().map_err(|_| Error::Config {
        reason: format!("{name}={value:?} is not a number"),
    })
}

fn argument(what: &'static str, param: &'static str, reason: String) -> Error {
    Error::Argument {
        kernel: what,
        param,
        reason,
    }
}

fn read_all<T: Pod>(buffers: &[Buffer<T>]) -> Result<Vec<Vec<T>>, Error> {
    buffers.iter().map(Buffer::read).collect()
}

/// For each transfer, in order: for a `Recv`, the index of the `Send` it takes; a `Send`
/// maps to itself. Ranks are local here:
/// the host path has every rank in this process. Errors name what is unmatched.
fn matched<T: Pod>(transfers: &[Transfer<'_, T>], rank: &[usize]) -> Result<Vec<usize>, Error> {
    let mut taken = vec![false; transfers.len()];
    let mut pairs = Vec::with_capacity(transfers.len());
    for (q, transfer) in transfers.iter().enumerate() {
        let (_, range, from, sends) = transfer.parts();
        if sends {
            pairs.push(q);
            continue;
        }
        let send = (0..transfers.len()).find(|&s| {
            let (_, _, to, is_send) = transfers[s].parts();
            is_send && !taken[s] && rank[s] == from && to == rank[q]
        });
        let Some(s) = send else {
            let reason = format!(
                "transfer {q} receives on rank {} from rank {from}, but no send of rank {from} \
                 to rank {} is left to match it: add one",
                rank[q], rank[q]
            );
            return Err(argument("Collective::send_recv", "transfers", reason));
        };
        taken[s] = true;
        let sent = transfers[s].parts().1.len();
        if sent != range.len() {
            let reason = format!(
                "transfer {s} sends {sent} elements where transfer {q} receives {}: make the \
                 ranges the same length",
                range.len()
            );
            return Err(argument("Collective::send_recv", "transfers", reason));
        }
        pairs.push(s);
    }
    if let Some(s) = (0..transfers.len()).find(|&s| transfers[s].parts().3 && !taken[s]) {
        let (_, _, to, _) = transfers[s].parts();
        let reason = format!(
            "transfer {s} sends from rank {} to rank {to}, but rank {to} receives nothing from \
             it: add the matching Transfer::Recv",
            rank[s]
        );
        return Err(argument("Collective::send_recv", "transfers", reason));
    }
    Ok(pairs)
}

/// The elementwise `op` of `parts` (rank order).
fn combined<T: Reducible>(parts: &[Vec<T>], op: ReduceOp) -> Vec<T> {
    let mut total = parts[0].clone();
    for part in &parts[1..] {
        for (t, &v) in total.iter_mut().zip(part) {
            *t = T::combine(op, *t, v);
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_op_combines_as_nccl_does() {
        assert_eq!(u32::combine(ReduceOp::Sum, u32::MAX, 2), 1);
        assert_eq!(i32::combine(ReduceOp::Min, -3, 2), -3);
        assert_eq!(f32::combine(ReduceOp::Max, -0.5, 2.5), 2.5);
        assert_eq!(f64::combine(ReduceOp::Sum, 0.25, 0.5), 0.75);
        let parts = vec![vec![1u32, 5, 9], vec![4, 2, 9], vec![0, 7, 1]];
        assert_eq!(combined(&parts, ReduceOp::Sum), vec![5, 14, 19]);
        assert_eq!(combined(&parts, ReduceOp::Min), vec![0, 2, 1]);
        assert_eq!(combined(&parts, ReduceOp::Max), vec![4, 7, 9]);
    }
}
