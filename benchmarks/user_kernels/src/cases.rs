//! One benchmark case per kernel and size: its inputs (the same numbers the CUDA C++ twins
//! make, benchmarks/user_kernels_twins.py), its plain-Rust reference, and its launches on a
//! device.

use rgpu::{Buffer, Device, Error};

/// A kernel at one size.
pub trait Case {
    /// The kernel's name in the results ("saxpy", "reduce_sum", ...).
    fn kernel(&self) -> &'static str;
    /// The size as the results show it ("2^24", "4096", "4096x4096").
    fn size(&self) -> String;
    /// Bytes one run reads and writes in device memory at least (for GB/s).
    fn bytes(&self) -> f64;
    /// The result, computed in plain Rust in the kernel's own order of float operations.
    fn reference(&self) -> Vec<u8>;
    /// For a kernel with `mul_add`: the result with each `mul_add` rounded twice (a multiply
    /// and an add), what a Vulkan driver that splits GLSL.std.450 `Fma` computes (Mesa's
    /// llvmpipe). `None` for the others.
    fn unfused_reference(&self) -> Option<Vec<u8>> {
        None
    }
    /// For a kernel whose float functions round as the backend does (`rsqrt`, `exp`, an f32
    /// subgroup sum in the backend's order): the largest normwise relative error of its f32
    /// output against the reference (`max |got - want| / max |want|`). `None`: bit for bit.
    fn tolerance(&self) -> Option<f64> {
        None
    }
    /// Uploads the inputs to `device`.
    fn prepare<'d>(&self, device: &'d Device) -> Result<Box<dyn Run + 'd>, Error>;
}

/// A case's inputs on one device.
pub trait Run {
    /// Queues one run (one or more launches) on the device's buffers.
    fn launch(&mut self) -> Result<(), Error>;
    /// The result of the runs so far (after the first: the reference's bytes).
    fn output(&self) -> Result<Vec<u8>, Error>;
}

/// The inputs' generator, the twins' `hash` (wrapping u32 arithmetic).
pub fn hash(i: u32, seed: u32) -> u32 {
    let mut h = i.wrapping_mul(0x9e37_79b1) ^ seed.wrapping_mul(0x85eb_ca77);
    h ^= h >> 16;
    h = h.wrapping_mul(0x7feb_352d);
    h ^= h >> 15;
    h = h.wrapping_mul(0x846c_a68b);
    h ^ (h >> 16)
}

/// An exact f32 in [-0.5, 0.5) (24 random bits).
pub fn unit(i: u32, seed: u32) -> f32 {
    (hash(i, seed) >> 8) as f32 * (1.0 / 16_777_216.0) - 0.5
}

fn units(n: u32, seed: u32) -> Vec<f32> {
    (0..n).map(|i| unit(i, seed)).collect()
}

fn words(n: u32, seed: u32) -> Vec<u32> {
    (0..n).map(|i| hash(i, seed)).collect()
}

fn bytes_of<T: rgpu::Pod>(values: &[T]) -> Vec<u8> {
    bytemuck::cast_slice(values).to_vec()
}

/// `2^k` when `n` is a power of two, else `n`.
fn shown(n: u32) -> String {
    if n.is_power_of_two() && n >= 1024 {
        format!("2^{}", n.trailing_zeros())
    } else {
        n.to_string()
    }
}

fn output_of<T: rgpu::Pod>(buffer: &Buffer<T>) -> Result<Vec<u8>, Error> {
    Ok(bytes_of(&buffer.read()?))
}

// --- saxpy ---------------------------------------------------------------------------------

pub struct Saxpy {
    pub n: u32,
}

const SAXPY_A: f32 = 0.75;

impl Case for Saxpy {
    fn kernel(&self) -> &'static str {
        "saxpy"
    }
    fn size(&self) -> String {
        shown(self.n)
    }
    fn bytes(&self) -> f64 {
        12.0 * f64::from(self.n)
    }
    fn reference(&self) -> Vec<u8> {
        self.computed(|a, x, y| a.mul_add(x, y))
    }
    fn unfused_reference(&self) -> Option<Vec<u8>> {
        Some(self.computed(|a, x, y| a * x + y))
    }
    fn prepare<'d>(&self, device: &'d Device) -> Result<Box<dyn Run + 'd>, Error> {
        Ok(Box::new(SaxpyRun {
            device,
            n: self.n,
            x: device.upload(&units(self.n, 1))?,
            y: device.upload(&units(self.n, 2))?,
        }))
    }
}

