"""The GLSL FIXTURE and the rust-gpu entry points must declare the same interface.

The fixture (tests/fixtures/spirv/bitonic_fixture.comp) stands in for rust-gpu's output in
the Vulkan tests. Both files are parsed here, so a change to one without the other fails:
entry point names, workgroup size (= shared::WORKGROUP_SIZE), descriptor set/binding of
the key buffer, and the push constant block (= shared::SortParams, field for field).
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TEMPLATE = REPO / "templates" / "bitonic"
RUST = (TEMPLATE / "kernel" / "src" / "spirv.rs").read_text()
SHARED = (TEMPLATE / "shared" / "src" / "lib.rs").read_text()
GLSL = (REPO / "tests" / "fixtures" / "spirv" / "bitonic_fixture.comp").read_text()
RUNNERS = (TEMPLATE / "src" / "runners" / "spirv.rs").read_text()


def rust_entry_points() -> dict[str, str]:
    """name -> the attribute + signature text of each `#[spirv(compute(...))]` fn."""
    found = {}
    for m in re.finditer(r"#\[spirv\(compute\(threads\((\d+)\)\)\)\]\s*pub fn (\w+)\(", RUST):
        end = RUST.index(") {", m.end())
        found[m.group(2)] = m.group(1) + "|" + RUST[m.end() : end]
    return found


def workgroup_size() -> int:
    m = re.search(r"pub const WORKGROUP_SIZE: u32 = (\d+);", SHARED)
    assert m is not None
    return int(m.group(1))


def sort_params_fields() -> list[str]:
    m = re.search(r"pub struct SortParams \{(.*?)\n\}", SHARED, re.S)
    assert m is not None
    return re.findall(r"pub (\w+): u32,", m.group(1))


def test_entry_point_names_match() -> None:
    glsl_entries = re.findall(r"#(?:el)?if defined\(ENTRY_(\w+)\)", GLSL)
    assert sorted(rust_entry_points()) == sorted(glsl_entries)
    runner_entries = re.findall(r'pub const \w+: &str = "(\w+)";', RUNNERS)
    assert sorted(runner_entries) == sorted(glsl_entries)


def test_workgroup_sizes_match_the_one_constant() -> None:
    size = workgroup_size()
    for name, decl in rust_entry_points().items():
        assert int(decl.split("|")[0]) == size, name
    m = re.search(r"layout\(local_size_x = (\d+), local_size_y = 1, local_size_z = 1\) in;", GLSL)
    assert m is not None and int(m.group(1)) == size
    assert f"const uint WORKGROUP_SIZE = {size}u;" in GLSL


def test_key_buffer_binding_matches() -> None:
    for name, decl in rust_entry_points().items():
        assert "#[spirv(storage_buffer, descriptor_set = 0, binding = 0)] keys: &mut [u32]" in (
            decl
        ), name
    assert re.search(
        r"layout\(std430, set = 0, binding = 0\) buffer Keys \{\s*uint keys\[\];", GLSL
    )


def test_push_constant_block_is_sort_params_field_for_field() -> None:
    for name, decl in rust_entry_points().items():
        assert "#[spirv(push_constant)] params: &SortParams" in decl, name
    m = re.search(r"layout\(push_constant\) uniform SortParams \{(.*?)\} params;", GLSL, re.S)
    assert m is not None
    assert re.findall(r"uint (\w+);", m.group(1)) == sort_params_fields()
    assert sort_params_fields() == ["len", "block", "distance", "key_order"]


BUILTINS = {
    # entry point -> (rust-gpu attribute + parameter, the GLSL built-in it stands for)
    "bitonic_global": (
        ("#[spirv(global_invocation_id)] id: UVec3", "gl_GlobalInvocationID.x"),
        ("#[spirv(num_workgroups)] groups: UVec3", "gl_NumWorkGroups.x"),
    ),
    "bitonic_tile": (
        ("#[spirv(workgroup_id)] group: UVec3", "gl_WorkGroupID.x"),
        ("#[spirv(local_invocation_id)] local: UVec3", "gl_LocalInvocationID.x"),
        ("#[spirv(num_workgroups)] groups: UVec3", "gl_NumWorkGroups.x"),
    ),
}


def glsl_entry(name: str) -> str:
    """The GLSL text compiled for one entry point (its #if branch)."""
    m = re.search(rf"#(?:el)?if defined\(ENTRY_{name}\)(.*?)#(?:elif|else)", GLSL, re.S)
    assert m is not None, name
    return m.group(1)


def test_both_use_the_same_builtins() -> None:
    rust = rust_entry_points()
    assert sorted(rust) == sorted(BUILTINS)
    for name, pairs in BUILTINS.items():
        for attribute, _ in pairs:
            assert attribute in rust[name], name
        # The global entry reads its built-ins through first_index() and stride().
        glsl = glsl_entry(name).replace("first_index()", "gl_GlobalInvocationID.x")
        glsl = glsl.replace("stride()", "gl_NumWorkGroups.x")
        for _, builtin in pairs:
            assert builtin in glsl, (name, builtin)
    assert "return gl_GlobalInvocationID.x;" in GLSL
    assert "return gl_NumWorkGroups.x * WORKGROUP_SIZE;" in GLSL


def shared_const(name: str) -> int:
    m = re.search(rf"pub const {name}: u32 = (\d+);", SHARED)
    assert m is not None, name
    return int(m.group(1))


def test_the_tile_and_fusion_sizes_match_the_one_definition() -> None:
    tile, fused = shared_const("TILE_KEYS"), shared_const("FUSED_STEPS")
    assert f"const uint TILE_KEYS = {tile}u;" in GLSL
    assert f"const uint FUSED_STEPS = {fused}u;" in GLSL
    # Only the tile entry point declares workgroup memory, TILE_KEYS u32s, in both files.
    workgroup = "#[spirv(workgroup)] tile: &mut [u32; TILE_KEYS as usize]"
    assert [n for n, d in rust_entry_points().items() if workgroup in d] == ["bitonic_tile"]
    assert "shared uint tile[TILE_KEYS];" in glsl_entry("bitonic_tile")
    assert GLSL.count("shared uint") == 1
    assert "pub const TILE_BYTES: u32 = TILE_KEYS * 4;" in RUNNERS
    # The register array of a fused pass holds 2^FUSED_STEPS keys (one instance per flip,
    # as schedule.rs's `fused::<_, M, K, FLIP>`).
    for flip in ("false", "true"):
        assert f"DEFINE_FUSED({fused}u, {1 << fused}u, {flip}," in glsl_entry("bitonic_global")


def test_the_fixture_says_it_is_a_fixture() -> None:
    assert GLSL.startswith("// FIXTURE:")
