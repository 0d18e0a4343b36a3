#!/usr/bin/env bash
# The whole test suite: sets up what the tests need, lints, then runs every tier.
# The gpu tier skips itself without an NVIDIA GPU; everything else must pass.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-test-env.sh
export PATH="$PWD/.venv/bin:$PATH"
echo "+ ruff check rgpu tests benchmarks scripts"
ruff check rgpu tests benchmarks scripts
echo "+ ruff format --check rgpu tests benchmarks scripts"
ruff format --check rgpu tests benchmarks scripts
echo "+ mypy"
mypy
echo "+ pytest"
exec python -m pytest tests "$@"
