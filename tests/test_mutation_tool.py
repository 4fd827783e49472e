"""tools/mutation_check.py itself: every mutant still finds its text, a time-out is a verdict of
its own, and each mutant's tests exist (the planted bugs are run by the tool, not here)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def tool():
    spec = importlib.util.spec_from_file_location("mutation_check", ROOT / "tools" / "mutation_check.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["mutation_check"] = module  # dataclasses look the module up by name
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules["mutation_check"]
    return module


def test_every_mutant_finds_its_text_exactly_once(tool):
    for m in tool.MUTANTS:
        text = (ROOT / m.path).read_text(encoding="utf-8")
        assert text.count(m.old) == 1, f"mutant {m.name}: its text is found {text.count(m.old)} times in {m.path}"
        assert m.old != m.new


def test_every_mutant_names_tests_that_exist(tool):
    names = [m.name for m in tool.MUTANTS]
    assert len(set(names)) == len(names)
    for m in tool.MUTANTS:
        assert m.tests, m.name
        for t in m.tests:
            path, _, test = t.partition("::")
            source = (ROOT / path).read_text(encoding="utf-8")
            assert not test or f"def {test}(" in source, f"mutant {m.name}: no test {t}"
    # omARI's mutated score may be off the default SIMD path: the tests that force each path run too.
    omari = next(m for m in tool.MUTANTS if m.name == "omari-score-sign")
    assert "tests/test_engine_simd.py" in omari.tests


def test_a_time_out_is_neither_caught_nor_missed(tool):
    assert tool.verdict(1, timed_out=False) == "caught"
    assert tool.verdict(0, timed_out=False) == "MISSED"
    assert tool.verdict(1, timed_out=True) == "timeout"
    assert tool.verdict(-1, timed_out=True) == "timeout"
    # pytest-timeout's two ways of ending a test, and an ordinary failure that mentions timeouts.
    assert tool.hit_time_limit("E   Failed: Timeout >120.0s\nFAILED tests/test_x.py::test_y")
    assert tool.hit_time_limit("+++++++++++++++++++++ Timeout +++++++++++++++++++++\n~~ Stack of <x> ~~")
    assert not tool.hit_time_limit("FAILED tests/test_x.py::test_timeout_is_validated - ValueError: Timeout")


def test_single_tests_run_once_beside_their_file(tool):
    got = tool.selection(("tests/a.py", "tests/a.py::test_x", "tests/b.py::test_y", "tests/b.py::test_y"))
    assert got == ("tests/a.py", "tests/b.py::test_y")
