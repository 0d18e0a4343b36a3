"""The user story of `rgpu init`, with the real cargo: an existing CLI project (a brightness
histogram tool with a CPU hot loop over a Vec<f32> and unit tests of its own) becomes an rgpu
workspace; the user writes one kernel for the loop and replaces the loop with one launcher
call. Its own tests pass unchanged, its output is byte-identical on the cpu backend, the
kernel builds to PTX that ptxas accepts, and `rgpu test` reports the cpu backend passed.

Only the cpu and cuda (compile-only, one arch) backends are built: a cold wgpu/ash build
takes minutes on a small CI machine.
"""

from __future__ import annotations

import difflib
import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from rgpu.artifacts import ptx
from rgpu.toolchains.tools import find_ptxas
from tests.conftest import REPO, run_rgpu

ARGS = ("--width", "640", "--height", "480", "--seed", "7", "--gain", "1.3", "--bias", "-0.1")

CARGO_TOML = """\
[package]
name = "histo"
version = "0.4.1"
edition = "2021"
description = "Brightness histograms of a generated test image"

[dependencies]
"""

MAIN_RS = """\
mod adjust;
mod args;
mod histogram;
mod image;

fn main() {
    let words: Vec<String> = std::env::args().skip(1).collect();
    let args = match args::parse(&words) {
        Ok(args) => args,
        Err(message) => {
            eprintln!("error: {message}");
            std::process::exit(2);
        }
    };
    let mut pixels = image::generate(args.width, args.height, args.seed);
    adjust::brighten(&mut pixels, args.gain, args.bias);
    println!(
        "image {}x{} seed {}: gain {} bias {}",
        args.width, args.height, args.seed, args.gain, args.bias
    );
    println!("mean {:.6}", histogram::mean(&pixels));
    println!("checksum {:016x}", histogram::checksum(&pixels));
    print!("{}", histogram::render(&histogram::histogram(&pixels, args.bins)));
}
"""

ARGS_RS = """\
//! Command-line arguments: `--width W --height H --seed S --gain G --bias B --bins N`.

#[derive(Debug, Clone, PartialEq)]
pub struct Args {
    pub width: usize,
    pub height: usize,
    pub seed: u64,
    pub gain: f32,
    pub bias: f32,
    pub bins: usize,
}

impl Default for Args {
    fn default() -> Self {
        Args { width: 256, height: 256, seed: 1, gain: 1.0, bias: 0.0, bins: 8 }
    }
}

pub fn parse(words: &[String]) -> Result<Args, String> {
    let mut args = Args::default();
    let mut words = words.iter();
    while let Some(flag) = words.next() {
        let value = words.next().ok_or(format!("{flag} needs a value"))?;
        let bad = |e: String| format!("{flag} {value}: {e}");
        match flag.as_str() {
            "--width" => args.width = value.parse().map_err(|e| bad(format!("{e}")))?,
            "--height" => args.height = value.parse().map_err(|e| bad(format!("{e}")))?,
            "--seed" => args.seed = value.parse().map_err(|e| bad(format!("{e}")))?,
            "--gain" => args.gain = value.parse().map_err(|e| bad(format!("{e}")))?,
            "--bias" => args.bias = value.parse().map_err(|e| bad(format!("{e}")))?,
            "--bins" => args.bins = value.parse().map_err(|e| bad(format!("{e}")))?,
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    if args.bins == 0 {
        return Err("--bins must be at least 1".into());
    }
    Ok(args)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        text.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn no_arguments_are_the_defaults() {
        assert_eq!(parse(&[]).unwrap(), Args::default());
    }

    #[test]
    fn every_option_is_read() {
        let args = parse(&words("--width 3 --height 2 --seed 9 --gain 1.5 --bias -0.1 --bins 4"));
        let args = args.unwrap();
        assert_eq!((args.width, args.height, args.seed, args.bins), (3, 2, 9, 4));
        assert_eq!((args.gain, args.bias), (1.5, -0.1));
    }

    #[test]
    fn bad_arguments_are_refused() {
        assert!(parse(&words("--colour 1")).is_err());
        assert!(parse(&words("--width")).is_err());
        assert!(parse(&words("--width wide")).is_err());
        assert!(parse(&words("--bins 0")).is_err());
    }
}
"""

IMAGE_RS = """\
//! A deterministic test image: a diagonal gradient with xorshift noise, values in [0, 1].

pub fn generate(width: usize, height: usize, seed: u64) -> Vec<f32> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut pixels = Vec::with_capacity(width * height);
    for y in 0..height {
        for x in 0..width {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let noise = (state >> 40) as f32 / (1u64 << 24) as f32;
            let gradient = (x + y) as f32 / (width + height).max(1) as f32;
            pixels.push(0.75 * gradient + 0.25 * noise);
        }
    }
    pixels
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_makes_the_same_image() {
        assert_eq!(generate(17, 5, 3), generate(17, 5, 3));
        assert_ne!(generate(17, 5, 3), generate(17, 5, 4));
    }

    #[test]
    fn pixels_are_in_range_and_counted() {
        let pixels = generate(31, 7, 1);
        assert_eq!(pixels.len(), 31 * 7);
        assert!(pixels.iter().all(|p| (0.0..=1.0).contains(p)));
    }
}
"""

