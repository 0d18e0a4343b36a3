//! `Buffer<T>` (device memory owned by one `Device`, made by `Device::upload` and
//! `Device::zeros`), its type-erased `RawBuffer`, and what a launcher accepts for buffer
//! parameters: `Input<T>` (read-only) and `InputOutput<T>` (read-write), for host slices,
//! `Vec`s and `Buffer`s.

use std::marker::PhantomData;
use std::mem::size_of;
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

use bytemuck::Pod;

use crate::api::{self, DeviceBuffer};
use crate::backend::Backend;
use crate::device::{Device, DeviceInner};
use crate::error::Error;
use crate::registry::{HasMemory, Memory};

/// A read-only buffer argument: host bytes (uploaded for the launch) or a device buffer
/// (used in place).
pub type Src<'a> = api::Src<'a, RawBuffer>;

/// A read-write buffer argument: host bytes (uploaded, and downloaded after the launch)
/// or a device buffer.
pub type Dst<'a> = api::Dst<'a, RawBuffer>;

impl Device {
    /// A buffer holding a copy of `data`.
    pub fn upload<T: Pod>(&self, data: &[T]) -> Result<Buffer<T>, Error> {
        let bytes: &[u8] = bytemuck::cast_slice(data);
        let memory = self.inner.kind.upload(bytes, std::mem::align_of::<T>())?;
        Ok(Buffer::from_raw(self.raw(bytes.len(), memory), data.len()))
    }

    /// A buffer of `len` zeroed elements.
    pub fn zeros<T: Pod>(&self, len: usize) -> Result<Buffer<T>, Error> {
        let bytes =
            len.checked_mul(std::mem::size_of::<T>())
                .ok_or_else(|| Error::OutOfMemory {
                    backend: self.backend(),
                    bytes: u64::MAX,
                    reason: format!("{len} elements overflow the address space"),
                })?;
        let memory = self.inner.kind.zeros(bytes, std::mem::align_of::<T>())?;
        Ok(Buffer::from_raw(self.raw(bytes, memory), len))
    }

    fn raw(&self, bytes: usize, memory: Memory) -> RawBuffer {
        RawBuffer {
            device: Arc::clone(&self.inner),
            bytes,
            memory,
        }
    }
}

/// Device memory without its element type: what `Src`/`Dst` carry to `launch`.
pub struct RawBuffer {
    pub(crate) device: Arc<DeviceInner>,
    /// Bytes the buffer holds (the allocation underneath has at least 4).
    pub(crate) bytes: usize,
    pub(crate) memory: Memory,
}

impl RawBuffer {
    /// Bytes the buffer holds.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    pub fn backend(&self) -> Backend {
        self.device.kind.backend()
    }

    /// The bytes of a cpu buffer; `WrongDevice` for a GPU buffer.
    pub(crate) fn host_bytes(&self) -> Result<&[u8], Error> {
        self.memory.host_bytes().ok_or_else(|| self.not_host())
    }

    pub(crate) fn host_bytes_mut(&mut self) -> Result<&mut [u8], Error> {
        let error = self.not_host();
        self.memory.host_bytes_mut().ok_or(error)
    }

    fn not_host(&self) -> Error {
        Error::WrongDevice {
            expected: "the cpu (a cpu Buffer or host memory)".into(),
            found: self.device.label(),
        }
    }
}

impl Drop for RawBuffer {
    fn drop(&mut self) {
        self.device.kind.release(&mut self.memory);
    }
}

impl DeviceBuffer for RawBuffer {
    fn bytes(&self) -> usize {
        self.bytes
    }
}

impl HasMemory for RawBuffer {
    fn any_memory(&self) -> &Memory {
        &self.memory
    }

    fn any_memory_mut(&mut self) -> &mut Memory {
        &mut self.memory
    }
}

/// `len` elements of `T` in the memory of one `Device`.
// repr(C): `Buffer<T>` and `Buffer<U>` have one layout (they differ only in a zero-sized
// marker), which `cast`/`cast_mut` rely on.
#[repr(C)]
pub struct Buffer<T: Pod> {
    pub(crate) raw: RawBuffer,
    len: usize,
    _elements: PhantomData<T>,
}

