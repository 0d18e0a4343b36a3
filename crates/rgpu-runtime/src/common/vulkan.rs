//! What the Vulkan backends (wgpu, ash) share besides the SPIR-V lookup: buffer sizes and
//! device ranking. Both run the embedded SPIR-V with the same interface (descriptor set 0,
//! binding i = buffer i, the params struct as push constants at offset 0).

/// GPU buffers are whole 4-byte words (Vulkan copies and fills work on words), and at
/// least one word, so an empty buffer can still be bound.
pub(crate) fn padded_bytes(bytes: usize) -> u64 {
    (bytes.max(4) as u64).next_multiple_of(4)
}

/// How devices are ranked: discrete GPUs first, CPU (software) devices last.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum DeviceRank {
    Discrete,
    Integrated,
    Virtual,
    Other,
    Cpu,
}

impl DeviceRank {
    /// What the description calls it ("CPU device" marks software drivers).
    pub(crate) fn name(self) -> &'static str {
        match self {
            DeviceRank::Discrete => "discrete GPU",
            DeviceRank::Integrated => "integrated GPU",
            DeviceRank::Virtual => "virtual GPU",
            DeviceRank::Other => "other device",
            DeviceRank::Cpu => "CPU device",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_whole_words() {
        assert_eq!(padded_bytes(0), 4);
        assert_eq!(padded_bytes(3), 4);
        assert_eq!(padded_bytes(4), 4);
        assert_eq!(padded_bytes(5), 8);
        assert!(DeviceRank::Discrete < DeviceRank::Cpu);
    }
}
