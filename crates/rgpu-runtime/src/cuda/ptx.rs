//! Choosing and reading the embedded modules: which PTX or SASS (cubin) a device runs, the
//! PTX's text and ISA.

use crate::kernel::Artifact;

/// `"sm_86"` -> `(86, false)`; `"sm_90a"` -> `(90, true)` (runs only on exactly 9.0).
fn arch_of(target: &str) -> Option<(u32, bool)> {
    let digits = target.strip_prefix("sm_")?;
    let (number, specific) = match digits.strip_suffix(['a', 'f']) {
        Some(n) => (n, true),
        None => (digits, false),
    };
    Some((number.parse().ok()?, specific))
}

/// The newest PTX that a device of compute capability `cc` can run: the highest
/// `sm_XX <= cc`; `sm_XXa`/`sm_XXf` only on exactly that compute capability (and preferred
/// there over plain `sm_XX`).
pub(crate) fn pick_ptx<'a>(candidates: &[&'a Artifact], cc: (i32, i32)) -> Option<&'a Artifact> {
    let device = u32::try_from(cc.0 * 10 + cc.1).ok()?;
    candidates
        .iter()
        .filter_map(|a| arch_of(a.target).map(|arch| (arch, *a)))
        .filter(|((arch, specific), _)| *arch <= device && (!specific || *arch == device))
        .max_by_key(|((arch, specific), _)| (*arch, *specific))
        .map(|(_, a)| a)
}

/// The newest SASS that a device of compute capability `cc` runs: machine code for
/// `sm_XY` runs on compute capability X.Z with Z >= Y (the same major: `sm_80` on 8.0, 8.6
/// and 8.9, never on 9.0); `sm_XXa`/`sm_XXf` only on exactly that compute capability (and
/// preferred there over plain `sm_XX`).
pub(crate) fn pick_sass<'a>(candidates: &[&'a Artifact], cc: (i32, i32)) -> Option<&'a Artifact> {
    let (major, minor) = (u32::try_from(cc.0).ok()?, u32::try_from(cc.1).ok()?);
    let device = major * 10 + minor;
    candidates
        .iter()
        .filter_map(|a| arch_of(a.target).map(|arch| (arch, *a)))
        .filter(|((arch, specific), _)| {
            arch / 10 == major && arch % 10 <= minor && (!specific || *arch == device)
        })
        .max_by_key(|((arch, specific), _)| (*arch, *specific))
        .map(|(_, a)| a)
}

/// The artifact kind of PTX.
pub(crate) const PTX: &str = "ptx";
/// The artifact kind of SASS: ptxas's cubin of one of the PTX modules.
pub(crate) const CUBIN: &str = "cubin";

/// The artifacts of `kind` that hold `entry`.
pub(crate) fn candidates<'a>(
    artifacts: &'a [Artifact],
    entry: &str,
    kind: &str,
) -> Vec<&'a Artifact> {
    artifacts
        .iter()
        .filter(|a| a.kind == kind && a.entry_points.contains(&entry))
        .collect()
}

/// The PTX module's text, without the NUL terminator some tools append; `None` if it is
/// not text or has a NUL inside.
pub(crate) fn text(bytes: &[u8]) -> Option<&str> {
    let end = bytes.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    let text = std::str::from_utf8(&bytes[..end]).ok()?;
    (!text.contains('\0')).then_some(text)
}