impl Saxpy {
    fn computed(&self, mul_add: impl Fn(f32, f32, f32) -> f32) -> Vec<u8> {
        let (x, y) = (units(self.n, 1), units(self.n, 2));
        let out: Vec<f32> = x
            .iter()
            .zip(&y)
            .map(|(x, y)| mul_add(SAXPY_A, *x, *y))
            .collect();
        bytes_of(&out)
    }
}

struct SaxpyRun<'d> {
    device: &'d Device,
    n: u32,
    x: Buffer<f32>,
    y: Buffer<f32>,
}

impl Run for SaxpyRun<'_> {
    fn launch(&mut self) -> Result<(), Error> {
        kernel::saxpy(self.device, self.n, SAXPY_A, &self.x, &mut self.y)
    }
    fn output(&self) -> Result<Vec<u8>, Error> {
        output_of(&self.y)
    }
}

// --- reduce_sum ----------------------------------------------------------------------------

pub struct ReduceSum {
    pub n: u32,
    /// `reduce_sum_plain`: the plain grid-stride loop with `x[i]`, instead of four unchecked
    /// loads per step.
    pub plain: bool,
}

/// Workgroups of the sum: 16 items per invocation, at most 65535 workgroups.
pub fn reduce_groups(n: u32) -> u32 {
    n.div_ceil(kernel::THREADS * 16).clamp(1, 65_535)
}

impl Case for ReduceSum {
    fn kernel(&self) -> &'static str {
        if self.plain {
            "reduce_sum_plain"
        } else {
            "reduce_sum"
        }
    }
    fn size(&self) -> String {
        shown(self.n)
    }
    fn bytes(&self) -> f64 {
        4.0 * f64::from(self.n)
    }
    fn reference(&self) -> Vec<u8> {
        let sum = words(self.n, 3)
            .iter()
            .fold(0u32, |a, &b| a.wrapping_add(b));
        bytes_of(&[sum])
    }
    fn prepare<'d>(&self, device: &'d Device) -> Result<Box<dyn Run + 'd>, Error> {
        Ok(Box::new(ReduceRun {
            device,
            plain: self.plain,
            groups: reduce_groups(self.n),
            x: device.upload(&words(self.n, 3))?,
            out: device.zeros(1)?,
        }))
    }
}

struct ReduceRun<'d> {
    device: &'d Device,
    plain: bool,
    groups: u32,
    x: Buffer<u32>,
    out: Buffer<u32>,
}

impl Run for ReduceRun<'_> {
    fn launch(&mut self) -> Result<(), Error> {
        if self.plain {
            kernel::reduce_sum_plain(self.device, self.groups, &self.x, &mut self.out)
        } else {
            kernel::reduce_sum(self.device, self.groups, &self.x, &mut self.out)
        }
    }
    fn output(&self) -> Result<Vec<u8>, Error> {
        output_of(&self.out)
    }
}

// --- exclusive scan (three launches) -------------------------------------------------------

pub struct Scan {
    pub n: u32,
}

impl Case for Scan {
    fn kernel(&self) -> &'static str {
        "exclusive_scan"
    }
    fn size(&self) -> String {
        shown(self.n)
    }
    fn bytes(&self) -> f64 {
        12.0 * f64::from(self.n)
    }
    fn reference(&self) -> Vec<u8> {
        let mut running = 0u32;
        let out: Vec<u32> = words(self.n, 4)
            .iter()
            .map(|&v| {
                let before = running;
                running = running.wrapping_add(v);
                before
            })
            .collect();
        bytes_of(&out)
    }
    fn prepare<'d>(&self, device: &'d Device) -> Result<Box<dyn Run + 'd>, Error> {
        let tiles = self.n.div_ceil(kernel::SCAN_TILE).max(1);
        Ok(Box::new(ScanRun {
            device,
            tiles,
            x: device.upload(&words(self.n, 4))?,
            tile_sums: device.zeros(tiles as usize)?,
            out: device.zeros(self.n as usize)?,
        }))
    }
}

