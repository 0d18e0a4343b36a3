//! The cpu backend's thread count: `RGPU_CPU_THREADS`, `Device::cpu_with_threads` and
//! `Device::options().cpu_threads(n)` (a program's own `--threads` with `select`), as the
//! generated launchers run (`run_items_on` / `run_groups_on` with the device). One test
//! function, because `RGPU_CPU_THREADS` is process-wide.

use std::collections::HashSet;
use std::sync::Mutex;

use rgpu_runtime::__private::cpu::{run_groups_on, run_items_on};
use rgpu_runtime::{Backend, Device, Error, Group, Item, CPU_THREADS_VAR};

/// The distinct rayon pool sizes and worker indices seen by the invocations of a launch.
fn seen_by_items(device: &Device) -> (HashSet<usize>, HashSet<usize>) {
    let sizes = Mutex::new(HashSet::new());
    let workers = Mutex::new(HashSet::new());
    run_items_on(device, "k", 1 << 16, 256, &|_item: Item| {
        sizes.lock().unwrap().insert(rayon::current_num_threads());
        workers
            .lock()
            .unwrap()
            .insert(rayon::current_thread_index().unwrap_or(usize::MAX));
    })
    .unwrap();
    (sizes.into_inner().unwrap(), workers.into_inner().unwrap())
}

#[test]
fn the_cpu_thread_count_is_honoured_by_the_launch() {
    // Device::cpu_with_threads: the launch runs on exactly that many threads.
    let three = Device::cpu_with_threads(3).unwrap();
    assert_eq!(three.backend(), Backend::Cpu);
    assert_eq!(three.description(), "CPU, 3 threads (rayon)");
    let (sizes, workers) = seen_by_items(&three);
    assert_eq!(sizes, HashSet::from([3]));
    assert!(workers.iter().all(|&w| w < 3), "{workers:?}");
    let groups = Mutex::new(HashSet::new());
    run_groups_on(&three, "k", 64, 32, 0, &|_g: Group, _s: *mut u8| {
        groups.lock().unwrap().insert(rayon::current_num_threads());
    })
    .unwrap();
    assert_eq!(groups.into_inner().unwrap(), HashSet::from([3]));

    // RGPU_CPU_THREADS, read when the cpu device opens (open, select, auto).
    std::env::set_var(CPU_THREADS_VAR, "2");
    let two = Device::open(Backend::Cpu).unwrap();
    assert_eq!(two.description(), "CPU, 2 threads (rayon)");
    assert_eq!(seen_by_items(&two).0, HashSet::from([2]));
    std::env::set_var("RGPU_BACKEND", "cpu");
    let (selected, _skipped) = Device::select().unwrap();
    assert_eq!(seen_by_items(&selected).0, HashSet::from([2]));
    // The explicit count wins over the variable.
    assert_eq!(seen_by_items(&three).0, HashSet::from([3]));
    // A program's own count, with select: where the choice ends on the cpu, it wins too.
    let (own, _skipped) = Device::options().cpu_threads(3).select().unwrap();
    assert_eq!(own.backend(), Backend::Cpu);
    assert_eq!(seen_by_items(&own).0, HashSet::from([3]));
    let e = Device::options().cpu_threads(0).select().unwrap_err();
    assert!(matches!(e, Error::Config { .. }), "{e}");

    // An invalid value is a configuration error naming the variable.
    for bad in ["many", "-1"] {
        std::env::set_var(CPU_THREADS_VAR, bad);
        match Device::open(Backend::Cpu) {
            Err(Error::Config { reason }) => assert!(reason.contains(CPU_THREADS_VAR), "{reason}"),
            Err(other) => panic!("{bad}: {other}"),
            Ok(_) => panic!("{bad}: opened"),
        }
    }
    assert!(matches!(
        Device::cpu_with_threads(0),
        Err(Error::Config { .. })
    ));
    // select says so where it comes to the cpu (a GPU before it does not read it); a
    // program's own count does not read the variable.
    std::env::set_var("RGPU_BACKEND", "auto");
    match Device::select() {
        Err(e) => assert!(
            matches!(&e, Error::Config { reason } if reason.contains(CPU_THREADS_VAR)),
            "{e}"
        ),
        Ok((gpu, _)) => assert_ne!(gpu.backend(), Backend::Cpu),
    }
    std::env::set_var("RGPU_BACKEND", "cpu");
    let (four, _) = Device::options().cpu_threads(4).select().unwrap();
    assert_eq!(seen_by_items(&four).0, HashSet::from([4]));
    // auto always gives a device: the cpu on rayon's global pool.
    let (auto, skipped) = Device::auto();
    if auto.backend() == Backend::Cpu {
        let cpu = skipped.iter().find(|s| s.backend == Backend::Cpu).unwrap();
        assert!(cpu.reason.contains(CPU_THREADS_VAR), "{}", cpu.reason);
        assert_eq!(
            seen_by_items(&auto).0,
            HashSet::from([rayon::current_num_threads()])
        );
    }

    // Unset (or 0): rayon's global pool, one thread per core.
    std::env::remove_var(CPU_THREADS_VAR);
    let all = Device::open(Backend::Cpu).unwrap();
    let cores = rayon::current_num_threads();
    assert_eq!(seen_by_items(&all).0, HashSet::from([cores]));
}
