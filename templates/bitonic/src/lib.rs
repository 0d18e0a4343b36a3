//! Host side of the sort: a `Sorter` over any rgpu device, the CPU path, and key files.

pub mod cpu;
pub mod keys_io;
pub mod reference;
pub mod rng;
pub mod sorter;

pub use kernel::key::SortKey;
pub use kernel::{KeyKind, SortOrder};
pub use sorter::{SortError, Sorter};