struct ScanRun<'d> {
    device: &'d Device,
    tiles: u32,
    x: Buffer<u32>,
    tile_sums: Buffer<u32>,
    out: Buffer<u32>,
}

impl Run for ScanRun<'_> {
    fn launch(&mut self) -> Result<(), Error> {
        kernel::scan_tile_sums(self.device, self.tiles, &self.x, &mut self.tile_sums)?;
        kernel::scan_tile_offsets(self.device, 1, &mut self.tile_sums)?;
        kernel::scan_tiles(
            self.device,
            self.tiles,
            &self.x,
            &self.tile_sums,
            &mut self.out,
        )
    }
    fn output(&self) -> Result<Vec<u8>, Error> {
        output_of(&self.out)
    }
}

// --- histogram -----------------------------------------------------------------------------

pub struct Histogram {
    /// Words (4 bytes each).
    pub n: u32,
}

/// Workgroups of the histogram: 64 words per invocation, at most 2048 workgroups.
pub fn histogram_groups(n: u32) -> u32 {
    n.div_ceil(kernel::THREADS * 64).clamp(1, 2048)
}

impl Case for Histogram {
    fn kernel(&self) -> &'static str {
        "histogram"
    }
    fn size(&self) -> String {
        shown(self.n)
    }
    fn bytes(&self) -> f64 {
        4.0 * f64::from(self.n)
    }
    fn reference(&self) -> Vec<u8> {
        let mut hist = [0u32; 256];
        for w in words(self.n, 5) {
            for byte in w.to_le_bytes() {
                hist[byte as usize] += 1;
            }
        }
        bytes_of(&hist)
    }
    fn prepare<'d>(&self, device: &'d Device) -> Result<Box<dyn Run + 'd>, Error> {
        Ok(Box::new(HistogramRun {
            device,
            groups: histogram_groups(self.n),
            words: device.upload(&words(self.n, 5))?,
            hist: device.zeros(256)?,
        }))
    }
}

struct HistogramRun<'d> {
    device: &'d Device,
    groups: u32,
    words: Buffer<u32>,
    hist: Buffer<u32>,
}

impl Run for HistogramRun<'_> {
    fn launch(&mut self) -> Result<(), Error> {
        kernel::histogram(self.device, self.groups, &self.words, &mut self.hist)
    }
    fn output(&self) -> Result<Vec<u8>, Error> {
        output_of(&self.hist)
    }
}

// --- sgemm ---------------------------------------------------------------------------------

/// `c (m x n) = a (m x k) * b (k x n)`, each a multiple of 16.
pub struct Sgemm {
    pub m: u32,
    pub n: u32,
    pub k: u32,
}

impl Case for Sgemm {
    fn kernel(&self) -> &'static str {
        "sgemm"
    }
    fn size(&self) -> String {
        if self.m == self.n && self.n == self.k {
            self.n.to_string()
        } else {
            format!("{}x{}x{}", self.m, self.n, self.k)
        }
    }
    fn bytes(&self) -> f64 {
        4.0 * f64::from(self.m * self.k + self.k * self.n + self.m * self.n)
    }
    fn reference(&self) -> Vec<u8> {
        self.computed(|a, b, acc| a.mul_add(b, acc))
    }
    fn unfused_reference(&self) -> Option<Vec<u8>> {
        Some(self.computed(|a, b, acc| a * b + acc))
    }
    fn prepare<'d>(&self, device: &'d Device) -> Result<Box<dyn Run + 'd>, Error> {
        Ok(Box::new(SgemmRun {
            device,
            shape: (self.n / kernel::TILE, self.m / kernel::TILE),
            n: self.n,
            k: self.k,
            a: device.upload(&units(self.m * self.k, 6))?,
            b: device.upload(&units(self.k * self.n, 7))?,
            c: device.zeros((self.m * self.n) as usize)?,
        }))
    }
}

