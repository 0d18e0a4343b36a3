#[rgpu::kernel]
pub fn norm(#[item] x: &f32, #[item] y: &f32, #[item] out: &mut f32) {
    *out = libm::sqrtf(*x * *x + *y * *y);
}
