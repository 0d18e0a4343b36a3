//! Checked launches on the SPIR-V backends (wgpu, ash): the fault record a checked build's
//! module writes (rgpu's SPIR-V pass, `rgpu/spirv/faults.py`, makes each panic's DebugPrintf
//! into stores to it) and its reading back as `Error::OutOfRange`.
//!
//! The record is a storage buffer at descriptor set [`SET`], binding [`BINDING`] (a set of its
//! own: wgpu's Vulkan backend numbers a set's bindings densely, and set 0's are the kernel's
//! buffers, then the webgpu backend's params), one per checked module and device: word 0 counts the faulting invocations, the first of them writes its
//! site (1-based: the format string `Artifact::faults[site - 1]`) to word 1 and its printf
//! operands' words from word 2; the others write a spare record after it. The format is
//! rust-gpu's: `[Rust panicked at FILE:LINE:COL]`, the panic's message (rust-gpu indents its
//! lines), then the inlined calls (`called at FILE:LINE:COL`).

use crate::backend::Backend;
use crate::error::Error;
use crate::kernel::{KernelInfo, Place};

/// The record's descriptor set and binding (rgpu/spirv/faults.py `FAULT_SET`,
/// `FAULT_BINDING`).
pub(crate) const SET: u32 = 1;
pub(crate) const BINDING: u32 = 0;
/// Words of one record (`RECORD_WORDS` there); the buffer holds two.
pub(crate) const RECORD_WORDS: usize = 32;
/// The buffer's size in bytes: the record and the spare one.
pub(crate) const BYTES: usize = 2 * RECORD_WORDS * 4;

/// A fault read back: the place the format names, the frames it passed through, the message.
#[derive(Debug, PartialEq)]
pub(crate) struct Fault {
    pub(crate) location: String,
    pub(crate) frames: Vec<String>,
    pub(crate) message: String,
}

impl Fault {
    /// The fault in `bytes` (a record as the buffer holds it), `None` when none was recorded.
    pub(crate) fn read(bytes: &[u8], sites: &[&str]) -> Option<Fault> {
        let words: Vec<u32> = bytes
            .chunks_exact(4)
            .take(RECORD_WORDS)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
            .collect();
        if words.first().copied().unwrap_or(0) == 0 {
            return None;
        }
        let site = words.get(1).copied().unwrap_or(0) as usize;
        let Some(format) = site.checked_sub(1).and_then(|i| sites.get(i)) else {
            return Some(Fault {
                location: "an unknown place".into(),
                frames: Vec::new(),
                message: format!("a fault the module names as site {site}, which it does not list"),
            });
        };
        Some(decode(format, &words[2..]))
    }

