//! The radix sort on the cpu backend: the GPU kernels' algorithm (`kernel::radix`) as host
//! code on rayon. The keys are cut into chunks (the GPU's tiles, larger); each pass over an
//! 8-bit digit counts the digits per chunk, turns the counts into every (digit, chunk)'s
//! first place in the output (the scan), and scatters each chunk's keys there in order
//! (stable), chunks in parallel, through a cache line of buffer per digit. The first read
//! counts all four digits, so a pass whose digit is the same in every key is skipped; the
//! first pass that moves keys encodes them (`kernel::key::encode`) and the last one decodes
//! them.

use kernel::key::{decode, encode};
use kernel::radix::{digit, PASSES, RADIX, RADIX_BITS};
use kernel::{KeyKind, SortOrder};
use rayon::prelude::*;

const DIGITS: usize = RADIX as usize;

/// Keys below which one task sorts (rayon's tasks would cost more than they save).
pub const SEQUENTIAL_BELOW: usize = 1 << 15;
/// Chunks per rayon thread: a few, so a slow task does not hold the others up.
pub const CHUNKS_PER_THREAD: usize = 4;

/// One count per digit.
type Histogram = [u32; DIGITS];

/// The key mapping of one (kind, order), known at compile time in the hot loops.
trait Codec: Copy + Send + Sync {
    fn encode(self, bits: u32) -> u32;
    fn decode(self, key: u32) -> u32;
}

#[derive(Clone, Copy)]
struct Keys<const KIND: u32, const ORDER: u32>;

impl<const KIND: u32, const ORDER: u32> Keys<KIND, ORDER> {
    const KIND: KeyKind = match KeyKind::from_u32(KIND) {
        Some(kind) => kind,
        None => panic!("not a KeyKind"),
    };
    const ORDER: SortOrder = match SortOrder::from_u32(ORDER) {
        Some(order) => order,
        None => panic!("not a SortOrder"),
    };
}

impl<const KIND: u32, const ORDER: u32> Codec for Keys<KIND, ORDER> {
    #[inline(always)]
    fn encode(self, bits: u32) -> u32 {
        encode(bits, Self::KIND, Self::ORDER)
    }

    #[inline(always)]
    fn decode(self, key: u32) -> u32 {
        decode(key, Self::KIND, Self::ORDER)
    }
}

/// Sorts raw key bits of `kind` in `order`, stably by the encoded key; `scratch` is grown to
/// `keys.len()` and can be kept for the next sort.
pub fn sort_with_scratch(
    keys: &mut [u32],
    scratch: &mut Vec<u32>,
    kind: KeyKind,
    order: SortOrder,
) {
    const U: u32 = KeyKind::U32 as u32;
    const I: u32 = KeyKind::I32 as u32;
    const F: u32 = KeyKind::F32 as u32;
    const A: u32 = SortOrder::Ascending as u32;
    const D: u32 = SortOrder::Descending as u32;
    match (kind, order) {
        (KeyKind::U32, SortOrder::Ascending) => sort(keys, scratch, Keys::<U, A>),
        (KeyKind::U32, SortOrder::Descending) => sort(keys, scratch, Keys::<U, D>),
        (KeyKind::I32, SortOrder::Ascending) => sort(keys, scratch, Keys::<I, A>),
        (KeyKind::I32, SortOrder::Descending) => sort(keys, scratch, Keys::<I, D>),
        (KeyKind::F32, SortOrder::Ascending) => sort(keys, scratch, Keys::<F, A>),
        (KeyKind::F32, SortOrder::Descending) => sort(keys, scratch, Keys::<F, D>),
    }
}

/// `sort_with_scratch` with a scratch buffer of its own.
pub fn sort_in_place(keys: &mut [u32], kind: KeyKind, order: SortOrder) {
    sort_with_scratch(keys, &mut Vec::new(), kind, order);
}

/// Keys per chunk for `len` keys.
fn chunk_len(len: usize) -> usize {
    if len < SEQUENTIAL_BELOW {
        return len.max(1);
    }
    len.div_ceil(rayon::current_num_threads() * CHUNKS_PER_THREAD)
        .max(SEQUENTIAL_BELOW / 2)
}

