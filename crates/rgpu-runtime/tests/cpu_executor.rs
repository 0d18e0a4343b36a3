//! The cpu executor as the generated launchers drive it: items, workgroups with shared
//! memory and barriers, panics, and a large workgroup launch (timed).

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

use rgpu_runtime::__private::cpu::{run_groups, run_groups_named, run_items, SCRATCH_ALIGN};
use rgpu_runtime::{Backend, Device, Global, Group, Input, InputOutput, Item, Shared};

/// Runs `f` and returns its panic message.
fn panic_message(f: impl FnOnce()) -> String {
    let payload = panic::catch_unwind(AssertUnwindSafe(f)).expect_err("it should panic");
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

#[test]
fn items_visit_every_index_exactly_once() {
    let threads = 256;
    for count in [0, 1, threads - 1, threads + 1, 1_000_000] {
        let seen: Vec<AtomicU32> = (0..count).map(|_| AtomicU32::new(0)).collect();
        run_items(count, threads, &|item: Item| {
            assert_eq!(item.count(), count);
            seen[item.index() as usize].fetch_add(1, Ordering::Relaxed);
        });
        assert!(
            seen.iter().all(|s| s.load(Ordering::Relaxed) == 1),
            "count {count}"
        );
    }
}

#[test]
fn items_through_global_and_host_inputs() {
    // What a generated launcher does on the cpu: host views of its arguments, a Global for
    // each read-write one.
    let device = Device::open(Backend::Cpu).unwrap();
    let x: Vec<f32> = (0..10_000).map(|i| i as f32).collect();
    let mut y = device.upload(&vec![1.0f32; 10_000]).unwrap();
    let xs = Input::host(&x).unwrap();
    let ys = y.host_mut().unwrap();
    // SAFETY: `ys` outlives the launch and is only accessed through `out`.
    let out = unsafe { Global::from_raw(ys.as_mut_ptr(), ys.len() as u32) };
    run_items(10_000, 64, &|item: Item| {
        let i = item.index();
        // SAFETY: every item writes only its own index, which is < len.
        unsafe { out.write(i, 2.0 * xs[i as usize] + out.read(i)) };
    });
    let y = y.read().unwrap();
    assert!(y
        .iter()
        .enumerate()
        .all(|(i, &v)| v == 2.0 * i as f32 + 1.0));
}

const TILE: usize = 256;

#[test]
fn a_workgroup_reverses_a_tile_through_shared_memory() {
    let groups = 64u32;
    let data: Vec<u32> = (0..groups * TILE as u32).collect();
    let mut out = vec![0u32; data.len()];
    let global = unsafe_global(&mut out);
    let shared_bytes = std::mem::size_of::<u32>() * TILE;
    run_groups(
        groups,
        TILE as u32,
        shared_bytes,
        &|g: Group, scratch: *mut u8| {
            assert_eq!(scratch as usize % SCRATCH_ALIGN, 0);
            // SAFETY: the executor gives `shared_bytes` (TILE words) of aligned scratch.
            let tile = unsafe { Shared::<u32, TILE>::from_cpu(scratch) };
            let t = g.thread();
            // Zeroed before the workgroup starts.
            assert_eq!(tile.load(t), 0);
            tile.store(t, data[g.global_thread() as usize]);
            g.barrier();
            let reversed = tile.load(TILE as u32 - 1 - t);
            g.barrier();
            tile.store(t, reversed);
            g.barrier();
            // SAFETY: each invocation writes its own global index.
            unsafe { global.write(g.global_thread(), tile.load(t)) };
        },
    );
    for (g, chunk) in out.chunks(TILE).enumerate() {
        let expected: Vec<u32> = (0..TILE as u32)
            .rev()
            .map(|t| g as u32 * TILE as u32 + t)
            .collect();
        assert_eq!(chunk, expected);
    }
}

/// A `Global` over `out` for one launch.
fn unsafe_global(out: &mut [u32]) -> Global<u32> {
    // SAFETY: the tests keep `out` alive and untouched for the launch that uses this.
    unsafe { Global::from_raw(out.as_mut_ptr(), out.len() as u32) }
}

#[test]
fn a_prefix_sum_over_shared_memory_in_log2_steps() {
    let groups = 16u32;
    let mut out = vec![0u32; groups as usize * TILE];
    let global = unsafe_global(&mut out);
    run_groups(groups, TILE as u32, 2 * 4 * TILE, &|g: Group, scratch| {
        // Two arrays in one scratch: ping and pong (Hillis-Steele).
        // SAFETY: the scratch holds 2 * TILE words; the second starts TILE words in.
        let (a, b) = unsafe {
            (
                Shared::<u32, TILE>::from_cpu(scratch),
                Shared::<u32, TILE>::from_cpu(scratch.add(4 * TILE)),
            )
        };
        let t = g.thread();
        a.store(t, g.id() + 1);
        g.barrier();
        let (mut from, mut to) = (a, b);
        let mut step = 1;
        while step < TILE as u32 {
            let v = from.load(t) + if t >= step { from.load(t - step) } else { 0 };
            to.store(t, v);
            g.barrier();
            std::mem::swap(&mut from, &mut to);
            step *= 2;
        }
        // SAFETY: each invocation writes its own global index.
        unsafe { global.write(g.global_thread(), from.load(t)) };
    });
    for (g, chunk) in out.chunks(TILE).enumerate() {
        let expected: Vec<u32> = (1..=TILE as u32).map(|t| t * (g as u32 + 1)).collect();
        assert_eq!(chunk, expected);
    }
}

#[test]
fn a_barrier_skipped_by_some_invocations_panics() {
    let message = panic_message(|| {
        run_groups_named("skips", 4, 64, 0, &|g: Group, _| {
            if g.thread() < 32 {
                g.barrier();
            }
        });
    });
    assert!(
        message.starts_with("kernel `skips`: workgroup ")
            && message.ends_with(": a barrier was not reached by every invocation"),
        "{message}"
    );
    // The threads that did return were not the problem: one extra barrier is caught too.
    let message = panic_message(|| {
        run_groups_named("extra", 1, 8, 0, &|g: Group, _| {
            g.barrier();
            if g.thread() == 7 {
                g.barrier();
            }
        });
    });
    assert_eq!(
        message,
        "kernel `extra`: workgroup 0: a barrier was not reached by every invocation"
    );
}

#[test]
fn a_panic_in_an_invocation_propagates() {
    let message = panic_message(|| {
        run_groups(8, 32, 64, &|g: Group, _| {
            g.barrier();
            assert!(
                !(g.id() == 5 && g.thread() == 3),
                "invocation 3 of workgroup 5 fails"
            );
            g.barrier();
        });
    });
    assert_eq!(message, "invocation 3 of workgroup 5 fails");
    let message = panic_message(|| {
        run_items(100_000, 256, &|item: Item| {
            assert!(item.index() != 77_777, "item 77777 fails");
        });
    });
    assert_eq!(message, "item 77777 fails");
    // The executor still works afterwards (stacks and scratch are reused).
    let count = AtomicU32::new(0);
    run_groups(8, 32, 64, &|g: Group, _| {
        g.barrier();
        count.fetch_add(1, Ordering::Relaxed);
    });
    assert_eq!(count.into_inner(), 8 * 32);
}

#[test]
fn a_barrier_outside_a_workgroup_panics() {
    // A Group is Copy: one smuggled out of its launch cannot wait for anybody.
    let smuggled = std::sync::Mutex::new(None);
    run_groups(1, 1, 0, &|g, _| *smuggled.lock().unwrap() = Some(g));
    let group = smuggled.into_inner().unwrap().unwrap();
    let message = panic_message(|| group.barrier());
    assert!(
        message.starts_with("Group::barrier() was called outside"),
        "{message}"
    );
    let message = panic_message(|| run_items(1, 1, &|_| group.barrier()));
    assert!(
        message.starts_with("Group::barrier() was called outside"),
        "{message}"
    );
}

#[test]
fn subgroups_on_the_cpu_have_one_lane() {
    run_groups(2, 4, 0, &|g: Group, _| {
        assert_eq!(g.subgroup_size(), 1);
        assert_eq!(g.subgroup_id(), g.thread());
        assert_eq!(g.subgroup_lane(), 0);
        assert_eq!(g.subgroup_ballot(true), 1);
        assert_eq!(g.subgroup_ballot(false), 0);
        assert_eq!(g.subgroup_add(7), 7);
        assert_eq!(g.subgroup_exclusive_add(7), 0);
        assert_eq!(g.subgroup_broadcast(9, 0), 9);
        assert_eq!(g.subgroup_shuffle(11, 0), 11);
        assert_eq!(g.count(), 2);
        assert_eq!(g.size(), 4);
    });
}

#[test]
fn atomics_on_shared_and_global_memory() {
    let mut totals = vec![0u32; 3];
    let global = unsafe_global(&mut totals);
    global.atomic_min(2, 0);
    run_groups(100, 64, 4, &|g: Group, scratch| {
        // SAFETY: 4 bytes of scratch: one word.
        let count = unsafe { Shared::<u32, 1>::from_cpu(scratch) };
        count.atomic_add(0, 1);
        g.barrier();
        if g.thread() == 0 {
            global.atomic_add(0, count.load(0));
            global.atomic_max(1, g.id());
        }
    });
    assert_eq!(totals, [6400, 99, 0]);
    let message = panic_message(|| {
        let mut one = [0u32];
        unsafe_global(&mut one).atomic_add(1, 1);
    });
    assert!(
        message.contains("index 1 is past the 1 elements"),
        "{message}"
    );
    let message = panic_message(|| {
        run_groups(1, 1, 4, &|_, scratch| {
            // SAFETY: 4 bytes of scratch: one word.
            let one = unsafe { Shared::<f32, 1>::from_cpu(scratch) };
            one.store(1, 0.0);
        });
    });
    assert!(
        message.contains("index 1 is past the 1 elements"),
        "{message}"
    );
}

#[test]
fn a_thousand_workgroups_of_256_with_20_barriers() {
    let (groups, threads, barriers) = (1000u32, 256u32, 20u32);
    let sum = AtomicU32::new(0);
    let start = Instant::now();
    run_groups(
        groups,
        threads,
        4 * threads as usize,
        &|g: Group, scratch| {
            // SAFETY: 4 * threads bytes of scratch.
            let words = unsafe { Shared::<u32, 256>::from_cpu(scratch) };
            let t = g.thread();
            for round in 0..barriers / 2 {
                words.store(t, round + t);
                g.barrier();
                // Every neighbour has written this round's value before anyone reads it...
                assert_eq!(words.load((t + 1) % threads), round + (t + 1) % threads);
                // ... and read it before anyone writes the next round's.
                g.barrier();
            }
            sum.fetch_add(1, Ordering::Relaxed);
        },
    );
    let elapsed = start.elapsed();
    assert_eq!(sum.into_inner(), groups * threads);
    eprintln!(
        "cpu executor: {groups} workgroups x {threads} threads x {barriers} barriers in \
         {:.1} ms on {} rayon threads",
        elapsed.as_secs_f64() * 1e3,
        rayon::current_num_threads()
    );
}
