//! The reference every backend is checked against: Rust's own sort.

use kernel::{KeyKind, SortOrder};

/// `input` (raw bits of `kind`) sorted by Rust's `sort_unstable`, with `f32::total_cmp`
/// for floats, then reversed for descending order.
pub fn rust_sort(input: &[u32], kind: KeyKind, order: SortOrder) -> Vec<u32> {
    let mut expected = input.to_vec();
    match kind {
        KeyKind::U32 => expected.sort_unstable(),
        KeyKind::I32 => expected.sort_unstable_by_key(|&b| b as i32),
        KeyKind::F32 => {
            expected.sort_unstable_by(|a, b| f32::from_bits(*a).total_cmp(&f32::from_bits(*b)))
        }
    }
    if order == SortOrder::Descending {
        expected.reverse();
    }
    expected
}