ADJUST_RS = """\
//! Brightness: the hot loop, once per pixel.

/// Scales and shifts every pixel, clamped to [0, 1].
pub fn brighten(pixels: &mut [f32], gain: f32, bias: f32) {
    for pixel in pixels.iter_mut() {
        *pixel = (*pixel * gain + bias).clamp(0.0, 1.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales_shifts_and_clamps() {
        let mut pixels = vec![0.0, 0.25, 0.5, 1.0];
        brighten(&mut pixels, 2.0, -0.25);
        assert_eq!(pixels, vec![0.0, 0.25, 0.75, 1.0]);
    }

    #[test]
    fn identity_keeps_every_pixel() {
        let mut pixels: Vec<f32> = (0..1000).map(|i| i as f32 / 1000.0).collect();
        let before = pixels.clone();
        brighten(&mut pixels, 1.0, 0.0);
        assert_eq!(pixels, before);
    }

    #[test]
    fn an_empty_image_is_fine() {
        let mut pixels: Vec<f32> = Vec::new();
        brighten(&mut pixels, 3.0, 1.0);
        assert!(pixels.is_empty());
    }
}
"""

HISTOGRAM_RS = """\
//! Counting and reporting.

pub fn histogram(pixels: &[f32], bins: usize) -> Vec<u64> {
    let mut counts = vec![0; bins];
    for &pixel in pixels {
        let bin = ((pixel * bins as f32) as usize).min(bins - 1);
        counts[bin] += 1;
    }
    counts
}

pub fn mean(pixels: &[f32]) -> f64 {
    if pixels.is_empty() {
        return 0.0;
    }
    pixels.iter().map(|&p| p as f64).sum::<f64>() / pixels.len() as f64
}

/// Every bit of every pixel, folded: equal checksums mean equal images.
pub fn checksum(pixels: &[f32]) -> u64 {
    pixels.iter().fold(0xcbf2_9ce4_8422_2325, |hash: u64, p| {
        (hash ^ p.to_bits() as u64).wrapping_mul(0x100_0000_01b3)
    })
}

pub fn render(counts: &[u64]) -> String {
    let total: u64 = counts.iter().sum::<u64>().max(1);
    let mut out = String::new();
    for (bin, &count) in counts.iter().enumerate() {
        let low = bin as f32 / counts.len() as f32;
        let bar = "#".repeat((count * 40 / total) as usize);
        out += &format!("{low:.3} {count:>8} {bar}\\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pixel_lands_in_one_bin() {
        let counts = histogram(&[0.0, 0.1, 0.5, 0.99, 1.0], 4);
        assert_eq!(counts, vec![2, 0, 1, 2]);
    }

    #[test]
    fn mean_and_checksum() {
        assert_eq!(mean(&[]), 0.0);
        assert_eq!(mean(&[0.25, 0.75]), 0.5);
        assert_ne!(checksum(&[0.5]), checksum(&[0.25]));
    }

    #[test]
    fn render_draws_bars() {
        let text = render(&[1, 3]);
        assert_eq!(text.lines().next(), Some("0.000        1 ##########"));
        assert!(text.ends_with("0.500        3 ##############################\\n"));
    }
}
"""

PROJECT = {
    "Cargo.toml": CARGO_TOML,
    "src/main.rs": MAIN_RS,
    "src/args.rs": ARGS_RS,
    "src/image.rs": IMAGE_RS,
    "src/adjust.rs": ADJUST_RS,
    "src/histogram.rs": HISTOGRAM_RS,
}
MODULES = ("src/args.rs", "src/image.rs", "src/adjust.rs", "src/histogram.rs")

# What the user writes once `rgpu init` made the kernel crate: the loop body as a kernel...
# (tests/kernels/brighten.rs: a real file, which the portability corpus includes too) ...
KERNEL = "\n" + (REPO / "tests" / "kernels" / "brighten.rs").read_text(encoding="utf-8")
# ... and the loop replaced by one launch on the device `rgpu run --backend B` picks.
LOOP = """\
    for pixel in pixels.iter_mut() {
        *pixel = (*pixel * gain + bias).clamp(0.0, 1.0);
    }
"""
CALL = """\
    let (device, _skipped) = rgpu::Device::select().expect("no rgpu device");
    kernel::brighten(&device, pixels.len() as u32, gain, bias, pixels).expect("brighten");
"""