impl Sgemm {
    fn computed(&self, mul_add: impl Fn(f32, f32, f32) -> f32 + Sync) -> Vec<u8> {
        let (m, n, k) = (self.m as usize, self.n as usize, self.k as usize);
        let (a, b) = (units(self.m * self.k, 6), units(self.k * self.n, 7));
        let rows: Vec<Vec<f32>> = rgpu_rows(m, |row| {
            (0..n)
                .map(|col| (0..k).fold(0.0, |acc, t| mul_add(a[row * k + t], b[t * n + col], acc)))
                .collect()
        });
        bytes_of(&rows.concat())
    }
}

/// `f(row)` for every row, on the machine's threads.
fn rgpu_rows<T: Send>(rows: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = rows.div_ceil(threads).max(1);
    std::thread::scope(|s| {
        let f = &f;
        let handles: Vec<_> = (0..rows)
            .step_by(chunk)
            .map(|start| {
                s.spawn(move || {
                    (start..(start + chunk).min(rows))
                        .map(f)
                        .collect::<Vec<T>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    })
}

struct SgemmRun<'d> {
    device: &'d Device,
    shape: (u32, u32),
    n: u32,
    k: u32,
    a: Buffer<f32>,
    b: Buffer<f32>,
    c: Buffer<f32>,
}

impl Run for SgemmRun<'_> {
    fn launch(&mut self) -> Result<(), Error> {
        kernel::sgemm(
            self.device,
            self.shape,
            self.n,
            self.k,
            &self.a,
            &self.b,
            &mut self.c,
        )
    }
    fn output(&self) -> Result<Vec<u8>, Error> {
        output_of(&self.c)
    }
}

// --- blur ----------------------------------------------------------------------------------

pub struct Blur {
    pub width: u32,
    pub height: u32,
}

impl Case for Blur {
    fn kernel(&self) -> &'static str {
        "blur"
    }
    fn size(&self) -> String {
        format!("{}x{}", self.width, self.height)
    }
    fn bytes(&self) -> f64 {
        8.0 * f64::from(self.width * self.height)
    }
    fn reference(&self) -> Vec<u8> {
        let (w, h) = (self.width as usize, self.height as usize);
        let src = units(self.width * self.height, 8);
        let out: Vec<f32> = (0..w * h)
            .map(|i| {
                let (x, y) = (i % w, i / w);
                let l = src[if x > 0 { i - 1 } else { i }];
                let r = src[if x + 1 < w { i + 1 } else { i }];
                let u = src[if y > 0 { i - w } else { i }];
                let d = src[if y + 1 < h { i + w } else { i }];
                0.5 * src[i] + 0.125 * (((l + r) + u) + d)
            })
            .collect();
        bytes_of(&out)
    }
    fn prepare<'d>(&self, device: &'d Device) -> Result<Box<dyn Run + 'd>, Error> {
        Ok(Box::new(BlurRun {
            device,
            shape: (self.width, self.height),
            src: device.upload(&units(self.width * self.height, 8))?,
            dst: device.zeros((self.width * self.height) as usize)?,
        }))
    }
}

struct BlurRun<'d> {
    device: &'d Device,
    shape: (u32, u32),
    src: Buffer<f32>,
    dst: Buffer<f32>,
}

impl Run for BlurRun<'_> {
    fn launch(&mut self) -> Result<(), Error> {
        kernel::blur(self.device, self.shape, &self.src, &mut self.dst)
    }
    fn output(&self) -> Result<Vec<u8>, Error> {
        output_of(&self.dst)
    }
}

// --- gather and scatter --------------------------------------------------------------------

/// `out[i] = src[index[i]]`, random indices.
pub struct Gather {
    pub n: u32,
}

fn gather_index(n: u32) -> Vec<u32> {
    (0..n).map(|i| hash(i, 9) % n).collect()
}

impl Case for Gather {
    fn kernel(&self) -> &'static str {
        "gather"
    }
    fn size(&self) -> String {
        shown(self.n)
    }
    fn bytes(&self) -> f64 {
        12.0 * f64::from(self.n)
    }
    fn reference(&self) -> Vec<u8> {
        let src = units(self.n, 10);
        let out: Vec<f32> = gather_index(self.n)
            .iter()
            .map(|&j| src[j as usize])
            .collect();
        bytes_of(&out)
    }
    fn prepare<'d>(&self, device: &'d Device) -> Result<Box<dyn Run + 'd>, Error> {
        Ok(Box::new(GatherRun {
            device,
            n: self.n,
            index: device.upload(&gather_index(self.n))?,
            src: device.upload(&units(self.n, 10))?,
            out: device.zeros(self.n as usize)?,
        }))
    }
}

