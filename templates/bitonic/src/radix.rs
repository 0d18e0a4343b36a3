//! The radix sort's launches on a device: per 8-bit digit, `radix_upsweep` (tile
//! histograms), `radix_scan` (their prefix sums) and `radix_downsweep` (the stable scatter),
//! the keys moving between the caller's buffer and a second one (`kernel::radix` says
//! how). Four passes: 12 launches, and the sorted keys end in the caller's buffer.

use kernel::radix::{
    counts_len, radix_downsweep, radix_scan, radix_upsweep, tile_count, RadixParams, PASSES, RADIX,
};
use kernel::{KeyKind, SortOrder};
use rgpu::{Buffer, Device};

/// Launches per sort.
pub const LAUNCHES: usize = 3 * PASSES as usize;

/// What a radix sort of `len` keys needs on the device besides the keys: the other key
/// buffer and the passes' tables. Kept between sorts of one size.
pub struct RadixScratch {
    len: usize,
    alt: Buffer<u32>,
    tables: PassTables,
}

impl RadixScratch {
    /// Scratch for sorts of `len` keys on `device`.
    pub fn new(device: &Device, len: u32) -> Result<Self, rgpu::Error> {
        Ok(Self {
            len: len as usize,
            alt: device.zeros(len.max(1) as usize)?,
            tables: PassTables::new(device, len)?,
        })
    }

    /// The number of keys it is for.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// The tables of a pass over `len` keys: the tiles' digit counts (digit-major; their prefix
/// sums after `radix_scan`) and the digits' totals.
pub struct PassTables {
    counts: Buffer<u32>,
    totals: Buffer<u32>,
}

impl PassTables {
    pub fn new(device: &Device, len: u32) -> Result<Self, rgpu::Error> {
        Ok(Self {
            counts: device.zeros(counts_len(len))?,
            totals: device.zeros(RADIX as usize)?,
        })
    }
}

/// The kernels of a pass, in launch order: `launch_all_each` names each launch by its
/// index here.
pub const KERNELS: [&str; 3] = ["radix_upsweep", "radix_scan", "radix_downsweep"];

/// One launch, run by the caller of `launch_all_each` (inside `device.timed`, for example).
pub type Launch<'a> = &'a mut dyn FnMut() -> Result<(), rgpu::Error>;

/// The three launches of pass `pass` (`0..PASSES`): `src`'s `len` keys, ordered by the
/// pass's digit (stably), to `dst` (the first pass encodes them, the last decodes them).
pub fn launch_pass(
    device: &Device,
    src: &Buffer<u32>,
    dst: &mut Buffer<u32>,
    tables: &mut PassTables,
    len: u32,
    pass: u32,
    kind_order: (KeyKind, SortOrder),
) -> Result<(), rgpu::Error> {
    let each: &mut dyn FnMut(usize, Launch) -> Result<(), rgpu::Error> = &mut |_, launch| launch();
    launch_pass_each(device, src, dst, tables, len, pass, kind_order, each)
}

/// `launch_pass`, each launch run as `around(index in KERNELS, launch)`.
#[allow(clippy::too_many_arguments)]
fn launch_pass_each(
    device: &Device,
    src: &Buffer<u32>,
    dst: &mut Buffer<u32>,
    tables: &mut PassTables,
    len: u32,
    pass: u32,
    (kind, order): (KeyKind, SortOrder),
    around: &mut dyn FnMut(usize, Launch) -> Result<(), rgpu::Error>,
) -> Result<(), rgpu::Error> {
    let params = RadixParams::new(len, pass, kind, order);
    let tiles = tile_count(len);
    let PassTables { counts, totals } = tables;
    around(0, &mut || radix_upsweep(device, tiles, params, src, counts))?;
    around(1, &mut || radix_scan(device, RADIX, params, counts, totals))?;
    around(2, &mut || {
        radix_downsweep(device, tiles, params, src, dst, counts, totals)
    })
}

/// Every launch of one radix sort of the `len` keys in `keys` (already on `device`);
/// `scratch` must be for `len` keys.
pub fn launch_all(
    device: &Device,
    keys: &mut Buffer<u32>,
    scratch: &mut RadixScratch,
    len: u32,
    kind: KeyKind,
    order: SortOrder,
) -> Result<(), rgpu::Error> {
    launch_all_each(
        device,
        keys,
        scratch,
        (len, kind, order),
        &mut |_, launch| launch(),
    )
}

/// `launch_all`, each launch run as `around(index in KERNELS, launch)`: the benchmark
/// times each kernel's share of a sort this way (`BENCH_PHASES=1`).
pub fn launch_all_each(
    device: &Device,
    keys: &mut Buffer<u32>,
    scratch: &mut RadixScratch,
    (len, kind, order): (u32, KeyKind, SortOrder),
    around: &mut dyn FnMut(usize, Launch) -> Result<(), rgpu::Error>,
) -> Result<(), rgpu::Error> {
    assert_eq!(
        scratch.len, len as usize,
        "RadixScratch is for another size"
    );
    let RadixScratch { alt, tables, .. } = scratch;
    let (mut src, mut dst) = (keys, alt);
    for pass in 0..PASSES {
        launch_pass_each(device, src, dst, tables, len, pass, (kind, order), around)?;
        std::mem::swap(&mut src, &mut dst);
    }
    // PASSES is even: the last pass wrote the caller's buffer.
    const _: () = assert!(PASSES.is_multiple_of(2));
    Ok(())
}