    /// `Error::OutOfRange` for `kernels` (those launched since the last wait): at the first
    /// place, innermost first, that is one of theirs (it names the parameter), else where the
    /// panic was.
    pub(crate) fn into_error(self, backend: Backend, kernels: &[&'static KernelInfo]) -> Error {
        let places: Vec<Place> = kernels
            .iter()
            .flat_map(|k| k.places.iter().copied())
            .collect();
        let is_place = |at: &String| {
            crate::error::line_column(at)
                .is_some_and(|lc| places.iter().any(|p| (p.line, p.column) == lc))
        };
        let location = std::iter::once(&self.location)
            .chain(&self.frames)
            .find(|at| is_place(at))
            .unwrap_or(&self.location)
            .clone();
        let names = kernels.iter().map(|k| k.name).collect();
        Error::out_of_range(backend, names, location, self.message).with_places(&places)
    }
}

/// What [`take`] asks of a backend's record.
pub(crate) enum Access<'a> {
    /// Copy the record's bytes out.
    Read(&'a mut [u8; BYTES]),
    /// Zero it (it held a fault).
    Clear,
}

/// After a wait: each of `records` (a checked module's record and its sites) read through
/// `access`, one that holds a fault cleared; the first fault becomes `Error::OutOfRange` for
/// `kernels` (those launched since the wait before). Every record is read and cleared, so
/// the device is usable after the error.
pub(crate) fn take<R>(
    backend: Backend,
    kernels: &[&'static KernelInfo],
    records: impl IntoIterator<Item = (R, &'static [&'static str])>,
    mut access: impl FnMut(&R, Access<'_>) -> Result<(), Error>,
) -> Result<(), Error> {
    let mut first = None;
    for (record, sites) in records {
        let mut bytes = [0u8; BYTES];
        access(&record, Access::Read(&mut bytes))?;
        if let Some(found) = Fault::read(&bytes, sites) {
            access(&record, Access::Clear)?;
            first = first.or(Some(found));
        }
    }
    first.map_or(Ok(()), |found| Err(found.into_error(backend, kernels)))
}

/// rust-gpu's format with the operands' `words` put in.
fn decode(format: &str, words: &[u32]) -> Fault {
    let text = printf(format, words);
    let (location, rest) = match text
        .split_once("[Rust ")
        .and_then(|(_, r)| r.split_once(']'))
    {
        Some((head, rest)) => (
            head.split_once(" at ")
                .map_or("an unknown place", |(_, at)| at)
                .to_string(),
            rest,
        ),
        None => ("an unknown place".to_string(), text.as_str()),
    };
    // The message: up to the first call (its lines indented by one space).
    let body = rest.split("\n      ").next().unwrap_or("");
    let message = body
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    let frames = rest
        .lines()
        .filter_map(|l| l.trim().strip_prefix("called at "))
        .map(str::to_string)
        .collect();
    Fault {
        location,
        frames,
        message,
    }
}

/// `format` (the DebugPrintf conversions: `%[flags][width][.precision][vN][l]conv`) with
/// `words`: one word a conversion, two with `l`, N with `vN` (components joined by ", ").
fn printf(format: &str, words: &[u32]) -> String {
    let mut out = String::new();
    let mut words = words.iter().copied();
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        if chars.peek() == Some(&'%') {
            chars.next();
            out.push('%');
            continue;
        }
        while chars
            .peek()
            .is_some_and(|c| c.is_ascii_digit() || "-+ #.".contains(*c))
        {
            chars.next();
        }
        let mut lanes = 1;
        if chars.peek() == Some(&'v') {
            chars.next();
            lanes = chars.next().and_then(|d| d.to_digit(10)).unwrap_or(1) as usize;
        }
        let long = chars.peek() == Some(&'l');
        if long {
            chars.next();
        }
        let conversion = chars.next().unwrap_or('u');
        let values: Vec<String> = (0..lanes)
            .map(|_| {
                let low = words.next().unwrap_or(0);
                let high = if long { words.next().unwrap_or(0) } else { 0 };
                value(conversion, low, high, long)
            })
            .collect();
        out += &values.join(", ");
    }
    out
}

fn value(conversion: char, low: u32, high: u32, long: bool) -> String {
    let wide = (u64::from(high) << 32) | u64::from(low);
    match (conversion, long) {
        ('d' | 'i', false) => (low as i32).to_string(),
        ('d' | 'i', true) => (wide as i64).to_string(),
        ('x', _) => format!("{wide:x}"),
        ('X', _) => format!("{wide:X}"),
        ('o', _) => format!("{wide:o}"),
        ('c', _) => char::from_u32(low).map_or_else(|| low.to_string(), String::from),
        ('f' | 'F' | 'e' | 'E' | 'g' | 'G' | 'a' | 'A', false) => f32::from_bits(low).to_string(),
        ('f' | 'F' | 'e' | 'E' | 'g' | 'G' | 'a' | 'A', true) => f64::from_bits(wide).to_string(),
        _ => wide.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const INDEX: &str = "\n[Rust panicked at kernel/src/lib.rs:21:10]\n index out of bounds: the \
                         len is %u but the index is %u\n      in read_past_end()\n";

    fn record(site: u32, args: &[u32]) -> Vec<u8> {
        let mut words = vec![1, site];
        words.extend_from_slice(args);
        words.resize(2 * RECORD_WORDS, 0);
        words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    #[test]
    fn reads_the_place_the_message_and_the_values() {
        let fault = Fault::read(&record(1, &[64, 64]), &[INDEX]).unwrap();
        assert_eq!(
            fault,
            Fault {
                location: "kernel/src/lib.rs:21:10".into(),
                frames: vec![],
                message: "index out of bounds: the len is 64 but the index is 64".into(),
            }
        );
        assert_eq!(Fault::read(&[0; BYTES], &[INDEX]), None);
    }

    #[test]
    fn reads_the_calls_and_wide_and_vector_values() {
        let format = "\n[Rust panicked at vendor/rgpu/src/device/spirv.rs:348:13]\n index %u \
                      past %lu, at %v3u, %i, %f\n      in rgpu::Global::element\n        \
                      called at vendor/rgpu/src/device/atomic.rs:409:9\n      by \
                      rgpu::Global::atomic\n        called at kernel/src/lib.rs:27:12\n";
        let half = 0.5f32.to_bits();
        let fault = Fault::read(
            &record(1, &[7, 5, 1, 1, 2, 3, -4i32 as u32, half]),
            &[format],
        )
        .unwrap();
        assert_eq!(fault.location, "vendor/rgpu/src/device/spirv.rs:348:13");
        assert_eq!(
            fault.frames,
            [
                "vendor/rgpu/src/device/atomic.rs:409:9",
                "kernel/src/lib.rs:27:12"
            ]
        );
        assert_eq!(
            fault.message,
            format!("index 7 past {}, at 1, 2, 3, -4, 0.5", (1u64 << 32) | 5)
        );
        assert_eq!(printf("100%% %x", &[255]), "100% ff");
    }

    #[test]
    fn a_site_the_module_does_not_list_is_still_a_fault() {
        let fault = Fault::read(&record(3, &[]), &[INDEX]).unwrap();
        assert!(fault.message.contains("site 3"), "{fault:?}");
    }
}