struct GatherRun<'d> {
    device: &'d Device,
    n: u32,
    index: Buffer<u32>,
    src: Buffer<f32>,
    out: Buffer<f32>,
}

impl Run for GatherRun<'_> {
    fn launch(&mut self) -> Result<(), Error> {
        kernel::gather(self.device, self.n, &self.index, &self.src, &mut self.out)
    }
    fn output(&self) -> Result<Vec<u8>, Error> {
        output_of(&self.out)
    }
}

/// `dst[index[i]] = value[i]`, `index` a permutation (`n` a power of two).
pub struct Scatter {
    pub n: u32,
}

fn scatter_index(n: u32) -> Vec<u32> {
    (0..n)
        .map(|i| i.wrapping_mul(0x9e37_79b1) & (n - 1))
        .collect()
}

impl Case for Scatter {
    fn kernel(&self) -> &'static str {
        "scatter"
    }
    fn size(&self) -> String {
        shown(self.n)
    }
    fn bytes(&self) -> f64 {
        12.0 * f64::from(self.n)
    }
    fn reference(&self) -> Vec<u8> {
        let value = units(self.n, 11);
        let mut dst = vec![0.0f32; self.n as usize];
        for (i, &j) in scatter_index(self.n).iter().enumerate() {
            dst[j as usize] = value[i];
        }
        bytes_of(&dst)
    }
    fn prepare<'d>(&self, device: &'d Device) -> Result<Box<dyn Run + 'd>, Error> {
        Ok(Box::new(ScatterRun {
            device,
            n: self.n,
            index: device.upload(&scatter_index(self.n))?,
            value: device.upload(&units(self.n, 11))?,
            dst: device.zeros(self.n as usize)?,
        }))
    }
}

struct ScatterRun<'d> {
    device: &'d Device,
    n: u32,
    index: Buffer<u32>,
    value: Buffer<f32>,
    dst: Buffer<f32>,
}

impl Run for ScatterRun<'_> {
    fn launch(&mut self) -> Result<(), Error> {
        kernel::scatter(self.device, self.n, &self.index, &self.value, &mut self.dst)
    }
    fn output(&self) -> Result<Vec<u8>, Error> {
        output_of(&self.dst)
    }
}

// --- nbody ---------------------------------------------------------------------------------

pub struct NBody {
    pub bodies: u32,
    /// `nbody` or `nbody_tuned` (the same results).
    pub kernel: &'static str,
}

/// Positions in [-0.5, 0.5)^3 and masses in [0.1, 1.1): four floats a body.
fn bodies(n: u32) -> Vec<f32> {
    (0..4 * n)
        .map(|i| {
            let u = unit(i, 12);
            if i % 4 == 3 {
                u + 0.6
            } else {
                u
            }
        })
        .collect()
}

impl Case for NBody {
    fn kernel(&self) -> &'static str {
        self.kernel
    }
    fn size(&self) -> String {
        self.bodies.to_string()
    }
    fn bytes(&self) -> f64 {
        32.0 * f64::from(self.bodies)
    }
    /// In f64, every pair: the result the f32 kernel approximates.
    fn reference(&self) -> Vec<u8> {
        let pos: Vec<f64> = bodies(self.bodies).iter().map(|&v| f64::from(v)).collect();
        let eps2 = f64::from(kernel::NBODY_EPS2);
        let mut acc = vec![0f32; pos.len()];
        for i in 0..self.bodies as usize {
            let (mut ax, mut ay, mut az) = (0.0, 0.0, 0.0);
            for j in 0..self.bodies as usize {
                let (dx, dy, dz) = (
                    pos[4 * j] - pos[4 * i],
                    pos[4 * j + 1] - pos[4 * i + 1],
                    pos[4 * j + 2] - pos[4 * i + 2],
                );
                let d2 = dx * dx + dy * dy + dz * dz + eps2;
                let s = pos[4 * j + 3] / (d2 * d2.sqrt());
                ax += dx * s;
                ay += dy * s;
                az += dz * s;
            }
            acc[4 * i] = ax as f32;
            acc[4 * i + 1] = ay as f32;
            acc[4 * i + 2] = az as f32;
        }
        bytes_of(&acc)
    }
    fn tolerance(&self) -> Option<f64> {
        Some(1e-4)
    }
    fn prepare<'d>(&self, device: &'d Device) -> Result<Box<dyn Run + 'd>, Error> {
        Ok(Box::new(NBodyRun {
            tuned: self.kernel == "nbody_tuned",
            device,
            groups: self.bodies / kernel::THREADS,
            pos: device.upload(&bodies(self.bodies))?,
            acc: device.zeros(4 * self.bodies as usize)?,
        }))
    }
}