/// The PTX ISA version (`.version 7.8`), `"?"` when missing.
pub(crate) fn isa(ptx: &str) -> &str {
    ptx.lines()
        .find_map(|l| l.trim().strip_prefix(".version "))
        .map_or("?", str::trim)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ptx(target: &'static str) -> Artifact {
        Artifact {
            kind: "ptx",
            target,
            codegen: "nvptx",
            entry_points: &["k"],
            sha256: "",
            bytes: b"",
            faults: &[],
        }
    }

    #[test]
    fn picks_the_newest_arch_the_device_runs() {
        let (a, b, c, d) = (ptx("sm_75"), ptx("sm_80"), ptx("sm_90"), ptx("sm_90a"));
        let all = [&a, &b, &c, &d];
        assert_eq!(pick_ptx(&all, (8, 6)).unwrap().target, "sm_80");
        assert_eq!(pick_ptx(&all, (9, 0)).unwrap().target, "sm_90a");
        assert_eq!(pick_ptx(&all[..3], (9, 0)).unwrap().target, "sm_90");
        assert_eq!(pick_ptx(&[&d, &c], (9, 0)).unwrap().target, "sm_90a");
        assert_eq!(pick_ptx(&all, (12, 0)).unwrap().target, "sm_90");
        assert!(pick_ptx(&all, (7, 0)).is_none());
        assert_eq!(pick_ptx(&[&d], (9, 0)).unwrap().target, "sm_90a");
        assert!(pick_ptx(&[&d], (10, 0)).is_none());
        assert!(pick_ptx(&[&ptx("compute_90")], (9, 0)).is_none());
    }

    fn cubin(target: &'static str) -> Artifact {
        Artifact {
            kind: CUBIN,
            ..ptx(target)
        }
    }

    #[test]
    fn sass_runs_on_its_major_from_its_minor_up() {
        let (a, b, c, d) = (
            cubin("sm_75"),
            cubin("sm_80"),
            cubin("sm_86"),
            cubin("sm_90"),
        );
        let all = [&a, &b, &c, &d];
        assert_eq!(pick_sass(&all, (8, 0)).unwrap().target, "sm_80");
        assert_eq!(pick_sass(&all, (8, 6)).unwrap().target, "sm_86");
        assert_eq!(pick_sass(&all, (8, 9)).unwrap().target, "sm_86");
        assert_eq!(pick_sass(&all, (7, 5)).unwrap().target, "sm_75");
        assert_eq!(pick_sass(&all, (9, 0)).unwrap().target, "sm_90");
        // Another major never runs it: the PTX is JIT-compiled there.
        assert!(pick_sass(&all, (10, 0)).is_none());
        assert!(pick_sass(&all, (12, 0)).is_none());
        assert!(pick_sass(&all, (7, 0)).is_none());
        assert!(pick_sass(&[&b, &d], (8, 9)).is_some_and(|a| a.target == "sm_80"));
        assert!(pick_sass(&[&c], (8, 0)).is_none());
    }

    #[test]
    fn arch_specific_sass_runs_only_on_exactly_its_compute_capability() {
        let (plain, specific, family) = (cubin("sm_90"), cubin("sm_90a"), cubin("sm_100f"));
        assert_eq!(
            pick_sass(&[&plain, &specific], (9, 0)).unwrap().target,
            "sm_90a"
        );
        assert_eq!(
            pick_sass(&[&specific, &plain], (9, 0)).unwrap().target,
            "sm_90a"
        );
        assert!(pick_sass(&[&specific], (9, 1)).is_none());
        assert_eq!(
            pick_sass(&[&specific, &plain], (9, 1)).unwrap().target,
            "sm_90"
        );
        assert_eq!(pick_sass(&[&family], (10, 0)).unwrap().target, "sm_100f");
        assert!(pick_sass(&[&family], (10, 3)).is_none());
        assert!(pick_sass(&[&cubin("sm_100")], (10, 3)).is_some());
        assert!(pick_sass(&[&cubin("compute_90")], (9, 0)).is_none());
        assert!(pick_sass(&[&plain], (-1, 0)).is_none());
    }

    #[test]
    fn candidates_list_the_entry_point() {
        let spirv = Artifact {
            kind: "spirv",
            ..ptx("spirv-unknown-vulkan1.2")
        };
        let other = Artifact {
            entry_points: &["j"],
            ..ptx("sm_80")
        };
        let artifacts = [ptx("sm_75"), spirv, other, cubin("sm_90")];
        let found = candidates(&artifacts, "k", PTX);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].target, "sm_75");
        let found = candidates(&artifacts, "k", CUBIN);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].target, "sm_90");
    }

    #[test]
    fn text_and_isa() {
        assert_eq!(
            text(b".version 7.8\n.target sm_90\0\0"),
            Some(".version 7.8\n.target sm_90")
        );
        assert_eq!(text(b"a\0b"), None);
        assert_eq!(text(&[0xff, 0xfe]), None);
        assert_eq!(isa("// x\n.version 8.5 \n.target sm_90"), "8.5");
        assert_eq!(isa(".target sm_90"), "?");
    }
}
