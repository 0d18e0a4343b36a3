//! The primitives on the cpu backend: host code on rayon with the kernels' results, bit for
//! bit (the same key encoding, the same stable order, the same f32 addition order).
//!
//! The radix sort is the GPU's algorithm with larger tiles: the keys are cut into chunks;
//! each pass over an 8-bit digit counts the digits per chunk, turns the counts into every
//! (digit, chunk)'s first place in the output, and scatters each chunk's keys there in order
//! (stable), chunks in parallel, through a cache line of buffer per digit. The first read
//! counts every pass's digit, so a pass whose digit is the same in every key is skipped; the
//! first pass that moves keys encodes them and the last one decodes them.

use std::vec;
use std::vec::Vec;

use rayon::prelude::*;

use crate::group::TILE;
use crate::key::{KeyMap, Order};
use crate::reduce::tile_sum_f32;

const DIGITS: usize = 256;

/// Items below which one task does the work (rayon's tasks would cost more than they save).
pub const SEQUENTIAL_BELOW: usize = 1 << 15;
/// Chunks per rayon thread: a few, so a slow task does not hold the others up.
const CHUNKS_PER_THREAD: usize = 4;

/// Items per chunk for `len` items.
fn chunk_len(len: usize) -> usize {
    if len < SEQUENTIAL_BELOW {
        return len.max(1);
    }
    len.div_ceil(rayon::current_num_threads() * CHUNKS_PER_THREAD)
        .max(SEQUENTIAL_BELOW / 2)
}

/// A radix-sorted element: a `u32` key word, or a `u64` (a wide key, or a key word with its
/// value in the low half).
pub trait Element: Copy + Default + Send + Sync + 'static {
    /// The digit at `shift`.
    fn digit(self, shift: u32) -> usize;
}

impl Element for u32 {
    #[inline(always)]
    fn digit(self, shift: u32) -> usize {
        ((self >> shift) & 0xff) as usize
    }
}

impl Element for u64 {
    #[inline(always)]
    fn digit(self, shift: u32) -> usize {
        ((self >> shift) & 0xff) as usize
    }
}

/// The order-preserving map of an element and its inverse.
pub trait Codec<E>: Copy + Send + Sync {
    fn encode(self, e: E) -> E;
    fn decode(self, e: E) -> E;
}

/// A 32-bit key word.
impl Codec<u32> for KeyMap {
    #[inline(always)]
    fn encode(self, e: u32) -> u32 {
        KeyMap::encode(self, e)
    }

    #[inline(always)]
    fn decode(self, e: u32) -> u32 {
        KeyMap::decode(self, e)
    }
}

/// A key word in the high half of a `u64`, its value in the low half (not mapped).
#[derive(Clone, Copy)]
pub struct HighWord(pub KeyMap);

impl Codec<u64> for HighWord {
    #[inline(always)]
    fn encode(self, e: u64) -> u64 {
        (self.0.encode((e >> 32) as u32) as u64) << 32 | (e & 0xffff_ffff)
    }

    #[inline(always)]
    fn decode(self, e: u64) -> u64 {
        (self.0.decode((e >> 32) as u32) as u64) << 32 | (e & 0xffff_ffff)
    }
}

/// Sorts `u64` keys in `order` (rayon's unstable sort: keys alone, so no order among equal
/// keys to keep).
pub fn sort_wide(keys: &mut [u64], order: Order) {
    match order {
        Order::Ascending => keys.par_sort_unstable(),
        Order::Descending => keys.par_sort_unstable_by(|a, b| b.cmp(a)),
    }
}

/// One count per digit.
type Histogram = [u32; DIGITS];

