//! Order-preserving key mapping: sort the mapped `u32`s ascending and the keys come out in
//! the requested order.
//!
//! Floats follow IEEE 754 `totalOrder`, the order of `f32::total_cmp`:
//! `-NaN < -inf < ... < -0.0 < +0.0 < ... < +inf < +NaN`. A NaN with its sign bit clear
//! (the usual `NaN`) sorts after `+inf` in ascending order and first in descending order.

use crate::params::{KeyKind, SortOrder};

const SIGN: u32 = 0x8000_0000;

/// A key type the sort accepts. Its bits are what the kernels move around.
pub trait SortKey: Copy + bytemuck::Pod {
    const KIND: KeyKind;
}

impl SortKey for u32 {
    const KIND: KeyKind = KeyKind::U32;
}

impl SortKey for i32 {
    const KIND: KeyKind = KeyKind::I32;
}

impl SortKey for f32 {
    const KIND: KeyKind = KeyKind::F32;
}

/// Maps a key's raw bits to a `u32` whose unsigned order is the key's order.
#[inline]
pub fn encode(bits: u32, kind: KeyKind, order: SortOrder) -> u32 {
    let ordered = match kind {
        KeyKind::U32 => bits,
        KeyKind::I32 => bits ^ SIGN,
        // Negative floats: flip every bit; positive: set the sign bit.
        KeyKind::F32 => bits ^ (((bits as i32) >> 31) as u32 | SIGN),
    };
    match order {
        SortOrder::Ascending => ordered,
        SortOrder::Descending => !ordered,
    }
}

/// The inverse of [`encode`].
#[inline]
pub fn decode(encoded: u32, kind: KeyKind, order: SortOrder) -> u32 {
    let ordered = match order {
        SortOrder::Ascending => encoded,
        SortOrder::Descending => !encoded,
    };
    match kind {
        KeyKind::U32 => ordered,
        KeyKind::I32 => ordered ^ SIGN,
        KeyKind::F32 => ordered ^ (((!ordered as i32) >> 31) as u32 | SIGN),
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec::Vec;

    const FLOATS: [f32; 12] = [
        f32::NEG_INFINITY,
        -1.5e30,
        -1.0,
        -f32::MIN_POSITIVE,
        -0.0,
        0.0,
        1.0e-45,
        f32::MIN_POSITIVE,
        1.0,
        3.0e38,
        f32::INFINITY,
        f32::NAN,
    ];

    #[test]
    fn encode_then_decode_is_the_identity() {
        for kind in [KeyKind::U32, KeyKind::I32, KeyKind::F32] {
            for order in [SortOrder::Ascending, SortOrder::Descending] {
                for bits in [
                    0,
                    1,
                    0x7fff_ffff,
                    0x8000_0000,
                    0xffff_ffff,
                    0x7fc0_0000,
                    0xffc0_0000,
                ] {
                    assert_eq!(decode(encode(bits, kind, order), kind, order), bits);
                }
            }
        }
    }

    #[test]
    fn floats_map_in_total_order() {
        let encoded: Vec<u32> = FLOATS
            .iter()
            .map(|f| encode(f.to_bits(), KeyKind::F32, SortOrder::Ascending))
            .collect();
        assert!(encoded.windows(2).all(|w| w[0] < w[1]), "{encoded:x?}");
        let negative_nan = encode((-f32::NAN).to_bits(), KeyKind::F32, SortOrder::Ascending);
        assert!(negative_nan < encoded[0]);
    }

    #[test]
    fn signed_integers_map_in_order() {
        let ints = [i32::MIN, -7, -1, 0, 1, 7, i32::MAX];
        let encoded: Vec<u32> = ints
            .iter()
            .map(|i| encode(*i as u32, KeyKind::I32, SortOrder::Ascending))
            .collect();
        assert!(encoded.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn descending_reverses_the_order() {
        let a = encode(1, KeyKind::U32, SortOrder::Descending);
        let b = encode(2, KeyKind::U32, SortOrder::Descending);
        assert!(a > b);
    }
}
