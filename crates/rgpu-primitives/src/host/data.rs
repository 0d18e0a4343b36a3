//! What the primitives take: host slices, `Vec`s and device `Buffer`s, through one trait.

use std::vec::Vec;

use bytemuck::Pod;
use rgpu::Buffer;

/// Elements a primitive reads or writes: in host memory (copied to the device and back for
/// a GPU device) or in a device [`Buffer`] (used in place).
pub enum Source<'a, T: Pod> {
    Host(&'a [T]),
    Device(&'a Buffer<T>),
}

/// [`Source`], writable.
pub enum Place<'a, T: Pod> {
    Host(&'a mut [T]),
    Device(&'a mut Buffer<T>),
}

/// What the primitives accept for data: `[T]`, `Vec<T>` and `Buffer<T>`.
pub trait Elements<T: Pod> {
    /// The elements, to read.
    fn source(&self) -> Source<'_, T>;
    /// The elements, to write.
    fn place(&mut self) -> Place<'_, T>;
    /// How many.
    fn count(&self) -> usize;
}

impl<T: Pod> Elements<T> for [T] {
    fn source(&self) -> Source<'_, T> {
        Source::Host(self)
    }

    fn place(&mut self) -> Place<'_, T> {
        Place::Host(self)
    }

    fn count(&self) -> usize {
        self.len()
    }
}

impl<T: Pod> Elements<T> for Vec<T> {
    fn source(&self) -> Source<'_, T> {
        self.as_slice().source()
    }

    fn place(&mut self) -> Place<'_, T> {
        self.as_mut_slice().place()
    }

    fn count(&self) -> usize {
        self.len()
    }
}

impl<T: Pod> Elements<T> for Buffer<T> {
    fn source(&self) -> Source<'_, T> {
        Source::Device(self)
    }

    fn place(&mut self) -> Place<'_, T> {
        Place::Device(self)
    }

    fn count(&self) -> usize {
        self.len()
    }
}
