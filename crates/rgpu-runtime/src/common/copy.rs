//! Large host memory copies (into and out of staging memory), split over a few threads:
//! one core copies at a fraction of what a PCIe link or the memory system moves.
//!
//! The threads are rayon's, in a pool of this module's own: the caller may hold a
//! device's lock while it waits for them, and the pool's threads never run other work
//! that could wait for that lock. A caller that is itself a rayon worker copies alone
//! (waiting for another pool, its thread would run its own pool's work meanwhile, which
//! may want the same lock).

use std::sync::OnceLock;

use rayon::prelude::*;

/// Bytes per parallel piece; copies of at most this size stay on the calling thread.
pub(crate) const PIECE: usize = 1 << 20;
/// Most threads the pool has: memory bandwidth saturates well before a large machine's
/// core count.
const MAX_THREADS: usize = 8;

fn pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    POOL.get_or_init(|| {
        let threads = std::thread::available_parallelism()
            .map_or(1, usize::from)
            .min(MAX_THREADS);
        if threads < 2 {
            return None;
        }
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("rgpu-copy-{i}"))
            .build()
            .ok()
    })
    .as_ref()
}

/// The pool, when `bytes` are worth splitting and this thread may wait for it.
fn parallel(bytes: usize) -> Option<&'static rayon::ThreadPool> {
    if bytes <= PIECE || rayon::current_thread_index().is_some() {
        return None;
    }
    pool()
}

/// Runs `copy` on each (destination, source) piece on the pool.
fn in_pool<D: Send>(
    pool: &rayon::ThreadPool,
    pieces: Vec<(D, &[u8])>,
    copy: impl Fn(D, &[u8]) + Sync,
) {
    pool.install(|| pieces.into_par_iter().for_each(|(d, s)| copy(d, s)));
}

/// `dst.copy_from_slice(src)` (equal lengths), in parallel pieces when large.
pub(crate) fn host_copy(dst: &mut [u8], src: &[u8]) {
    assert_eq!(dst.len(), src.len(), "host_copy needs equal lengths");
    match parallel(src.len()) {
        None => dst.copy_from_slice(src),
        Some(pool) => {
            let pieces = dst.chunks_mut(PIECE).zip(src.chunks(PIECE)).collect();
            in_pool(pool, pieces, |d: &mut [u8], s| d.copy_from_slice(s));
        }
    }
}

/// `host_copy` into a wgpu write-only mapping (written, never read).
#[cfg(feature = "wgpu")]
pub(crate) fn host_copy_to_mapping(mut dst: wgpu::WriteOnly<'_, [u8]>, src: &[u8]) {
    assert_eq!(dst.len(), src.len(), "host_copy needs equal lengths");
    let Some(pool) = parallel(src.len()) else {
        return dst.copy_from_slice(src);
    };
    /// The start of one piece of `dst` (`WriteOnly<[u8]>` itself is not `Send`).
    struct Piece(*mut u8);
    // SAFETY: each piece is written by one thread only, while `dst` stays borrowed here.
    unsafe impl Send for Piece {}
    let start = dst.as_raw_ptr().cast::<u8>().as_ptr();
    let pieces = src
        .chunks(PIECE)
        .enumerate()
        .map(|(i, s)| (Piece(start.wrapping_add(i * PIECE)), s))
        .collect();
    in_pool(pool, pieces, |piece: Piece, s| {
        // SAFETY: `dst` is `src.len()` writable bytes, borrowed until this function
        // returns; the pieces are disjoint, each `s.len()` bytes at its offset into both;
        // a mapping and a host slice do not overlap. Only writes: nothing reads `dst`.
        unsafe { std::ptr::copy_nonoverlapping(s.as_ptr(), piece.0, s.len()) }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_small_and_large_from_any_thread() {
        for len in [0, 1, 1000, PIECE, 3 * PIECE + 7] {
            let src: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
            let mut dst = vec![0u8; len];
            host_copy(&mut dst, &src);
            assert!(dst == src, "{len}");
            // From a rayon worker: on that thread alone.
            let mut dst = vec![0u8; len];
            rayon::scope(|_| host_copy(&mut dst, &src));
            assert!(dst == src, "{len} from a worker");
            #[cfg(feature = "wgpu")]
            {
                let mut dst = vec![0u8; len];
                host_copy_to_mapping(wgpu::WriteOnly::from_mut(dst.as_mut_slice()), &src);
                assert!(dst == src, "{len} into a write-only view");
            }
        }
    }
}
