/// Brightens one pixel: the loop body of `adjust::brighten`, one invocation per pixel.
#[rgpu::kernel]
pub fn brighten(gain: f32, bias: f32, #[item] pixel: &mut f32) {
    *pixel = (*pixel * gain + bias).clamp(0.0, 1.0);
}
