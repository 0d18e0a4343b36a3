//! Every backend built into this test binary computes SAXPY exactly like plain Rust.
//!
//! `rgpu test` reports each backend: passed, failed, or skipped and why (a backend built in
//! that cannot run here, e.g. no GPU). `rgpu test --backend cuda` makes a skip a failure.

fn plain_rust(a: f32, x: &[f32], y: &[f32]) -> Vec<f32> {
    x.iter().zip(y).map(|(x, y)| a * x + y).collect()
}

#[test]
fn every_built_backend_matches_plain_rust() {
    rgpu::testing::each_backend("saxpy", |device| {
        // Around the workgroup size (256) and one large launch.
        for n in [1u32, 255, 256, 257, 100_000] {
            let x: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.5).collect();
            let y: Vec<f32> = (0..n).map(|i| 3.0 - (i % 7) as f32).collect();
            let mut out = y.clone();
            kernel::saxpy(device, n, 3.0, &x, &mut out).map_err(|e| e.to_string())?;
            if out != plain_rust(3.0, &x, &y) {
                return Err(format!("n = {n}: differs from plain Rust"));
            }
        }
        Ok(())
    });
}