/// Sorts `keys` stably by their encoded digits at `shifts` (least significant first);
/// `scratch` is grown to `keys.len()` and can be kept for the next sort.
pub fn radix_sort<E: Element, C: Codec<E>>(
    keys: &mut [E],
    scratch: &mut Vec<E>,
    codec: C,
    shifts: &[u32],
) {
    let len = keys.len();
    if len < 2 {
        return;
    }
    let chunk = chunk_len(len);
    // The first read: each chunk's counts of every pass's digit of the encoded keys.
    let first: Vec<Vec<Histogram>> = keys
        .par_chunks(chunk)
        .map(|keys| {
            let mut counts = vec![[0u32; DIGITS]; shifts.len()];
            for &bits in keys {
                let key = codec.encode(bits);
                for (counts, &shift) in counts.iter_mut().zip(shifts) {
                    counts[key.digit(shift)] += 1;
                }
            }
            counts
        })
        .collect();
    // A pass moves keys unless one digit value has them all.
    let moving: Vec<usize> = (0..shifts.len())
        .filter(|&p| {
            (0..DIGITS).all(|d| first.iter().map(|c| c[p][d] as usize).sum::<usize>() < len)
        })
        .collect();
    let (Some(&first_pass), Some(&last_pass)) = (moving.first(), moving.last()) else {
        return; // every key has the same digits: sorted already
    };
    if scratch.len() < len {
        scratch.resize(len, E::default());
    }
    let other = &mut scratch[..len];
    let (mut src, mut dst): (&mut [E], &mut [E]) = (keys, other);
    let mut in_keys = true;
    for &pass in &moving {
        let shift = shifts[pass];
        let counts: Vec<Histogram> = if pass == first_pass {
            first.iter().map(|c| c[pass]).collect()
        } else {
            src.par_chunks(chunk)
                .map(|keys| {
                    let mut counts = [0u32; DIGITS];
                    for &key in keys {
                        counts[key.digit(shift)] += 1;
                    }
                    counts
                })
                .collect()
        };
        let starts = starts(&counts);
        let (encoding, decoding) = (pass == first_pass, pass == last_pass);
        let out = SharedOut(dst.as_mut_ptr());
        src.par_chunks(chunk)
            .zip(starts.into_par_iter())
            .for_each(|(keys, next)| {
                // SAFETY: `next` holds this chunk's first place for each digit (`starts`);
                // the chunk's keys of digit d fill places next[d].. inside `dst`, which no
                // other chunk writes.
                unsafe { scatter(keys, out, next, shift, codec, encoding, decoding) };
            });
        std::mem::swap(&mut src, &mut dst);
        in_keys = !in_keys;
    }
    if !in_keys {
        // An odd number of passes moved the keys: they are in the scratch buffer.
        dst.par_chunks_mut(chunk)
            .zip(src.par_chunks(chunk))
            .for_each(|(to, from)| to.copy_from_slice(from));
    }
}

/// Keys a digit's write-combining buffer holds: one 64-byte cache line of `u32`s.
const BUFFERED: usize = 16;

/// Writes each of `keys` (encoded first when `encoding`, decoded last when `decoding`) to
/// `out[next[digit]++]`, in order. The keys of each digit gather in a small buffer first and
/// leave 16 at a time: 256 streams of whole lines instead of single elements.
///
/// # Safety
/// For every digit d, `out[next[d] .. next[d] + (keys of digit d)]` is inside the output and
/// written by no one else meanwhile.
#[allow(clippy::too_many_arguments)]
unsafe fn scatter<E: Element, C: Codec<E>>(
    keys: &[E],
    out: SharedOut<E>,
    mut next: Histogram,
    shift: u32,
    codec: C,
    encoding: bool,
    decoding: bool,
) {
    let mut buffers = [[E::default(); BUFFERED]; DIGITS];
    // (u32, not u8: the crate names no type a kernel does not use, since rgpu declares
    // SPIR-V capabilities from the scalar types its sources name.)
    let mut held = [0u32; DIGITS];
    for &bits in keys {
        let key = if encoding { codec.encode(bits) } else { bits };
        let d = key.digit(shift);
        let n = held[d] as usize;
        buffers[d][n] = if decoding { codec.decode(key) } else { key };
        if n + 1 == BUFFERED {
            // SAFETY: the digit's next 16 places are its own (the caller's contract).
            unsafe { out.write_all(next[d] as usize, &buffers[d]) };
            next[d] += BUFFERED as u32;
            held[d] = 0;
        } else {
            held[d] = n as u32 + 1;
        }
    }
    for d in 0..DIGITS {
        let n = held[d] as usize;
        // SAFETY: as above, the digit's last keys.
        unsafe { out.write_all(next[d] as usize, &buffers[d][..n]) };
    }
}

/// Each chunk's first place for each digit: the keys of smaller digits, then those of this
/// digit in earlier chunks.
fn starts(counts: &[Histogram]) -> Vec<Histogram> {
    let mut starts = vec![[0u32; DIGITS]; counts.len()];
    let mut place = 0u32;
    for d in 0..DIGITS {
        for (start, count) in starts.iter_mut().zip(counts) {
            start[d] = place;
            place += count[d];
        }
    }
    starts
}