impl<T: Pod> Buffer<T> {
    pub(crate) fn from_raw(raw: RawBuffer, len: usize) -> Self {
        Self {
            raw,
            len,
            _elements: PhantomData,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn backend(&self) -> Backend {
        self.raw.backend()
    }

    /// The elements, after every launch queued so far has finished.
    pub fn read(&self) -> Result<Vec<T>, Error> {
        self.read_range(..)
    }

    /// Copies the elements into `out` (`out.len() == len()`), after every queued launch.
    pub fn read_into(&self, out: &mut [T]) -> Result<(), Error> {
        self.check_len("read_into", out.len())?;
        self.read_at(0, out)
    }

    /// Replaces the elements with `data` (`data.len() == len()`), after every queued launch.
    pub fn write(&mut self, data: &[T]) -> Result<(), Error> {
        self.check_len("write", data.len())?;
        self.write_at(0, data)
    }

    /// Replaces the elements with those of `src` (as long), a buffer of any device of any
    /// backend, after the launches queued on both: `Device::copy_from` into a buffer that
    /// exists. Between two CUDA devices GPU to GPU (`Device::copy_path` says how), returning
    /// once copied; otherwise through host memory.
    pub fn copy_from(&mut self, src: &Buffer<T>) -> Result<(), Error> {
        self.check_len("copy_from", src.len())?;
        let (to, from) = (&self.raw.device.kind, &src.raw.device.kind);
        match to.copy_between(from, &src.raw.memory, &mut self.raw.memory) {
            Some(done) => done,
            None => self.write(&src.read()?),
        }
    }

    /// The elements in `range` (`a..b`, `a..`, `..b`, `..`), after every queued launch.
    /// A range outside `0..len()` is `Error::Transfer`, naming both.
    pub fn read_range(&self, range: impl RangeBounds<usize>) -> Result<Vec<T>, Error> {
        let (start, end) = self.bounds("read_range", range)?;
        let mut out = vec![T::zeroed(); end - start];
        self.read_at(start, &mut out)?;
        Ok(out)
    }

    /// Copies elements `start..start + out.len()` into `out`, after every queued launch.
    pub fn read_at(&self, start: usize, out: &mut [T]) -> Result<(), Error> {
        let (start, end) = self.bounds("read_at", start..start.saturating_add(out.len()))?;
        let (size, device) = (size_of::<T>(), &self.raw.device.kind);
        let (first, last) = (start * size, end * size);
        let (lo, hi) = self.words(first, last);
        if (lo, hi) == (first, last) {
            return device.read(&self.raw.memory, first, bytemuck::cast_slice_mut(out));
        }
        // Elements smaller than a word: read the whole words around them.
        let mut words = vec![0u8; hi - lo];
        device.read(&self.raw.memory, lo, &mut words)?;
        bytemuck::cast_slice_mut(out).copy_from_slice(&words[first - lo..last - lo]);
        Ok(())
    }

    /// Replaces elements `start..start + data.len()` with `data`, after every queued launch.
    /// A range outside `0..len()` is `Error::Transfer`, naming both.
    pub fn write_at(&mut self, start: usize, data: &[T]) -> Result<(), Error> {
        let (start, end) = self.bounds("write_at", start..start.saturating_add(data.len()))?;
        let size = size_of::<T>();
        let (first, last) = (start * size, end * size);
        let (lo, hi) = self.words(first, last);
        let bytes: &[u8] = bytemuck::cast_slice(data);
        let device = &self.raw.device.kind;
        if (lo, hi) == (first, last) {
            return device.write(&mut self.raw.memory, first, bytes);
        }
        // Elements smaller than a word: the words at either end keep their other bytes.
        let mut words = vec![0u8; hi - lo];
        let mut read = lo;
        if lo < first {
            read = (lo + 4).min(hi);
            device.read(&self.raw.memory, lo, &mut words[..read - lo])?;
        }
        let tail = (last & !3).max(read);
        if last < hi && tail < hi {
            device.read(&self.raw.memory, tail, &mut words[tail - lo..])?;
        }
        words[first - lo..last - lo].copy_from_slice(bytes);
        device.write(&mut self.raw.memory, lo, &words)
    }

    /// `range` as `(start, end)` inside `0..len()`, or the error naming both.
    fn bounds(&self, what: &str, range: impl RangeBounds<usize>) -> Result<(usize, usize), Error> {
        let start = match range.start_bound() {
            Bound::Included(&s) => Some(s),
            Bound::Excluded(&s) => s.checked_add(1),
            Bound::Unbounded => Some(0),
        };
        let end = match range.end_bound() {
            Bound::Included(&e) => e.checked_add(1),
            Bound::Excluded(&e) => Some(e),
            Bound::Unbounded => Some(self.len),
        };
        match (start, end) {
            (Some(s), Some(e)) if s <= e && e <= self.len => Ok((s, e)),
            _ => Err(Error::Transfer {
                backend: self.backend(),
                reason: format!(
                    "Buffer::{what}: elements {} are not inside the buffer's 0..{}: pass a \
                     range within it",
                    shown_range(start, end),
                    self.len
                ),
            }),
        }
    }

    /// The byte range `first..last` widened to whole words (what every backend copies),
    /// except at the buffer's end, which need not be a whole word.
    fn words(&self, first: usize, last: usize) -> (usize, usize) {
        let total = self.len * size_of::<T>();
        (first & !3, last.next_multiple_of(4).min(total))
    }

    /// The same memory as elements of `U`, a type of the same size (a `Buffer<f32>` as the
    /// `u32` bit patterns a kernel on words takes). `Error::Argument` when the sizes differ
    /// or `U` needs a larger alignment than `T`.
    pub fn cast<U: Pod>(&self) -> Result<&Buffer<U>, Error> {
        Self::check_cast::<U>()?;
        // SAFETY: `Buffer` is repr(C) and `Buffer<T>`, `Buffer<U>` differ only in the
        // zero-sized marker; `len` counts elements of the same size, and every bit pattern
        // is a valid `U` (`Pod`).
        Ok(unsafe { &*(self as *const Self).cast::<Buffer<U>>() })
    }

    /// [`Buffer::cast`], writable.
    pub fn cast_mut<U: Pod>(&mut self) -> Result<&mut Buffer<U>, Error> {
        Self::check_cast::<U>()?;
        // SAFETY: as in `cast`.
        Ok(unsafe { &mut *(self as *mut Self).cast::<Buffer<U>>() })
    }

    fn check_cast<U: Pod>() -> Result<(), Error> {
        let (from, to) = (std::mem::size_of::<T>(), std::mem::size_of::<U>());
        if from == to && std::mem::align_of::<U>() <= std::mem::align_of::<T>() {
            return Ok(());
        }
        Err(Error::Argument {
            kernel: "Buffer::cast",
            param: "U",
            reason: format!(
                "a buffer of {} ({from} bytes, align {}) cannot be seen as {} ({to} bytes, \
                 align {}): cast to a type of the same size and no larger alignment",
                std::any::type_name::<T>(),
                std::mem::align_of::<T>(),
                std::any::type_name::<U>(),
                std::mem::align_of::<U>()
            ),
        })
    }

    /// The type-erased buffer (for `Src::Buffer` / `Dst::Buffer`).
    pub fn raw(&self) -> &RawBuffer {
        &self.raw
    }

    pub fn raw_mut(&mut self) -> &mut RawBuffer {
        &mut self.raw
    }

    fn check_len(&self, what: &str, len: usize) -> Result<(), Error> {
        if len == self.len {
            return Ok(());
        }
        Err(Error::Transfer {
            backend: self.backend(),
            reason: format!(
                "Buffer::{what} got {len} elements for a buffer of {}: pass a slice of exactly \
                 that length",
                self.len
            ),
        })
    }
}

/// `a..b` for a message (`a..` past usize::MAX).
fn shown_range(start: Option<usize>, end: Option<usize>) -> String {
    let (start, end) = (start.map(|s| s.to_string()), end.map(|e| e.to_string()));
    format!("{}..{}", start.unwrap_or_default(), end.unwrap_or_default())
}

impl<T: Pod> std::fmt::Debug for Buffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Buffer")
            .field("len", &self.len)
            .field("device", &self.raw.device.label())
            .finish()
    }
}

