#!/usr/bin/env python3
"""Build the programs of a GPU timing run here, in named variants, and pack them for the GPU
machine (which has no cargo): the sort demo's device time per backend and variant
(BENCHMARKS.md: the naga path, Vulkan at CUDA speed). One fresh workspace per variant under
WORK/<variant>/, built for --backends and --arch; WORK/pack.tar.xz holds, per variant,
pack/<variant>/ with the program, examples/bench (the sort demo) and the test binaries asked
for, and WORK/<variant>.spv and WORK/<variant>-manifest.json stay beside it for inspection.

    python3 benchmarks/sort_variants_pack.py WORK VARIANT... [--rgpu RGPU]
        [--backends cuda,wgpu,ash] [--arch sm_90] [--cub]

A VARIANT is NAME or NAME:KEY=VALUE,KEY=VALUE...; its keys:
  rgpu=PATH          build it with this rgpu (default: --rgpu), e.g. main's before a change
  template=NAME      the template (`bitonic`, the sort demo, by default; `minimal`: SAXPY)
  kernels=fixture    embed the GLSL twin (tests/spirv_fixture.py) as the SPIR-V
  patch=FILE         apply FILE (patch -p1) to the new workspace before building
  env.VAR=VALUE      set VAR for its build (env.RGPU_SPIRV_OPT=0, env.RGPU_FLOAT_CONTRACTION=1)
  mad_chain=1        add the a*b+c chain kernel and its test (tests/saxpy.py)
  tests=A+B          the test binaries to pack (default: parity)
--cub also packs benchmarks/cub_radix_sort_cupy.py (the CUB baseline, run there).

The H100 runs of 2026-11-25 were packed by scripts this one replaces; the same packs are
  cur glsl:kernels=fixture                                       (run 6 .. 14)
  glsl:kernels=fixture raw:rgpu=OLD noopt:env.RGPU_SPIRV_OPT=0 opt
    saxpy:template=minimal,mad_chain=1,tests=parity+mad_chain
    fused:template=minimal,mad_chain=1,tests=mad_chain,env.RGPU_FLOAT_CONTRACTION=1 --cub
                                                                 (the first Vulkan-speed run)
  base:rgpu=MAIN v0:rgpu=MAIN,patch=P0 v1 v1i:patch=P1I v2:patch=P2   (run 4; P*: the
    patches in benchmarks/logs/2026-11-25/)
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
KEYS = ("rgpu", "template", "kernels", "patch", "mad_chain", "tests")
PROGRAM = {"bitonic": "sortdemo", "minimal": "saxpy"}


@dataclass
class Variant:
    name: str
    rgpu: str | None = None
    template: str = "bitonic"
    fixture: bool = False
    patch: Path | None = None
    env: dict[str, str] = field(default_factory=dict)
    mad_chain: bool = False
    tests: tuple[str, ...] = ("parity",)

    @property
    def program(self) -> str:
        return PROGRAM[self.template]


def parse_variant(text: str) -> Variant:
    """NAME or NAME:KEY=VALUE,...; a wrong key or value is an argparse error."""
    name, _, rest = text.partition(":")
    if not name or not name.replace("-", "").replace("_", "").isalnum():
        raise argparse.ArgumentTypeError(f"`{text}`: a variant needs a plain NAME first")
    variant = Variant(name)
    for item in filter(None, rest.split(",")):
        key, sep, value = item.partition("=")
        if not sep or not value:
            raise argparse.ArgumentTypeError(f"`{item}` in `{text}`: write KEY=VALUE")
        if key.startswith("env."):
            variant.env[key[4:]] = value
        elif key == "rgpu":
            variant.rgpu = value
        elif key == "template" and value in PROGRAM:
            variant.template = value
        elif key == "kernels" and value == "fixture":
            variant.fixture = True
        elif key == "patch":
            variant.patch = Path(value).resolve()
            if not variant.patch.is_file():
                raise argparse.ArgumentTypeError(f"`{item}`: no such file")
        elif key == "mad_chain" and value == "1":
            variant.mad_chain = True
        elif key == "tests":
            variant.tests = tuple(filter(None, value.split("+")))
        else:
            raise argparse.ArgumentTypeError(
                f"`{item}` in `{text}`: keys are {', '.join(KEYS)} and env.VAR (see --help)"
            )
    return variant


def sh(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> None:
    print("+", " ".join(argv), f"(in {cwd})", flush=True)
    subprocess.run(argv, cwd=cwd, env=env, check=True)


def newest_test(target: Path, name: str) -> Path:
    """cargo's test binary `name-<hash>` most recently built."""
    found = [
        p for p in (target / "release" / "deps").glob(f"{name}-*")
        if p.suffix != ".d" and os.access(p, os.X_OK)
    ]  # fmt: skip
    if not found:
        sys.exit(f"no test binary {name} under {target}/release/deps")
    return max(found, key=lambda p: p.stat().st_mtime)


