//! What a kernel is, as its `#[rgpu::kernel]` launcher describes it (`KernelInfo`), the
//! embedded artifacts (`Artifact`), and the checks and counts every backend shares
//! (`check_lengths`, `workgroups`).

use crate::error::Error;

/// How a kernel's invocations are counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// One invocation per item: `count` items, `threads` per workgroup on a GPU.
    Items,
    /// `count` workgroups of `threads` invocations, with workgroup memory and barriers.
    Groups,
}

/// Whether a kernel writes a buffer parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Read,
    ReadWrite,
}

/// One buffer parameter; binding i of descriptor set 0 / device pointer argument 1 + i.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferInfo {
    pub name: &'static str,
    pub access: Access,
    /// Bytes per element.
    pub elem_size: u32,
    /// The kernel indexes it with the item index: in `Mode::Items` it must hold at least
    /// `count` elements.
    pub item: bool,
}

/// Where the kernel's source indexes a buffer parameter (`x[i]`) or calls a method of one
/// (`x.atomic_add(i, v)`): the line and column (1-based, as a panic's location gives them)
/// of the expression's start. A checked launch's fault at such a place names the parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    pub line: u32,
    pub column: u32,
    pub param: &'static str,
}

/// One kernel, as the launcher describes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelInfo {
    /// The entry point's name in PTX and SPIR-V (the Rust function's name).
    pub name: &'static str,
    /// Invocations per workgroup.
    pub threads: u32,
    pub mode: Mode,
    /// In declaration order: binding i = `buffers[i]`.
    pub buffers: &'static [BufferInfo],
    /// `size_of` the params struct (push constants / the by-value first argument).
    pub params_size: u32,
    /// Static workgroup memory the kernel declares.
    pub shared_bytes: u32,
    /// Where its source indexes its buffer parameters (checked launches name them).
    pub places: &'static [Place],
}

/// One embedded kernel artifact (the kernel crate's table, generated from rgpu's manifest).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Artifact {
    /// `"ptx"` or `"spirv"`.
    pub kind: &'static str,
    /// `"sm_90"`, `"spirv-unknown-vulkan1.2"`, ...
    pub target: &'static str,
    /// What made it (`"nvptx"`, `"spirv"`, `"external"`, ...).
    pub codegen: &'static str,
    pub entry_points: &'static [&'static str],
    pub sha256: &'static str,
    pub bytes: &'static [u8],
    /// A checked build's SPIR-V: the format string of each place that records a fault
    /// (rgpu/spirv/faults.py; `common/fault.rs` reads the record). Empty otherwise.
    pub faults: &'static [&'static str],
}

/// Most workgroups a CUDA grid has in x (the kernels grid-stride past it).
pub const CUDA_MAX_GRID: u32 = (1 << 31) - 1;

/// The CUDA grid `(x, y)` with a workgroup for each of `groups` (at least 1): one row up to
/// [`CUDA_MAX_GRID`], then two or three equal rows (`u32::MAX` workgroups at most). The
/// kernels' ids are row-major (rgpu's `grid_id`), so a CUDA kernel has no grid-stride loop.
#[cfg(any(feature = "cuda", test))]
pub fn covering_grid(groups: u32) -> (u32, u32) {
    let groups = groups.max(1);
    let rows = groups.div_ceil(CUDA_MAX_GRID);
    (groups.div_ceil(rows), rows)
}

/// Workgroups for `count` in `mode`: items / threads (rounded up) or `count` groups, at
/// least 1 and at most `max`.
pub fn workgroups(mode: Mode, count: u32, threads: u32, max: u32) -> u32 {
    let groups = match mode {
        Mode::Items => count.div_ceil(threads.max(1)),
        Mode::Groups => count,
    };
    groups.clamp(1, max.max(1))
}

/// The item (or workgroup) count of a 2-D or 3-D launch of `shape` (unused dimensions 1):
/// the product, or an argument error when it does not fit the `u32` index every kernel uses.
pub fn shape_count(kernel: &KernelInfo, shape: [u32; 3]) -> Result<u32, Error> {
    let product = shape.iter().map(|&d| u128::from(d)).product::<u128>();
    u32::try_from(product).map_err(|_| Error::Argument {
        kernel: kernel.name,
        param: "shape",
        reason: format!(
            "{} is {product} {}, more than the {} a launch indexes (a u32): launch it in parts",
            shown(shape),
            match kernel.mode {
                Mode::Items => "items",
                Mode::Groups => "workgroups",
            },
            u32::MAX
        ),
    })
}

/// `(w, h)` or `(w, h, d)`.
fn shown([w, h, d]: [u32; 3]) -> String {
    if d == 1 {
        format!("({w}, {h})")
    } else {
        format!("({w}, {h}, {d})")
    }
}