fn sort<C: Codec>(keys: &mut [u32], scratch: &mut Vec<u32>, codec: C) {
    let len = keys.len();
    if len < 2 {
        return;
    }
    let chunk = chunk_len(len);
    // The first read: each chunk's counts of all four digits of the encoded keys.
    let first: Vec<[Histogram; PASSES as usize]> = keys
        .par_chunks(chunk)
        .map(|keys| {
            let mut counts = [[0u32; DIGITS]; PASSES as usize];
            for &bits in keys {
                let key = codec.encode(bits);
                for (pass, counts) in counts.iter_mut().enumerate() {
                    counts[digit(key, pass as u32 * RADIX_BITS) as usize] += 1;
                }
            }
            counts
        })
        .collect();
    // A pass moves keys unless one digit value has them all.
    let moving: Vec<u32> = (0..PASSES)
        .filter(|&pass| {
            let p = pass as usize;
            (0..DIGITS).all(|d| first.iter().map(|c| c[p][d] as usize).sum::<usize>() < len)
        })
        .collect();
    let (Some(&first_pass), Some(&last_pass)) = (moving.first(), moving.last()) else {
        return; // every key has the same bits: sorted already
    };
    if scratch.len() < len {
        scratch.resize(len, 0);
    }
    let other = &mut scratch[..len];
    let (mut src, mut dst): (&mut [u32], &mut [u32]) = (keys, other);
    let mut in_keys = true;
    for &pass in &moving {
        let shift = pass * RADIX_BITS;
        let counts: Vec<Histogram> = if pass == first_pass {
            first.iter().map(|c| c[pass as usize]).collect()
        } else {
            src.par_chunks(chunk)
                .map(|keys| {
                    let mut counts = [0u32; DIGITS];
                    for &key in keys {
                        counts[digit(key, shift) as usize] += 1;
                    }
                    counts
                })
                .collect()
        };
        let starts = scan(&counts);
        let (encoding, decoding) = (pass == first_pass, pass == last_pass);
        let out = SharedOut(dst.as_mut_ptr());
        src.par_chunks(chunk)
            .zip(starts.into_par_iter())
            .for_each(|(keys, next)| {
                // SAFETY: `next` holds this chunk's first place for each digit (`scan`); the
                // chunk's keys of digit d fill places next[d].. inside `dst`, which no other
                // chunk writes.
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

/// Keys a digit's write-combining buffer holds: one 64-byte cache line.
const BUFFERED: usize = 16;

/// Writes each of `keys` (encoded first when `encoding`, decoded last when `decoding`) to
/// `out[next[digit]++]`, in order. The keys of each digit gather in a cache line's worth of
/// buffer first and leave 16 at a time: 256 streams of whole lines instead of single words.
///
/// # Safety
/// For every digit d, `out[next[d] .. next[d] + (keys of digit d)]` is inside the output and
/// written by no one else meanwhile.
#[allow(clippy::too_many_arguments)]
unsafe fn scatter<C: Codec>(
    keys: &[u32],
    out: SharedOut,
    mut next: Histogram,
    shift: u32,
    codec: C,
    encoding: bool,
    decoding: bool,
) {
    let mut buffers = [[0u32; BUFFERED]; DIGITS];
    let mut held = [0u8; DIGITS];
    for &bits in keys {
        let key = if encoding { codec.encode(bits) } else { bits };
        let d = digit(key, shift) as usize;
        let n = held[d] as usize;
        buffers[d][n] = if decoding { codec.decode(key) } else { key };
        if n + 1 == BUFFERED {
            // SAFETY: the digit's next 16 places are its own (the caller's contract).
            unsafe { out.write_all(next[d] as usize, &buffers[d]) };
            next[d] += BUFFERED as u32;
            held[d] = 0;
        } else {
            held[d] = n as u8 + 1;
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
fn scan(counts: &[Histogram]) -> Vec<Histogram> {
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
#[derive(Clone, Copy)]
struct SharedOut(*mut u32);

// SAFETY: the chunks write disjoint places (see `sort`), and the buffer outlives the scatter.
unsafe impl Send for SharedOut {}
// SAFETY: as above.
unsafe impl Sync for SharedOut {}

impl SharedOut {
    /// Copies `values` to places `index..index + values.len()`.
    ///
    /// # Safety
    /// Those places are inside the buffer, and no one else reads or writes them meanwhile.
    #[inline(always)]
    unsafe fn write_all(self, index: usize, values: &[u32]) {
        // SAFETY: the caller's contract; `values` is another allocation.
        unsafe { std::ptr::copy_nonoverlapping(values.as_ptr(), self.0.add(index), values.len()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reference::rust_sort;
    use crate::rng::SplitMix64;

    #[test]
    fn sorts_like_the_reference_with_skipped_and_odd_passes() {
        let kinds = [KeyKind::U32, KeyKind::I32, KeyKind::F32];
        let orders = [SortOrder::Ascending, SortOrder::Descending];
        let random = SplitMix64::new(7).bits(100_000);
        let inputs: [Vec<u32>; 5] = [
            random.clone(),
            random.iter().map(|k| k & 0xff).collect(), // three passes skipped
            random.iter().map(|k| k & 0xff00_00ff).collect(), // two passes moved
            random.iter().map(|k| k & 0x00ff_0000).collect(), // one pass moved
            vec![0x7fc0_0001; 5000],                   // no pass moved
        ];
        for input in &inputs {
            for kind in kinds {
                for order in orders {
                    let mut keys = input.clone();
                    sort_in_place(&mut keys, kind, order);
                    assert!(keys == rust_sort(input, kind, order), "{kind:?} {order:?}");
                }
            }
        }
    }
}