/// What a launcher accepts for a read-only buffer parameter: `[T]`, `Vec<T>` or
/// `Buffer<T>`.
pub trait Input<T: Pod> {
    /// The argument for `launch`.
    fn src(&self) -> Src<'_>;
    /// Elements it holds.
    fn elements(&self) -> usize;
    /// The elements in host memory (a host slice, or a cpu `Buffer`'s memory), for the cpu
    /// backend; a GPU `Buffer` is `Error::WrongDevice`.
    fn host(&self) -> Result<&[T], Error>;
}

/// What a launcher accepts for a read-write buffer parameter: `[T]`, `Vec<T>` or
/// `Buffer<T>`; host data is written back after the launch.
pub trait InputOutput<T: Pod> {
    /// The argument for `launch`.
    fn dst(&mut self) -> Dst<'_>;
    /// Elements it holds.
    fn elements(&self) -> usize;
    /// As `Input::host`, writable.
    fn host_mut(&mut self) -> Result<&mut [T], Error>;
}

impl<T: Pod> Input<T> for [T] {
    fn src(&self) -> Src<'_> {
        Src::Host(bytemuck::cast_slice(self))
    }

    fn elements(&self) -> usize {
        self.len()
    }

    fn host(&self) -> Result<&[T], Error> {
        Ok(self)
    }
}

