//! Host side of the sort: a `SortRunner` per backend and the key file formats.

pub mod kernels;
pub mod keys_io;
pub mod reference;
pub mod rng;
pub mod runners;

pub use kernel::key::SortKey;
pub use shared::{KeyKind, SortOrder};
