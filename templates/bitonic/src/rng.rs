//! A small deterministic generator for demo input (SplitMix64), so runs are repeatable.

pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// `len` random 32-bit patterns. As `f32` these include NaNs, infinities and zeros.
    pub fn bits(&mut self, len: usize) -> Vec<u32> {
        (0..len).map(|_| (self.next_u64() >> 32) as u32).collect()
    }
}