impl<T: Pod> Input<T> for Vec<T> {
    fn src(&self) -> Src<'_> {
        self.as_slice().src()
    }

    fn elements(&self) -> usize {
        self.len()
    }

    fn host(&self) -> Result<&[T], Error> {
        Ok(self)
    }
}

impl<T: Pod> Input<T> for Buffer<T> {
    fn src(&self) -> Src<'_> {
        Src::Buffer(&self.raw)
    }

    fn elements(&self) -> usize {
        self.len
    }

    fn host(&self) -> Result<&[T], Error> {
        let bytes = self.raw.host_bytes()?;
        bytemuck::try_cast_slice(bytes).map_err(|e| misaligned(e, self.backend()))
    }
}

impl<T: Pod> InputOutput<T> for [T] {
    fn dst(&mut self) -> Dst<'_> {
        Dst::Host(bytemuck::cast_slice_mut(self))
    }

    fn elements(&self) -> usize {
        self.len()
    }

    fn host_mut(&mut self) -> Result<&mut [T], Error> {
        Ok(self)
    }
}

impl<T: Pod> InputOutput<T> for Vec<T> {
    fn dst(&mut self) -> Dst<'_> {
        self.as_mut_slice().dst()
    }

    fn elements(&self) -> usize {
        self.len()
    }

    fn host_mut(&mut self) -> Result<&mut [T], Error> {
        Ok(self)
    }
}

impl<T: Pod> InputOutput<T> for Buffer<T> {
    fn dst(&mut self) -> Dst<'_> {
        Dst::Buffer(&mut self.raw)
    }

    fn elements(&self) -> usize {
        self.len
    }

    fn host_mut(&mut self) -> Result<&mut [T], Error> {
        let backend = self.backend();
        let bytes = self.raw.host_bytes_mut()?;
        bytemuck::try_cast_slice_mut(bytes).map_err(|e| misaligned(e, backend))
    }
}

