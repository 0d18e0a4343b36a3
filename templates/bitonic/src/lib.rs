//! Host side of the sorts: a `Sorter` over any rgpu device (bitonic, or radix through
//! rgpu-primitives), the CPU paths, key files, and what the driver says about the kernels
//! (`stats`).

pub mod cpu;
pub mod keys_io;
pub mod reference;
pub mod rng;
pub mod sorter;
pub mod stats;

pub use kernel::key::SortKey;
pub use kernel::{KeyKind, SortOrder};
pub use sorter::{Algorithm, SortError, Sorter};
