//! Where an item or a workgroup is in a launch of 1, 2 or 3 dimensions (the cpu backend's
//! `Item` and `Group` coordinates).

/// Coordinates and the launch's shape, row-major (x fastest).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Place {
    pub x: u32,
    pub y: u32,
    pub z: u32,
    pub width: u32,
    pub height: u32,
    pub depth: u32,
}

impl Place {
    /// Row-major `index` in `shape` (each dimension at least 1 when `index` exists).
    pub fn of(index: u32, [width, height, depth]: [u32; 3]) -> Self {
        let row = index / width;
        Self {
            x: index % width,
            y: row % height,
            z: row / height,
            width,
            height,
            depth,
        }
    }
}

/// `x()` and `width()`, `y()` and `height()` in 2-D and 3-D, `z()` and `depth()` in 3-D, for
/// the cpu's `Item` and `Group` (which hold a `place`), as on the GPU codegens.
macro_rules! coordinates {
    ($ty:ident, $what:literal, $shape:literal) => {
        impl<const D: usize> $ty<D> {
            #[doc = concat!("The ", $what, "'s x coordinate, `0..width()` (in 1-D, its index).")]
            pub fn x(&self) -> u32 {
                self.place.x
            }

            #[doc = concat!("The ", $shape, "'s width (in 1-D, `count()`).")]
            pub fn width(&self) -> u32 {
                self.place.width
            }
        }

        impl $ty<2> {
            #[doc = concat!("The ", $what, "'s y coordinate, `0..height()`.")]
            pub fn y(&self) -> u32 {
                self.place.y
            }

            #[doc = concat!("The ", $shape, "'s height.")]
            pub fn height(&self) -> u32 {
                self.place.height
            }
        }

        impl $ty<3> {
            #[doc = concat!("The ", $what, "'s y coordinate, `0..height()`.")]
            pub fn y(&self) -> u32 {
                self.place.y
            }

            #[doc = concat!("The ", $what, "'s z coordinate, `0..depth()`.")]
            pub fn z(&self) -> u32 {
                self.place.z
            }

            #[doc = concat!("The ", $shape, "'s height.")]
            pub fn height(&self) -> u32 {
                self.place.height
            }

            #[doc = concat!("The ", $shape, "'s depth.")]
            pub fn depth(&self) -> u32 {
                self.place.depth
            }
        }
    };
}
pub(crate) use coordinates;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_major_coordinates() {
        let p = Place::of((2 * 3 + 2) * 5 + 2, [5, 3, 4]);
        assert_eq!((p.x, p.y, p.z), (2, 2, 2));
        let line = Place::of(9, [10, 1, 1]);
        assert_eq!((line.x, line.y, line.z, line.width), (9, 0, 0, 10));
    }
}