/// The destination of a scatter, written by several chunks at once at disjoint places.
struct SharedOut<E>(*mut E);

impl<E> Clone for SharedOut<E> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<E> Copy for SharedOut<E> {}

// SAFETY: the chunks write disjoint places (see `radix_sort`), and the buffer outlives the
// scatter.
unsafe impl<E: Send> Send for SharedOut<E> {}
// SAFETY: as above.
unsafe impl<E: Send> Sync for SharedOut<E> {}

impl<E: Copy> SharedOut<E> {
    /// Copies `values` to places `index..index + values.len()`.
    ///
    /// # Safety
    /// Those places are inside the buffer, and no one else reads or writes them meanwhile.
    #[inline(always)]
    unsafe fn write_all(self, index: usize, values: &[E]) {
        // SAFETY: the caller's contract; `values` is another allocation.
        unsafe { std::ptr::copy_nonoverlapping(values.as_ptr(), self.0.add(index), values.len()) }
    }
}

/// Prefix sums (wrapping) of `input` into `output` (the same length): exclusive, or
/// inclusive. Two parallel passes: each chunk's sum, then each chunk's prefix sums from the
/// sums before it.
pub fn scan(input: &[u32], output: &mut [u32], inclusive: bool) {
    let chunk = chunk_len(input.len());
    let sums: Vec<u32> = input
        .par_chunks(chunk)
        .map(|c| c.iter().fold(0u32, |a, &b| a.wrapping_add(b)))
        .collect();
    let mut carry = 0u32;
    let carries: Vec<u32> = sums
        .iter()
        .map(|&s| {
            let before = carry;
            carry = carry.wrapping_add(s);
            before
        })
        .collect();
    output
        .par_chunks_mut(chunk)
        .zip(input.par_chunks(chunk))
        .zip(carries)
        .for_each(|((out, items), mut running)| {
            // One loop per kind (a test inside the loop would keep it from vectorizing).
            if inclusive {
                for (o, &item) in out.iter_mut().zip(items) {
                    running = running.wrapping_add(item);
                    *o = running;
                }
            } else {
                for (o, &item) in out.iter_mut().zip(items) {
                    *o = running;
                    running = running.wrapping_add(item);
                }
            }
        });
}

/// The wrapping sum of `words`.
pub fn sum(words: &[u32]) -> u32 {
    words
        .par_chunks(chunk_len(words.len()))
        .map(|c| c.iter().fold(0u32, |a, &b| a.wrapping_add(b)))
        .reduce(|| 0, u32::wrapping_add)
}

/// The smallest (`max`: largest) encoded word of `words`, or None when empty.
pub fn min_max(words: &[u32], map: KeyMap, max: bool) -> Option<u32> {
    words
        .par_chunks(chunk_len(words.len()))
        .map(|c| {
            let encoded = c.iter().map(|&w| map.encode(w));
            if max {
                encoded.max()
            } else {
                encoded.min()
            }
        })
        .reduce(
            || None,
            |a, b| match (a, b) {
                (Some(a), Some(b)) => Some(if max { a.max(b) } else { a.min(b) }),
                (a, None) => a,
                (None, b) => b,
            },
        )
}

/// The f32 sum in the kernel's order: each tile of 4096 by the kernel's tree, then the
/// tiles' sums the same way, until one is left (`-0.0` for no items).
pub fn sum_f32(items: &[f32]) -> f32 {
    let mut level: Vec<f32> = items.par_chunks(TILE as usize).map(tile_sum_f32).collect();
    while level.len() > 1 {
        level = level.par_chunks(TILE as usize).map(tile_sum_f32).collect();
    }
    level.first().copied().unwrap_or(-0.0)
}

/// Adds one to `counts[v]` for each value `v < counts.len()`.
pub fn histogram(values: &[u32], counts: &mut [u32]) {
    let bins = counts.len();
    let chunk = values
        .len()
        .div_ceil(rayon::current_num_threads())
        .max(SEQUENTIAL_BELOW);
    let partial = values
        .par_chunks(chunk.max(1))
        .map(|c| {
            let mut local = vec![0u32; bins];
            for &v in c {
                if let Some(count) = local.get_mut(v as usize) {
                    *count += 1;
                }
            }
            local
        })
        .reduce_with(|mut a, b| {
            for (x, y) in a.iter_mut().zip(b) {
                *x += y;
            }
            a
        });
    counts.fill(0);
    if let Some(partial) = partial {
        counts.copy_from_slice(&partial);
    }
}