/// Checks each buffer's element count against the kernel (fits a `u32`, and in
/// `Mode::Items` an item buffer holds at least `count`), and returns them as `u32`s: the
/// `len_i` fields of the params struct. The cpu launchers call this directly.
pub fn check_lengths(
    kernel: &KernelInfo,
    count: u32,
    elements: &[usize],
) -> Result<Vec<u32>, Error> {
    if elements.len() != kernel.buffers.len() {
        return Err(Error::Argument {
            kernel: kernel.name,
            param: "(buffers)",
            reason: format!(
                "{} buffers given, the kernel takes {}: rebuild the launcher with the kernel",
                elements.len(),
                kernel.buffers.len()
            ),
        });
    }
    kernel
        .buffers
        .iter()
        .zip(elements)
        .map(|(info, &len)| {
            let len32 = u32::try_from(len).map_err(|_| Error::TooLarge {
                what: format!("kernel `{}`, parameter `{}`", kernel.name, info.name),
                len: len as u64,
                limit: u64::from(u32::MAX),
            })?;
            if kernel.mode == Mode::Items && info.item && len32 < count {
                return Err(Error::Argument {
                    kernel: kernel.name,
                    param: info.name,
                    reason: format!("{len} elements, the launch needs at least {count}"),
                });
            }
            Ok(len32)
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) const SAXPY_BUFFERS: [BufferInfo; 2] = [
        BufferInfo {
            name: "x",
            access: Access::Read,
            elem_size: 4,
            item: true,
        },
        BufferInfo {
            name: "y",
            access: Access::ReadWrite,
            elem_size: 4,
            item: true,
        },
    ];

    pub(crate) static SAXPY: KernelInfo = KernelInfo {
        name: "saxpy",
        threads: 64,
        mode: Mode::Items,
        buffers: &SAXPY_BUFFERS,
        params_size: 16,
        shared_bytes: 0,
        places: &[],
    };

    pub(crate) fn saxpy_params(lens: &[u32]) -> Vec<u8> {
        let p = [16u32, lens[0], lens[1], 2.0f32.to_bits()];
        bytemuck::cast_slice(&p).to_vec()
    }

    #[test]
    fn covering_grids_hold_every_workgroup_once() {
        assert_eq!(covering_grid(0), (1, 1));
        assert_eq!(covering_grid(CUDA_MAX_GRID), (CUDA_MAX_GRID, 1));
        assert_eq!(covering_grid(CUDA_MAX_GRID + 1), (1 << 30, 2));
        assert_eq!(covering_grid(u32::MAX), (1_431_655_765, 3));
        for groups in [
            1,
            5,
            CUDA_MAX_GRID - 1,
            CUDA_MAX_GRID + 7,
            u32::MAX - 1,
            u32::MAX,
        ] {
            let (x, y) = covering_grid(groups);
            assert!(x <= CUDA_MAX_GRID && y <= 3, "{groups}");
            assert!(u64::from(x) * u64::from(y) >= u64::from(groups), "{groups}");
            assert!(
                u64::from(x) * u64::from(y - 1) < u64::from(groups),
                "{groups}"
            );
        }
    }

    #[test]
    fn workgroups_round_up_and_stay_in_range() {
        assert_eq!(workgroups(Mode::Items, 0, 256, CUDA_MAX_GRID), 1);
        assert_eq!(workgroups(Mode::Items, 256, 256, CUDA_MAX_GRID), 1);
        assert_eq!(workgroups(Mode::Items, 257, 256, CUDA_MAX_GRID), 2);
        assert_eq!(
            workgroups(Mode::Items, u32::MAX, 1, CUDA_MAX_GRID),
            CUDA_MAX_GRID
        );
        assert_eq!(workgroups(Mode::Items, u32::MAX, 64, 65535), 65535);
        assert_eq!(workgroups(Mode::Groups, 0, 256, 65535), 1);
        assert_eq!(workgroups(Mode::Groups, 7, 256, 65535), 7);
        assert_eq!(workgroups(Mode::Groups, 70000, 256, 65535), 65535);
    }

    #[test]
    fn a_shape_is_its_product_or_an_argument_error() {
        assert_eq!(shape_count(&SAXPY, [3, 5, 1]), Ok(15));
        assert_eq!(shape_count(&SAXPY, [0, 70_000, 1]), Ok(0));
        assert_eq!(
            shape_count(&SAXPY, [65_536, 65_535, 1]),
            Ok(u32::MAX - 65_535)
        );
        let e = shape_count(&SAXPY, [70_000, 70_000, 1]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "kernel `saxpy`, parameter `shape`: (70000, 70000) is 4900000000 items, more than \
             the 4294967295 a launch indexes (a u32): launch it in parts"
        );
        let groups = KernelInfo {
            mode: Mode::Groups,
            ..SAXPY
        };
        let e = shape_count(&groups, [u32::MAX, u32::MAX, u32::MAX]).unwrap_err();
        assert!(
            e.to_string()
                .contains("(4294967295, 4294967295, 4294967295) is "),
            "{e}"
        );
        assert!(e.to_string().contains(" workgroups, more than"), "{e}");
    }

    #[test]
    fn a_short_item_buffer_is_an_argument_error() {
        assert_eq!(check_lengths(&SAXPY, 16, &[16, 20]), Ok(vec![16, 20]));
        let e = check_lengths(&SAXPY, 16, &[16, 10]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "kernel `saxpy`, parameter `y`: 10 elements, the launch needs at least 16"
        );
        // In Mode::Groups, count is workgroups: item buffers are not checked against it.
        let groups = KernelInfo {
            mode: Mode::Groups,
            ..SAXPY
        };
        assert_eq!(check_lengths(&groups, 16, &[1, 1]), Ok(vec![1, 1]));
        assert!(matches!(
            check_lengths(&SAXPY, 1, &[1]),
            Err(Error::Argument { .. })
        ));
    }

    #[test]
    #[cfg(target_pointer_width = "64")]
    fn more_than_u32_elements_is_too_large() {
        let e = check_lengths(&SAXPY, 1, &[5_000_000_000, 1]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "kernel `saxpy`, parameter `x`: 5000000000 elements is more than the 4294967295 a \
             kernel indexes: split the data across launches"
        );
    }
}
