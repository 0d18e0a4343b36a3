//! Order-preserving key words: every key type the primitives order maps to `u32` words
//! whose unsigned order is the key's order, so one radix sort (and one min/max) serves all.
//!
//! Floats follow IEEE 754 `totalOrder`, the order of `f32::total_cmp`:
//! `-NaN < -inf < ... < -0.0 < +0.0 < ... < +inf < +NaN`. A `u64` is two words, the high
//! one more significant; each maps as a `u32`.

/// What a key word is, as the kernels see it (the wire format is a plain `u32`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeyKind {
    U32 = 0,
    I32 = 1,
    F32 = 2,
}

impl KeyKind {
    /// Decodes a value that crossed the host/device boundary (an enum read from untrusted
    /// bits would be undefined behaviour).
    pub const fn from_u32(value: u32) -> Option<Self> {
        match value {
            0 => Some(Self::U32),
            1 => Some(Self::I32),
            2 => Some(Self::F32),
            _ => None,
        }
    }

    pub const fn name(self) -> &'static str {
        match self {
            Self::U32 => "u32",
            Self::I32 => "i32",
            Self::F32 => "f32",
        }
    }
}

/// Ascending or descending.
#[repr(u32)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Order {
    #[default]
    Ascending = 0,
    Descending = 1,
}

impl Order {
    pub const fn from_u32(value: u32) -> Option<Self> {
        match value {
            0 => Some(Self::Ascending),
            1 => Some(Self::Descending),
            _ => None,
        }
    }

    pub const fn name(self) -> &'static str {
        match self {
            Self::Ascending => "asc",
            Self::Descending => "desc",
        }
    }
}

const SIGN: u32 = 0x8000_0000;

/// Maps a key word's bits to a `u32` whose unsigned order is the key's order, and back,
/// without branches (hot loops map every key this way).
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
    pub const fn new(kind: KeyKind, order: Order) -> Self {
        let (sign, negative) = match kind {
            KeyKind::U32 => (0, 0),
            KeyKind::I32 => (SIGN, 0),
            KeyKind::F32 => (SIGN, !SIGN),
        };
        let (flip, probe) = match order {
            Order::Ascending => (sign, u32::MAX),
            Order::Descending => (!sign, 0),
        };
        Self {
            flip,
            negative,
            probe,
        }
    }

    /// The ordered word of a key's bits.
    #[inline(always)]
    pub fn encode(self, bits: u32) -> u32 {
        bits ^ self.flip ^ (((bits as i32) >> 31) as u32 & self.negative)
    }

    /// The key's bits of an ordered word.
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
    fn decode_undoes_encode_and_floats_map_in_total_order() {
        let mut bits: Vec<u32> = FLOATS.iter().map(|f| f.to_bits()).collect();
        bits.extend([0, 1, 0x7fff_ffff, SIGN, 0x8000_0001, u32::MAX, 0xffc0_0001]);
        bits.extend((0..4096u32).map(|i| i.wrapping_mul(0x9e37_79b9)));
        for kind in [KeyKind::U32, KeyKind::I32, KeyKind::F32] {
            for order in [Order::Ascending, Order::Descending] {
                let map = KeyMap::new(kind, order);
                for &b in &bits {
                    assert_eq!(map.decode(map.encode(b)), b, "{kind:?} {order:?} {b:#x}");
                }
            }
        }
        let map = KeyMap::new(KeyKind::F32, Order::Ascending);
        let encoded: Vec<u32> = FLOATS.iter().map(|f| map.encode(f.to_bits())).collect();
        assert!(encoded.windows(2).all(|w| w[0] < w[1]), "{encoded:x?}");
        assert!(map.encode((-f32::NAN).to_bits()) < encoded[0]);
        let ints = KeyMap::new(KeyKind::I32, Order::Descending);
        let e: Vec<u32> = [i32::MIN, -1, 0, 7, i32::MAX]
            .iter()
            .map(|i| ints.encode(*i as u32))
            .collect();
        assert!(e.windows(2).all(|w| w[0] > w[1]));
    }
}
