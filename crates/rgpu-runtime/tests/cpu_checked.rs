//! Checked launches on the cpu backend (`__private::cpu::checked`, what the launchers of a
//! kernel crate built with `rgpu build --checked` call): a kernel's out-of-range index on one
//! of the device's worker threads is `Error::OutOfRange` naming the kernel, the place and
//! core's message, printed nowhere; the device runs the next launch right; and outside a
//! checked launch a kernel's panic is the caller's panic, as before.

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use rgpu_runtime::__private::cpu::{checked, run_groups_on, run_items_on};
use rgpu_runtime::__private::Place;
use rgpu_runtime::{Backend, Device, Error, Group, Item};

#[test]
fn a_checked_launch_returns_the_kernels_panic_and_the_device_goes_on() {
    // The program's own hook: it sees the panics outside checked launches, none inside.
    let seen = Arc::new(AtomicU32::new(0));
    let counter = Arc::clone(&seen);
    panic::set_hook(Box::new(move |_| {
        counter.fetch_add(1, Ordering::Relaxed);
    }));
    let device = Device::cpu_with_threads(4).unwrap();
    let data = [1u32, 2, 3, 4];
    let line = line!() + 3;
    let error = checked(true, || {
        run_items_on(&device, "read_past_end", 4, 64, &|item: Item| {
            std::hint::black_box(data[item.index() as usize + 1]);
        })
    })
    .unwrap_err();
    let Error::OutOfRange {
        backend,
        kernels,
        location,
        message,
        parameter: None,
    } = &error
    else {
        panic!("{error:#?}");
    };
    assert_eq!(
        (*backend, kernels.as_slice()),
        (Backend::Cpu, &["read_past_end"][..])
    );
    assert_eq!(location, &format!("{}:{line}:34", file!()));
    assert_eq!(
        message,
        "index out of bounds: the len is 4 but the index is 4"
    );
    assert!(error.to_string().starts_with(&format!(
        "kernel `read_past_end` failed on cpu at {location}: index out of bounds"
    )));
    // The launcher's places (the macro's, from the kernel's source) name the parameter.
    let place = |column| Place {
        line,
        column,
        param: "data",
    };
    let named = error.clone().with_places(&[place(30), place(34)]);
    assert!(
        named
            .to_string()
            .contains("the index is 4 of parameter `data` (checked launch)"),
        "{named}"
    );
    assert_eq!(
        error.clone().with_places(&[place(30)]).to_string(),
        error.to_string()
    );

    // The next launch, checked or not, runs every item.
    let sum = AtomicU32::new(0);
    checked(true, || {
        run_groups_on(&device, "sum", 4, 8, 0, &|g: Group, _: *mut u8| {
            sum.fetch_add(g.id() + 1, Ordering::Relaxed);
        })
    })
    .unwrap();
    // Each of the 8 threads of each workgroup adds its group's number.
    assert_eq!(sum.load(Ordering::Relaxed), 8 * (1 + 2 + 3 + 4));

    // Unchecked: the caller's panic, as a release build has it.
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
        run_items_on(&device, "read_past_end", 4, 64, &|item: Item| {
            std::hint::black_box(data[item.index() as usize + 1]);
        })
    }));
    assert!(outcome.is_err());
    let after_unchecked = seen.load(Ordering::Relaxed);
    assert!(
        after_unchecked >= 1,
        "the unchecked panic reached the program's hook"
    );
    // The checked launch's panics reached it not; a panic on a worker that ran a checked
    // launch before, outside any launch, does.
    // (rayon's global pool: the threads that ran the checked launch then panic outside it.)
    let global = Device::open(Backend::Cpu).unwrap();
    let ran = checked(true, || {
        run_items_on(&global, "ok", 1 << 16, 64, &|item: Item| {
            std::hint::black_box(item.index());
        })
    });
    assert!(ran.is_ok());
    let panics = rayon::broadcast(|_| panic::catch_unwind(|| panic!("outside a launch")).is_err());
    assert!(panics.iter().all(|&p| p));
    assert_eq!(
        seen.load(Ordering::Relaxed),
        after_unchecked + panics.len() as u32
    );
    let _ = panic::take_hook();
}