/// Cannot happen (cpu buffers are allocated aligned for their `T`), but is a value anyway.
fn misaligned(e: bytemuck::PodCastError, backend: Backend) -> Error {
    Error::Transfer {
        backend,
        reason: format!("a cpu buffer's memory does not fit its element type ({e:?}): report this as an rgpu bug"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn send_sync<T: Send + Sync>() {}

    #[test]
    fn buffers_cross_threads() {
        send_sync::<Buffer<f32>>();
        send_sync::<RawBuffer>();
    }

    #[test]
    fn cpu_buffers_round_trip() {
        let device = Device::open(Backend::Cpu).unwrap();
        let mut b = device.upload(&[1u32, 2, 3]).unwrap();
        assert_eq!(
            (b.len(), b.is_empty(), b.backend()),
            (3, false, Backend::Cpu)
        );
        assert_eq!(b.read().unwrap(), [1, 2, 3]);
        b.write(&[4, 5, 6]).unwrap();
        let mut out = [0u32; 3];
        b.read_into(&mut out).unwrap();
        assert_eq!(out, [4, 5, 6]);
        assert_eq!(Input::host(&b).unwrap(), [4, 5, 6]);
        b.host_mut().unwrap()[0] = 9;
        assert_eq!(b.read().unwrap(), [9, 5, 6]);
        let e = b.write(&[1, 2]).unwrap_err();
        assert!(
            e.to_string().contains("got 2 elements for a buffer of 3"),
            "{e}"
        );
        assert!(b.read_into(&mut [0; 4]).is_err());
        let z = device.zeros::<u64>(5).unwrap();
        assert_eq!(z.read().unwrap(), [0; 5]);
        let empty = device.zeros::<f32>(0).unwrap();
        assert!(empty.is_empty() && empty.read().unwrap().is_empty());
        assert!(matches!(
            device.zeros::<u64>(usize::MAX),
            Err(Error::OutOfMemory { .. })
        ));
        assert!(format!("{b:?}").contains("len: 3"));
    }

    #[test]
    fn ranges_read_and_write_part_of_a_buffer() {
        let device = Device::open(Backend::Cpu).unwrap();
        let mut b = device.upload(&[1u32, 2, 3, 4, 5]).unwrap();
        assert_eq!(b.read_range(1..3).unwrap(), [2, 3]);
        assert_eq!(b.read_range(3..).unwrap(), [4, 5]);
        assert_eq!(b.read_range(..=1).unwrap(), [1, 2]);
        assert!(b.read_range(5..5).unwrap().is_empty());
        b.write_at(3, &[9, 8]).unwrap();
        let mut out = [0u32; 2];
        b.read_at(2, &mut out).unwrap();
        assert_eq!(out, [3, 9]);
        assert_eq!(b.read().unwrap(), [1, 2, 3, 9, 8]);
        for e in [
            b.read_range(4..6).unwrap_err(),
            b.write_at(4, &[1, 2]).unwrap_err(),
            b.read_at(usize::MAX, &mut out).unwrap_err(),
        ] {
            assert!(
                e.to_string().contains("not inside the buffer's 0..5"),
                "{e}"
            );
        }
        #[allow(clippy::reversed_empty_ranges)]
        let e = b.read_range(3..2).unwrap_err();
        assert_eq!(
            e.to_string(),
            "cpu: moving data to or from the device failed: Buffer::read_range: elements 3..2 \
             are not inside the buffer's 0..5: pass a range within it"
        );
        // Bytes: sub-word ranges keep the neighbouring bytes of their words.
        let mut bytes = device
            .upload(&[0u8, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
            .unwrap();
        assert_eq!(bytes.read_range(3..6).unwrap(), [3, 4, 5]);
        assert_eq!(bytes.read_range(9..).unwrap(), [9, 10]);
        bytes.write_at(1, &[21]).unwrap();
        bytes.write_at(4, &[24, 25]).unwrap();
        bytes.write_at(6, &[26, 27, 28, 29, 30]).unwrap();
        assert_eq!(
            bytes.read().unwrap(),
            [0, 21, 2, 3, 24, 25, 26, 27, 28, 29, 30]
        );
    }

    #[test]
    fn a_buffer_is_seen_as_another_type_of_its_size() {
        let device = Device::open(Backend::Cpu).unwrap();
        let mut b = device.upload(&[1.0f32, -0.0]).unwrap();
        assert_eq!(
            b.cast::<u32>().unwrap().read().unwrap(),
            [0x3f80_0000, 0x8000_0000]
        );
        b.cast_mut::<i32>().unwrap().write(&[-1, 2]).unwrap();
        assert_eq!(b.cast::<u32>().unwrap().read().unwrap(), [u32::MAX, 2]);
        let mut wide = device.upload(&[u64::MAX - 1]).unwrap();
        assert_eq!(
            wide.cast::<[u32; 2]>().unwrap().read().unwrap(),
            [[u32::MAX - 1, u32::MAX]]
        );
        assert!(wide.cast_mut::<u32>().is_err());
        let e = device
            .upload(&[[1u32; 2]])
            .unwrap()
            .cast::<u64>()
            .map(|_| ())
            .unwrap_err();
        assert!(e.to_string().contains("no larger alignment"), "{e}");
    }
}