def cargo(*args: str, cwd: Path, env: dict[str, str] | None = None) -> str:
    """Run plain cargo as the user would; its stdout."""
    proc = subprocess.run(
        ["cargo", *args],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    assert proc.returncode == 0, f"cargo {' '.join(args)}\n{proc.stdout}\n{proc.stderr[-6000:]}"
    return proc.stdout


def passed_tests(output: str) -> set[str]:
    return {line.split()[1] for line in output.splitlines() if line.endswith(" ... ok")}


def unit_tests_in(text: str) -> str:
    return text[text.index("#[cfg(test)]") :]


def added_lines(before: str, after: str) -> list[str]:
    diff = difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
    return [line for line in diff if line.startswith("+") and not line.startswith("+++")]


@dataclass(frozen=True)
class Story:
    root: Path
    tests_before: set[str]
    output_before: str


@pytest.fixture(scope="module")
def story(tmp_path_factory: pytest.TempPathFactory) -> Story:
    """The project as the user had it, its tests and output, then `rgpu init` and the
    user's kernel and call."""
    root = tmp_path_factory.mktemp("story") / "histo"
    for rel, text in PROJECT.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    tests_before = passed_tests(cargo("test", cwd=root))
    assert len(tests_before) == 11, tests_before
    output_before = cargo("run", "--release", "--quiet", "--", *ARGS, cwd=root)
    assert output_before.startswith("image 640x480 seed 7: gain 1.3 bias -0.1\nmean ")

    run_rgpu("init", "-C", str(root))

    lib = root / "kernel" / "src" / "lib.rs"
    lib.write_text(lib.read_text() + KERNEL)
    adjust = root / "src" / "adjust.rs"
    assert LOOP in adjust.read_text()
    adjust.write_text(adjust.read_text().replace(LOOP, CALL))
    return Story(root, tests_before, output_before)


def test_the_user_wrote_a_handful_of_lines(story: Story) -> None:
    lib = (story.root / "kernel" / "src" / "lib.rs").read_text()
    template_lib = lib[: -len(KERNEL)]
    kernel_lines = added_lines(template_lib, lib)
    call_lines = added_lines(ADJUST_RS, (story.root / "src" / "adjust.rs").read_text())
    assert len([line for line in kernel_lines if line.strip("+ ")]) == 5
    assert len(call_lines) == 2


def test_the_projects_own_unit_tests_pass_unchanged(story: Story) -> None:
    for rel in MODULES:
        assert unit_tests_in((story.root / rel).read_text()) == unit_tests_in(PROJECT[rel]), rel
    assert passed_tests(cargo("test", cwd=story.root)) == story.tests_before


def test_the_output_is_byte_identical_on_the_cpu_backend(story: Story) -> None:
    through_rgpu = run_rgpu("run", "-C", str(story.root), "--", *ARGS).stdout
    assert through_rgpu == story.output_before
    plain = cargo("run", "--release", "--quiet", "--", *ARGS, cwd=story.root)
    assert plain == story.output_before


def test_rgpu_test_reports_the_cpu_backend_passed(story: Story) -> None:
    proc = run_rgpu("test", "-C", str(story.root))
    lines = [line.split() for line in proc.stderr.splitlines()]
    assert ["passed", "cpu:", "saxpy"] in lines, proc.stderr[-3000:]


def test_rgpu_build_cuda_makes_ptx_that_ptxas_accepts(story: Story) -> None:
    result = run_rgpu("build", "-C", str(story.root), "--backend", "cuda", "--arch", "sm_80",
                      "--json")  # fmt: skip
    data = json.loads(result.stdout)
    assert data["ok"] and "cuda" in data["backends"]
    artifact, cubin = data["artifacts"]  # the PTX and its SASS (rgpu/artifacts/sass.py)
    assert (cubin["kind"], cubin["target"]) == ("cubin", "sm_80")
    assert cubin["extra"]["ptx_sha256"] == artifact["sha256"]
    assert artifact["target"] == "sm_80" and artifact["extra"]["ptxas"] == "accepted"
    assert sorted(artifact["entry_points"]) == ["brighten", "saxpy"]
    ptxas = find_ptxas(os.environ)
    assert ptxas is not None, "ptxas missing: pip install nvidia-cuda-nvcc"
    file = story.root / "target" / "rgpu" / "kernels" / artifact["path"]
    assert ptx.check_with_ptxas(ptxas, file, "sm_80", os.environ, file.name) == "accepted"


def test_a_build_that_moves_a_locked_dependency_says_so(tmp_path: Path) -> None:
    """rgpu's crates need a newer bytemuck than the project had locked: cargo moves it at
    the first build, and rgpu says which package moved, from what to what, and for whom."""
    root = tmp_path / "locked"
    (root / "src").mkdir(parents=True)
    (root / "Cargo.toml").write_text(
        '[package]\nname = "locked"\nversion = "0.1.0"\nedition = "2021"\n\n'
        '[dependencies]\nbytemuck = "1.17"\n'
    )
    (root / "src" / "main.rs").write_text("fn main() {}\n")
    cargo("generate-lockfile", cwd=root)
    cargo("update", "-p", "bytemuck", "--precise", "1.17.0", cwd=root)
    run_rgpu("init", "-C", str(root))
    built = run_rgpu("build", "-C", str(root))
    moved = [ln for ln in built.stderr.splitlines() if ln.startswith("Cargo.lock: bytemuck ")]
    assert len(moved) == 1, built.stderr[-3000:]
    assert moved[0].startswith("Cargo.lock: bytemuck 1.17.0 -> 1.")
    assert "(needed by " in moved[0] and "rgpu" in moved[0]
    again = run_rgpu("build", "-C", str(root))
    assert "Cargo.lock:" not in again.stderr  # nothing moved this time