struct NBodyRun<'d> {
    tuned: bool,
    device: &'d Device,
    groups: u32,
    pos: Buffer<f32>,
    acc: Buffer<f32>,
}

impl Run for NBodyRun<'_> {
    fn launch(&mut self) -> Result<(), Error> {
        if self.tuned {
            kernel::nbody_tuned(self.device, self.groups, &self.pos, &mut self.acc)
        } else {
            kernel::nbody(self.device, self.groups, &self.pos, &mut self.acc)
        }
    }
    fn output(&self) -> Result<Vec<u8>, Error> {
        output_of(&self.acc)
    }
}

// --- softmax -------------------------------------------------------------------------------

pub struct Softmax {
    pub rows: u32,
    pub cols: u32,
}

/// Logits in [-4, 4).
fn logits(n: u32) -> Vec<f32> {
    (0..n).map(|i| unit(i, 13) * 8.0).collect()
}

impl Case for Softmax {
    fn kernel(&self) -> &'static str {
        "softmax"
    }
    fn size(&self) -> String {
        format!("{}x{}", self.rows, self.cols)
    }
    fn bytes(&self) -> f64 {
        8.0 * f64::from(self.rows) * f64::from(self.cols)
    }
    /// In f64.
    fn reference(&self) -> Vec<u8> {
        let x = logits(self.rows * self.cols);
        let mut out = vec![0f32; x.len()];
        for (row, dst) in x
            .chunks(self.cols as usize)
            .zip(out.chunks_mut(self.cols as usize))
        {
            let max = row
                .iter()
                .fold(f64::NEG_INFINITY, |m, &v| m.max(f64::from(v)));
            let sum: f64 = row.iter().map(|&v| (f64::from(v) - max).exp()).sum();
            for (d, &v) in dst.iter_mut().zip(row) {
                *d = ((f64::from(v) - max).exp() / sum) as f32;
            }
        }
        bytes_of(&out)
    }
    fn tolerance(&self) -> Option<f64> {
        Some(1e-5)
    }
    fn prepare<'d>(&self, device: &'d Device) -> Result<Box<dyn Run + 'd>, Error> {
        Ok(Box::new(SoftmaxRun {
            device,
            rows: self.rows,
            cols: self.cols,
            x: device.upload(&logits(self.rows * self.cols))?,
            out: device.zeros((self.rows * self.cols) as usize)?,
        }))
    }
}

struct SoftmaxRun<'d> {
    device: &'d Device,
    rows: u32,
    cols: u32,
    x: Buffer<f32>,
    out: Buffer<f32>,
}

impl Run for SoftmaxRun<'_> {
    fn launch(&mut self) -> Result<(), Error> {
        kernel::softmax(self.device, self.rows, &self.x, self.cols, &mut self.out)
    }
    fn output(&self) -> Result<Vec<u8>, Error> {
        output_of(&self.out)
    }
}

// --- reduce_sum_looped ---------------------------------------------------------------------

/// Items each invocation of the looped sum adds.
pub const LOOPED_PER_THREAD: u32 = 16;

pub struct ReduceSumLooped {
    pub n: u32,
    /// `reduce_sum_looped_len`: the guard is `i < x.len()`.
    pub len: bool,
}

