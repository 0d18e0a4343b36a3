//! The reference every backend is checked against: Rust's own (stable) sort.

use kernel::key::encode;
use kernel::{KeyKind, SortOrder};

/// `input` (raw bits of `kind`) sorted by Rust's stable `sort_by_key` on the
/// order-preserving key (`kernel::key::encode`): ascending `u32`/`i32` order, floats in
/// `f32::total_cmp` order, reversed for descending. `encode` is a bijection of the 32-bit
/// patterns, so no two different keys compare equal (not -0.0 and +0.0, not two NaNs with
/// different signs or payloads): every correct sort, stable or not, gives exactly these bits.
pub fn rust_sort(input: &[u32], kind: KeyKind, order: SortOrder) -> Vec<u32> {
    let mut expected = input.to_vec();
    expected.sort_by_key(|&bits| encode(bits, kind, order));
    expected
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernel::key::decode;

    /// Zeros, infinities, NaNs of both signs with several payloads, subnormals, extremes.
    const SPECIALS: [u32; 16] = [
        0x0000_0000,
        0x8000_0000,
        0x7f80_0000,
        0xff80_0000,
        0x7fc0_0000,
        0xffc0_0000,
        0x7fc0_0001,
        0xffc0_0001,
        0x7f80_0001,
        0xff80_0001,
        0x7fff_ffff,
        0xffff_ffff,
        0x0000_0001,
        0x8000_0001,
        0x3f80_0000,
        0xbf80_0000,
    ];

    #[test]
    fn no_two_different_keys_compare_equal() {
        for kind in [KeyKind::U32, KeyKind::I32, KeyKind::F32] {
            for order in [SortOrder::Ascending, SortOrder::Descending] {
                for &a in &SPECIALS {
                    assert_eq!(decode(encode(a, kind, order), kind, order), a);
                    for &b in &SPECIALS {
                        if a != b {
                            assert_ne!(encode(a, kind, order), encode(b, kind, order));
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn it_is_rusts_sort_by_value_and_total_cmp() {
        let mut input: Vec<u32> = SPECIALS.to_vec();
        input.extend(SPECIALS.iter().rev());
        input.extend(crate::rng::SplitMix64::new(3).bits(1000));
        for order in [SortOrder::Ascending, SortOrder::Descending] {
            let flip = |mut v: Vec<u32>| {
                if order == SortOrder::Descending {
                    v.reverse();
                }
                v
            };
            let mut u = input.clone();
            u.sort_unstable();
            assert_eq!(rust_sort(&input, KeyKind::U32, order), flip(u));
            let mut i = input.clone();
            i.sort_unstable_by_key(|&b| b as i32);
            assert_eq!(rust_sort(&input, KeyKind::I32, order), flip(i));
            let mut f = input.clone();
            f.sort_unstable_by(|a, b| f32::from_bits(*a).total_cmp(&f32::from_bits(*b)));
            assert_eq!(rust_sort(&input, KeyKind::F32, order), flip(f));
        }
    }
}