def build(variant: Variant, work: Path, args: argparse.Namespace, fixture: Path | None) -> None:
    rgpu = variant.rgpu or args.rgpu
    home = work / variant.name
    home.mkdir()
    sh([rgpu, "new", variant.program, "--template", variant.template], home)
    ws = home / variant.program
    if variant.patch is not None:
        sh(["patch", "-p1", "-i", str(variant.patch)], ws)
    if variant.mad_chain:
        sys.path.insert(0, str(REPO))
        from tests.saxpy import add_mad_chain

        add_mad_chain(ws)
    argv = [rgpu, "build", "--backend", args.backends, "--arch", args.arch, "--yes"]
    if variant.fixture:
        assert fixture is not None
        argv += ["--kernel-artifact", str(fixture)]
    # The programs are taken from the workspace's own target/ (not a shared CARGO_TARGET_DIR).
    env = {k: v for k, v in os.environ.items() if k != "CARGO_TARGET_DIR"}
    sh(argv, ws, {**env, **variant.env})
    out = work / "pack" / variant.name
    out.mkdir(parents=True)
    target = ws / "target"
    shutil.copy2(target / "release" / variant.program, out / variant.program)
    bench = target / "release" / "examples" / "bench"
    if bench.is_file():
        shutil.copy2(bench, out / "bench")
    for test in variant.tests:
        shutil.copy2(newest_test(target, test), out / test)
    kernels = ws / "target" / "rgpu" / "kernels"
    for spv in kernels.glob("*.spv"):
        shutil.copy2(spv, work / f"{variant.name}.spv")
    shutil.copy2(kernels / "manifest.json", work / f"{variant.name}-manifest.json")
    for binary in out.iterdir():
        subprocess.run(["strip", str(binary)], check=False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n\n", 2)[2],
    )
    parser.add_argument("work", type=Path, metavar="WORK", help="a directory that does not exist")
    parser.add_argument("variants", type=parse_variant, nargs="+", metavar="VARIANT")
    parser.add_argument("--rgpu", default="rgpu", help="the rgpu that builds (default: rgpu)")
    parser.add_argument("--backends", default="cuda,wgpu,ash", help="default: cuda,wgpu,ash")
    parser.add_argument("--arch", default="sm_90", help="the CUDA arch (default: sm_90)")
    parser.add_argument("--cub", action="store_true", help="pack cub_radix_sort_cupy.py too")
    args = parser.parse_args(argv)
    names = [v.name for v in args.variants]
    if len(set(names)) != len(names):
        parser.error(f"variant names repeat: {', '.join(names)}")
    work = args.work.resolve()
    if work.exists():
        parser.error(f"{work} exists: give a directory that does not exist")
    work.mkdir(parents=True)
    fixture = None
    if any(v.fixture for v in args.variants):
        sh([sys.executable, str(REPO / "tests" / "spirv_fixture.py"), str(work / "fixture")], work)
        fixture = work / "fixture" / "all.fixture.spv"
    for variant in args.variants:
        build(variant, work, args, fixture)
    if args.cub:
        shutil.copy2(HERE / "cub_radix_sort_cupy.py", work / "pack")
    with tarfile.open(work / "pack.tar.xz", "w:xz") as tar:
        for entry in sorted((work / "pack").iterdir()):
            tar.add(entry, arcname=entry.name)
    print(f"{work / 'pack.tar.xz'}: {(work / 'pack.tar.xz').stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