impl Case for ReduceSumLooped {
    fn kernel(&self) -> &'static str {
        if self.len {
            "reduce_sum_looped_len"
        } else {
            "reduce_sum_looped"
        }
    }
    fn size(&self) -> String {
        shown(self.n)
    }
    fn bytes(&self) -> f64 {
        4.0 * f64::from(self.n)
    }
    fn reference(&self) -> Vec<u8> {
        let sum = words(self.n, 14)
            .iter()
            .fold(0u32, |a, &b| a.wrapping_add(b));
        bytes_of(&[sum])
    }
    fn prepare<'d>(&self, device: &'d Device) -> Result<Box<dyn Run + 'd>, Error> {
        Ok(Box::new(LoopedRun {
            device,
            n: self.n,
            len: self.len,
            groups: self.n.div_ceil(kernel::THREADS * LOOPED_PER_THREAD),
            x: device.upload(&words(self.n, 14))?,
            out: device.zeros(1)?,
        }))
    }
}

struct LoopedRun<'d> {
    device: &'d Device,
    n: u32,
    len: bool,
    groups: u32,
    x: Buffer<u32>,
    out: Buffer<u32>,
}

impl Run for LoopedRun<'_> {
    fn launch(&mut self) -> Result<(), Error> {
        let (d, g, per) = (self.device, self.groups, LOOPED_PER_THREAD);
        if self.len {
            kernel::reduce_sum_looped_len(d, g, &self.x, per, &mut self.out)
        } else {
            kernel::reduce_sum_looped(d, g, &self.x, self.n, per, &mut self.out)
        }
    }
    fn output(&self) -> Result<Vec<u8>, Error> {
        output_of(&self.out)
    }
}

/// The cases of a size class: `small` (a few MB: CI on lavapipe and the cpu backend) or
/// `large` (what the H100 runs).
pub fn cases(class: &str) -> Option<Vec<Box<dyn Case>>> {
    let small: Vec<Box<dyn Case>> = vec![
        Box::new(Saxpy { n: 100_003 }),
        Box::new(ReduceSum {
            n: 1_000_003,
            plain: false,
        }),
        Box::new(ReduceSum {
            n: 1_000_003,
            plain: true,
        }),
        Box::new(Scan { n: 300_007 }),
        Box::new(Histogram { n: 100_003 }),
        Box::new(Sgemm {
            m: 48,
            n: 64,
            k: 80,
        }),
        Box::new(Blur {
            width: 333,
            height: 257,
        }),
        Box::new(Gather { n: 100_003 }),
        Box::new(Scatter { n: 1 << 16 }),
        Box::new(NBody {
            bodies: 1024,
            kernel: "nbody",
        }),
        Box::new(NBody {
            bodies: 1024,
            kernel: "nbody_tuned",
        }),
        Box::new(Softmax {
            rows: 64,
            cols: 1024,
        }),
        Box::new(ReduceSumLooped {
            n: 1_000_003,
            len: false,
        }),
        Box::new(ReduceSumLooped {
            n: 1_000_003,
            len: true,
        }),
    ];
    let mut large: Vec<Box<dyn Case>> = Vec::new();
    for p in [24u32, 26] {
        large.push(Box::new(Saxpy { n: 1 << p }));
        large.push(Box::new(ReduceSum {
            n: 1 << p,
            plain: false,
        }));
        large.push(Box::new(ReduceSum {
            n: 1 << p,
            plain: true,
        }));
        large.push(Box::new(Scan { n: 1 << p }));
        large.push(Box::new(Histogram { n: 1 << p }));
    }
    for side in [1024u32, 4096] {
        large.push(Box::new(Sgemm {
            m: side,
            n: side,
            k: side,
        }));
    }
    for side in [4096u32, 8192] {
        large.push(Box::new(Blur {
            width: side,
            height: side,
        }));
    }
    for p in [24u32, 26] {
        large.push(Box::new(Gather { n: 1 << p }));
        large.push(Box::new(Scatter { n: 1 << p }));
    }
    for kernel in ["nbody", "nbody_tuned"] {
        large.push(Box::new(NBody {
            bodies: 16_384,
            kernel,
        }));
    }
    large.push(Box::new(Softmax {
        rows: 4096,
        cols: 1024,
    }));
    for p in [24u32, 26] {
        for len in [false, true] {
            large.push(Box::new(ReduceSumLooped { n: 1 << p, len }));
        }
    }
    match class {
        "small" => Some(small),
        "large" => Some(large),
        _ => None,
    }
}
