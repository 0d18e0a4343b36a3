//! Lists what each backend opens on this machine, and what `Device::auto` picks.

use rgpu_runtime::{Backend, Device};

fn main() {
    for backend in Backend::ALL {
        match Device::open(backend) {
            Ok(device) => println!("{backend}: {}", device.description()),
            Err(e) => println!("{backend}: {e}"),
        }
    }
    let (device, skipped) = Device::auto();
    for s in skipped {
        println!("auto skipped {s}");
    }
    println!("auto: {} ({})", device.backend(), device.description());
}
