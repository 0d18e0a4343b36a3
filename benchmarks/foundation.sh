#!/usr/bin/env bash
# Issue 2 benchmark: `rgpu build --backend cpu` with nothing to do vs the plain `cargo build`
# it wraps, and `rgpu new` wall time. Same machine, same run. Needs hyperfine
# (apt-get install hyperfine) and rgpu on PATH.
set -euo pipefail
# Measure rgpu as users run it: with Python's bytecode cache (a `pip install .` compiles it;
# PYTHONDONTWRITEBYTECODE=1 would make every run recompile rgpu from source).
unset PYTHONDONTWRITEBYTECODE
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export CARGO_TARGET_DIR="$work/target"
cd "$work"
rgpu new sortdemo >/dev/null 2>&1
cd sortdemo
rgpu build --backend cpu >/dev/null 2>&1   # warm: everything compiled once
hyperfine --warmup 3 --runs 30 --export-markdown "$work/build.md" \
  -n 'cargo build (no-op)' 'cargo build --release -p sortdemo --bin sortdemo --features cpu' \
  -n 'rgpu build --backend cpu (no-op)' 'rgpu build --backend cpu'
cd "$work"
hyperfine --warmup 2 --runs 20 --export-markdown "$work/new.md" \
  --prepare 'rm -rf fresh' -n 'rgpu new' 'rgpu new fresh'
cat "$work/build.md" "$work/new.md"
