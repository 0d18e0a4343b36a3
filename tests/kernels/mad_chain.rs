/// Eight dependent multiply-adds per item.
#[rgpu::kernel]
pub fn mad_chain(a: f32, #[item] x: &f32, #[item] y: &mut f32) {
    let x = *x;
    let mut v = *y;
    v = v * x + a;
    v = v * x - a;
    v = a * v + x;
    v = v * v + x;
    v = x * v - v * a;
    v = v * 0.7 + x * 0.3;
    v = v * x + v;
    v = v * a + x;
    *y = v;
}
