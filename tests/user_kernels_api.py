"""The kernel API's checks that tests/integration/test_user_kernels.py adds to its copy of
the user-style kernels' workspace (benchmarks/user_kernels): kernels appended to its kernel
crate, and a test of its host package run on every backend built in."""

# Appended to kernel/src/lib.rs (which imports `rgpu::prelude::*`).
API_KERNELS = """\
// --- kernel API checks (added by tests/integration/test_user_kernels.py) -------------------

/// `out = a * b + c` with one rounding, f32 and f64.
#[rgpu::kernel]
pub fn fma32(#[item] a: &f32, #[item] b: &f32, #[item] c: &mut f32) {
    *c = a.mul_add(*b, *c);
}

#[rgpu::kernel]
pub fn fma64(#[item] a: &f64, #[item] b: &f64, #[item] c: &mut f64) {
    *c = a.mul_add(*b, *c);
}

/// Every item of a 1-D launch past the hardware grid: `out[i] = 3 i + 1`.
#[rgpu::kernel(threads = 64)]
pub fn items1(item: rgpu::Item, #[item] out: &mut u32) {
    *out = item.index() * 3 + 1;
}

/// Each pixel's coordinates and its left neighbour (an unchecked read).
#[rgpu::kernel(threads = 64)]
pub fn items2(item: rgpu::Item<2>, src: &[u32], #[item] out: &mut u32) {
    let left = if item.x() > 0 {
        // SAFETY: index - 1 is a pixel of src.
        unsafe { src.load_unchecked(item.index() - 1) }
    } else {
        0
    };
    let shape = (item.width() << 20) ^ item.height();
    *out = (item.y() << 16 | item.x()) ^ left.wrapping_mul(3) ^ shape;
}

#[rgpu::kernel(threads = 32)]
pub fn items3(item: rgpu::Item<3>, #[item] out: &mut u32) {
    *out = item.z() << 20 | item.y() << 10 | item.x();
}

/// One word per workgroup: its id, and its coordinates in 3-D.
#[rgpu::kernel(threads = 32)]
pub fn groups1(group: rgpu::Group, out: rgpu::Global<u32>) {
    if group.thread() == 0 {
        // SAFETY: one invocation per workgroup writes its own element.
        unsafe { out.write(group.id(), group.id() * 3 + 1) };
    }
}

#[rgpu::kernel(threads = 32)]
pub fn groups3(group: rgpu::Group<3>, out: rgpu::Global<u32>) {
    if group.thread() == 0 {
        let at = group.z() << 20 | group.y() << 10 | group.x();
        // SAFETY: as above.
        unsafe { out.write(group.id(), at ^ (group.width() << 26) ^ group.depth()) };
    }
}

/// Atomics on a storage buffer across the whole launch.
#[rgpu::kernel]
pub fn global_atomics(item: rgpu::Item, out: rgpu::Global<u32>) {
    out.atomic_add(0, 1);
    out.atomic_max(1, item.index());
    out.atomic_min(2, item.index() ^ 0x5555);
}

/// Never ends: every item waits for a flag nobody sets (an atomic load, which no compiler
/// may hoist out of the loop; the crate names no `u8`, so rgpu's build must give rust-gpu
/// the Int8 that `Ordering` brings). The launch timeout's test.
#[rgpu::kernel]
pub fn spin(item: rgpu::Item, flag: rgpu::Global<u32>) {
    let _ = item;
    while flag.atomic(0).load(core::sync::atomic::Ordering::Relaxed) == 0 {}
}
"""
# tests/api.rs.
API_TEST = """\
//! The kernel API on every backend built in: fused multiply-adds bit for bit, 1-D, 2-D and
//! 3-D launches past the device's per-dimension limit, a shape whose product overflows.

fn check<T: PartialEq + std::fmt::Debug>(
    what: &str,
    got: &[T],
    want: impl Fn(usize) -> T,
) -> Result<(), String> {
    match got.iter().enumerate().find(|(i, g)| **g != want(*i)) {
        Some((i, g)) => Err(format!("{what}[{i}] = {g:?}, want {:?}", want(i))),
        None => Ok(()),
    }
}

#[test]
fn fused_multiply_adds_round_once_on_every_backend() {
    rgpu::testing::each_backend("fma", |device| {
        let e = |e: rgpu::Error| e.to_string();
        let n = 100_003usize;
        let a: Vec<f32> = (0..n)
            .map(|i| 1.0 + f32::EPSILON * (i % 13) as f32)
            .collect();
        let b: Vec<f32> = (0..n)
            .map(|i| 1.0 - f32::EPSILON * (i % 7) as f32)
            .collect();
        let c0: Vec<f32> = (0..n)
            .map(|i| -1.0 - (i % 5) as f32 * f32::EPSILON)
            .collect();
        let mut c = c0.clone();
        kernel::fma32(device, n as u32, &a, &b, &mut c).map_err(e)?;
        // Mesa's llvmpipe computes GLSL.std.450 Fma as a multiply and an add (its NIR options
        // lower every ffma): there mul_add rounds twice (docs/reference.md, lavapipe).
        let fuses = !device.description().contains("llvmpipe");
        let bits: Vec<u32> = c.iter().map(|v| v.to_bits()).collect();
        check("fma32", &bits, |i| {
            let fused = a[i].mul_add(b[i], c0[i]);
            if fuses { fused } else { a[i] * b[i] + c0[i] }.to_bits()
        })?;
        let differ = (0..n)
            .filter(|&i| (a[i] * b[i] + c0[i]).to_bits() != a[i].mul_add(b[i], c0[i]).to_bits())
            .count();
        if differ < n / 2 {
            return Err(format!(
                "only {differ} of {n} inputs tell fused from unfused"
            ));
        }
        let a: Vec<f64> = (0..n)
            .map(|i| 1.0 + f64::EPSILON * (i % 13) as f64)
            .collect();
        let b: Vec<f64> = (0..n)
            .map(|i| 1.0 - f64::EPSILON * (i % 7) as f64)
            .collect();
        let c0: Vec<f64> = (0..n)
            .map(|i| -1.0 - (i % 5) as f64 * f64::EPSILON)
            .collect();
        let mut c = c0.clone();
        kernel::fma64(device, n as u32, &a, &b, &mut c).map_err(e)?;
        let bits: Vec<u64> = c.iter().map(|v| v.to_bits()).collect();
        check("fma64", &bits, |i| {
            let fused = a[i].mul_add(b[i], c0[i]);
            if fuses { fused } else { a[i] * b[i] + c0[i] }.to_bits()
        })
    });
}

#[test]
fn launches_of_any_size_and_shape() {
    rgpu::testing::each_backend("grid", |device| {
        let e = |e: rgpu::Error| e.to_string();
        // 1-D: more items than 65535 workgroups of 64 hold.
        let n = 65_535 * 64 + 5;
        let mut out = device.zeros::<u32>(n as usize).map_err(e)?;
        kernel::items1(device, n, &mut out).map_err(e)?;
        check("items1", &out.read().map_err(e)?, |i| i as u32 * 3 + 1)?;
        // 2-D: a width below the workgroup size, and past the hardware grid.
        for (w, h) in [(37u32, 29u32), (5000, 4000)] {
            let src: Vec<u32> = (0..w * h).map(|i| i.wrapping_mul(7)).collect();
            let mut out = device.zeros::<u32>((w * h) as usize).map_err(e)?;
            kernel::items2(device, (w, h), &src, &mut out).map_err(e)?;
            check("items2", &out.read().map_err(e)?, |i| {
                let (i, x, y) = (i as u32, i as u32 % w, i as u32 / w);
                let left = if x > 0 { src[i as usize - 1] } else { 0 };
                (y << 16 | x) ^ left.wrapping_mul(3) ^ (w << 20) ^ h
            })?;
        }
        let (w, h, d) = (5u32, 70u32, 9u32);
        let mut out = vec![0u32; (w * h * d) as usize];
        kernel::items3(device, (w, h, d), &mut out).map_err(e)?;
        check("items3", &out, |i| {
            let i = i as u32;
            (i / (w * h)) << 20 | (i / w % h) << 10 | (i % w)
        })?;
        // Workgroups: more than 65535, in 1-D and 3-D.
        let groups = 70_001u32;
        let mut out = vec![0u32; groups as usize];
        kernel::groups1(device, groups, &mut out).map_err(e)?;
        check("groups1", &out, |i| i as u32 * 3 + 1)?;
        let (gw, gh, gd) = (40u32, 30u32, 70u32);
        let mut out = vec![0u32; (gw * gh * gd) as usize];
        kernel::groups3(device, (gw, gh, gd), &mut out).map_err(e)?;
        check("groups3", &out, |i| {
            let i = i as u32;
            ((i / (gw * gh)) << 20 | (i / gw % gh) << 10 | (i % gw)) ^ (gw << 26) ^ gd
        })?;
        // Atomics on a storage buffer, from every item.
        let n = 100_003u32;
        let mut atomics = vec![0, 0, u32::MAX];
        kernel::global_atomics(device, n, &mut atomics).map_err(e)?;
        let min = (0..n).map(|i| i ^ 0x5555).min().unwrap_or(0);
        if atomics != [n, n - 1, min] {
            return Err(format!(
                "global_atomics: {atomics:?}, want {:?}",
                [n, n - 1, min]
            ));
        }
        // A shape whose product does not fit a u32.
        let err = kernel::items3(device, (70_000, 70_000, 1), &mut out).unwrap_err();
        let want = "kernel `items3`, parameter `shape`: (70000, 70000) is 4900000000 items, \\
                    more than the 4294967295 a launch indexes (a u32): launch it in parts";
        if err.to_string() != want {
            return Err(format!("overflow: {err}"));
        }
        Ok(())
    });
}

/// A kernel that never ends is `Error::Timeout` naming it, within a bound, on a device of
/// the same backend opened with a 500 ms launch timeout; the test process then exits as
/// usual (a GPU device is left lost, and must not hold the exit up).
#[test]
fn an_endless_kernel_is_a_timeout_naming_it() {
    rgpu::testing::each_backend("timeout", |device| {
        let e = |e: rgpu::Error| e.to_string();
        let limit = std::time::Duration::from_millis(500);
        let (device, _) = rgpu::Device::options()
            .backend(device.backend())
            .launch_timeout(limit)
            .select()
            .map_err(e)?;
        let mut flag = device.zeros::<u32>(1).map_err(e)?;
        let started = std::time::Instant::now();
        let result = kernel::spin(&device, 256, &mut flag).and_then(|()| device.sync());
        let took = started.elapsed();
        match result {
            Err(rgpu::Error::Timeout { kernel: "spin", after_ms: 500, .. })
                if took >= limit && took < std::time::Duration::from_secs(20) =>
            {
                eprintln!("{}: {} (after {took:?})", device.backend(), result.unwrap_err());
                Ok(())
            }
            other => Err(format!("spin: {other:?} after {took:?}")),
        }
    });
}
"""
