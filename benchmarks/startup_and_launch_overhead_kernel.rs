/// One invocation per pixel of a square `width`-wide image: the Mandelbrot set's escape
/// count (at most 256) over [-2, 1] x [-1.5, 1.5]. (benchmarks/startup_and_launch_overhead.py)
#[rgpu::kernel]
pub fn mandelbrot(item: rgpu::Item, width: u32, #[item] pixel: &mut u32) {
    let (x, y) = (item.index() % width, item.index() / width);
    let cx = x as f32 / width as f32 * 3.0 - 2.0;
    let cy = y as f32 / width as f32 * 3.0 - 1.5;
    let (mut zx, mut zy, mut i) = (0.0f32, 0.0f32, 0u32);
    while i < 256 && zx * zx + zy * zy <= 4.0 {
        let t = zx * zx - zy * zy + cx;
        zy = 2.0 * zx * zy + cy;
        zx = t;
        i += 1;
    }
    *pixel = i;
}
