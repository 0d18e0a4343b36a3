"""README's Rust examples compile and do what the text says (issue 20, items 1 and 5): its
kernels (the SAXPY crate's `saxpy`, and the per-pixel `gradient` with the 2-D `Item` context)
go into a `--template minimal` workspace's kernel crate, its host lines into an example
program, built by `rgpu build` and run on the cpu backend with the real cargo: the skip
reasons are printed, `item.x()` and `item.y()` give each pixel its coordinates, and
RGPU_CPU_THREADS reaches the launch."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from tests.conftest import REPO, run_rgpu

HOST = """\
fn main() -> Result<(), rgpu::Error> {{
    let n = 1000u32;
    let x = vec![1.0f32; n as usize];
    let mut y = vec![0.5f32; n as usize];
{host}
    let (width, height) = (16u32, 4u32);
    let mut image = vec![0u32; (width * height) as usize];
    kernel::gradient(&device, (width, height), &mut image)?;
    let pixel = image[(2 * width + 3) as usize];
    println!("y0={{}} pixel(3,2)={{}} on {{}}", y[0], pixel, device.description());
    Ok(())
}}
"""


def rust_blocks() -> list[str]:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    return re.findall(r"```rust\n(.*?)```", readme, re.S)


def test_readmes_kernels_and_host_lines_build_and_run(tmp_path: Path) -> None:
    blocks = rust_blocks()
    kernels = [b for b in blocks if "#[rgpu::kernel]" in b and "embed_kernels" not in b]
    (host,) = [b for b in blocks if "Device::select()" in b]
    assert any("item: Item<2>" in k and "item.y()" in k for k in kernels)
    # The templates' filter: only backends built in but passed over are news.
    assert "for why in skipped.iter().filter(|s| s.backend.is_built())" in host
    run_rgpu("new", "readme", "--template", "minimal", "--dir", str(tmp_path))
    ws = tmp_path / "readme"
    lib = ws / "kernel" / "src" / "lib.rs"
    lib.write_text(lib.read_text(encoding="utf-8") + "\n" + "\n".join(kernels), encoding="utf-8")
    examples = ws / "examples"
    examples.mkdir(exist_ok=True)  # the template has two examples (split.rs, allreduce.rs)
    indented = "".join(f"    {line}\n" for line in host.splitlines())
    (examples / "readme.rs").write_text(HOST.format(host=indented), encoding="utf-8")
    built = json.loads(run_rgpu("build", "-C", str(ws), "--backend", "cpu", "--json").stdout)
    (program,) = {
        t["path"] for t in built["targets"] if t["name"] == "readme" and t["kind"] == "example"
    }
    env_threads = {"RGPU_CPU_THREADS": "3", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [str(program)], capture_output=True, text=True, env=env_threads, check=False
    )
    assert done.returncode == 0, done.stderr
    # y = 2 * 1.0 + 0.5; pixel (3, 2): x * 255 / 16 = 47, y << 8 = 512.
    assert done.stdout == "y0=2.5 pixel(3,2)=559 on CPU, 3 threads (rayon)\n", done.stdout
    # A cpu build has no GPU backend built in: nothing was passed over, nothing to say.
    assert "skipped" not in done.stderr, done.stderr
    # A `main` returning rgpu::Error prints the error's one line with its fix, not its fields.
    (examples / "fails.rs").write_text(FAILS, encoding="utf-8")
    built = json.loads(run_rgpu("build", "-C", str(ws), "--backend", "cpu", "--json").stdout)
    (failing,) = {
        t["path"] for t in built["targets"] if t["name"] == "fails" and t["kind"] == "example"
    }
    failed = subprocess.run([str(failing)], capture_output=True, text=True, check=False)
    assert failed.returncode == 1
    (line,) = failed.stderr.splitlines()
    assert line.startswith("Error: kernel `saxpy`") and "{" not in line, line


FAILS = """fn main() -> Result<(), rgpu::Error> {
    let device = rgpu::Device::cpu_with_threads(1)?;
    let x = vec![1.0f32; 3];
    let mut y = vec![0.0f32; 10];
    kernel::saxpy(&device, 10, 2.0, &x, &mut y)?; // x is shorter than n
    Ok(())
}
"""
