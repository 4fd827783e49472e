#!/usr/bin/env bash
# Linter and type checker, configured in pyproject.toml ([tool.ruff], [tool.mypy]).
#   pip install ruff mypy && tools/lint.sh
# tests/test_lint.py runs the same checks (ruff and mypy are in the "test" extra).
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
echo "== ruff check"
ruff check salsox tests benchmarks tools docs plugins || status=1
echo "== mypy (salsox/)"
mypy || status=1
exit $status
