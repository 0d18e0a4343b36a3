//! The SPIR-V entry points compile only for `target_arch = "spirv"` (rust-gpu), but their
//! declarations can be checked on any host: every `threads(N)` literal must equal
//! `WORKGROUP_SIZE` (the runners size their dispatches with it), the entry points the
//! Vulkan runners look up must all be there, and the tile's workgroup array is `TILE_KEYS`.

const SOURCE: &str = include_str!("../src/spirv.rs");

/// The numbers inside every `threads(...)` of an entry point attribute.
fn thread_literals() -> Vec<u32> {
    SOURCE
        .match_indices("#[spirv(compute(threads(")
        .map(|(at, pattern)| {
            let rest = &SOURCE[at + pattern.len()..];
            let end = rest.find(')').expect("threads(...) is closed");
            rest[..end]
                .trim()
                .parse()
                .expect("threads takes one literal")
        })
        .collect()
}

#[test]
fn every_entry_point_uses_the_one_workgroup_size() {
    let literals = thread_literals();
    assert_eq!(literals.len(), 2, "two compute entry points");
    for n in literals {
        assert_eq!(
            n,
            shared::WORKGROUP_SIZE,
            "threads({n}) in kernel/src/spirv.rs"
        );
    }
}

#[test]
fn the_runners_entry_points_are_declared() {
    for name in ["bitonic_tile", "bitonic_global"] {
        assert!(
            SOURCE.contains(&format!("pub fn {name}(")),
            "kernel/src/spirv.rs lacks `pub fn {name}`"
        );
    }
    assert_eq!(
        SOURCE
            .matches("#[spirv(push_constant)] params: &SortParams")
            .count(),
        2
    );
    assert_eq!(
        SOURCE
            .matches("#[spirv(storage_buffer, descriptor_set = 0, binding = 0)] keys: &mut [u32]")
            .count(),
        2
    );
    // The tile entry point's workgroup array is sized by the one `TILE_KEYS`.
    assert_eq!(
        SOURCE
            .matches("#[spirv(workgroup)] tile: &mut [u32; TILE_KEYS as usize]")
            .count(),
        1
    );
}
