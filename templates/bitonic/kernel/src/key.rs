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

/// [`encode`] and [`decode`] for one kind and order, without branches: what hot loops use
/// (the radix kernels map every key of a pass this way). Equal to them bit for bit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyMap {
    /// Bits every key flips: the sign bit for signed kinds, all bits for descending order.
    flip: u32,
    /// Bits a float flips when its sign bit is set (the magnitude, so negatives reverse).
    negative: u32,
    /// What `decode` xors the encoded key with to see the float's sign in its top bit.
    probe: u32,
}

impl KeyMap {
    pub const fn new(kind: KeyKind, order: SortOrder) -> Self {
        let (sign, negative) = match kind {
            KeyKind::U32 => (0, 0),
            KeyKind::I32 => (SIGN, 0),
            KeyKind::F32 => (SIGN, !SIGN),
        };
        let (flip, probe) = match order {
            SortOrder::Ascending => (sign, u32::MAX),
            SortOrder::Descending => (!sign, 0),
        };
        Self {
            flip,
            negative,
            probe,
        }
    }

    /// [`encode`].
    #[inline(always)]
    pub fn encode(self, bits: u32) -> u32 {
        bits ^ self.flip ^ (((bits as i32) >> 31) as u32 & self.negative)
    }

    /// [`decode`].
    #[inline(always)]
    pub fn decode(self, key: u32) -> u32 {
        key ^ self.flip ^ ((((key ^ self.probe) as i32) >> 31) as u32 & self.negative)
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
    fn the_branch_free_map_is_encode_and_decode() {
        let mut bits: Vec<u32> = FLOATS.iter().map(|f| f.to_bits()).collect();
        bits.extend([
            0,
            1,
            0x7fff_ffff,
            0x8000_0000,
            0x8000_0001,
            0xffff_ffff,
            0xffc0_0001,
        ]);
        bits.extend((0..4096u32).map(|i| i.wrapping_mul(0x9e37_79b9)));
        for kind in [KeyKind::U32, KeyKind::I32, KeyKind::F32] {
            for order in [SortOrder::Ascending, SortOrder::Descending] {
                let map = KeyMap::new(kind, order);
                for &b in &bits {
                    assert_eq!(
                        map.encode(b),
                        encode(b, kind, order),
                        "{kind:?} {order:?} {b:#x}"
                    );
                    assert_eq!(
                        map.decode(b),
                        decode(b, kind, order),
                        "{kind:?} {order:?} {b:#x}"
                    );
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
