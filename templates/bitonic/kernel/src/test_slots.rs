//! Test support: keys in a plain vector, for running the network sequentially.

extern crate std;
use crate::network::KeySlots;
use std::vec::Vec;

/// Keys in a plain vector, for the tests that run the network sequentially.
pub struct VecSlots(pub Vec<u32>);

impl KeySlots for VecSlots {
    fn load(&self, index: u32) -> u32 {
        self.0[index as usize]
    }
    fn store(&mut self, index: u32, value: u32) {
        self.0[index as usize] = value;
    }
}
