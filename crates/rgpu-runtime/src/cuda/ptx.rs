//! Choosing and reading the embedded PTX: which artifact a device runs, its text and ISA.

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

/// The PTX artifacts that hold `entry`.
pub(crate) fn candidates<'a>(artifacts: &'a [Artifact], entry: &str) -> Vec<&'a Artifact> {
    artifacts
        .iter()
        .filter(|a| a.kind == "ptx" && a.entry_points.contains(&entry))
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
        let artifacts = [ptx("sm_75"), spirv, other];
        let found = candidates(&artifacts, "k");
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].target, "sm_75");
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
