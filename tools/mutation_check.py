#!/usr/bin/env python3
"""Plant known engine bugs one at a time and check that the test suite catches each.

    python tools/mutation_check.py                # every mutant
    python tools/mutation_check.py ties sweep     # mutants whose name contains a word given
    python tools/mutation_check.py --list

Each mutant is an exact search/replace on one source file (the script stops if the text is
not found exactly once, so a refactoring cannot silently turn a mutant into a no-op). The
mutated tree is built and installed into a scratch virtualenv (build/mutant-venv, build dir
build/mutant; unoptimised by default, -O0 without assertions, as each mutant recompiles the
engine: --opt O2 for a build closer to a release), the file is restored at
once (always, also on Ctrl-C), and the mutant's tests run against the installed copy with
``-x`` and a per-test timeout. All of this happens in a snapshot of the working tree
(build/mutant-src, the files git tracks or would track), so that the developer's checkout
and its editable install never see a mutant. A mutant is caught when pytest fails or crashes;
a test run that hits a time limit (a test past its per-test timeout, or the whole run past
RUN_TIMEOUT) is a third verdict, "timeout": the mutant may have made the search cycle, or the
machine may just have been slow, so it counts as neither caught nor missed. A mutant's tests may be
single tests (``file::test``): the test written to catch it, shown to do so on its own.
A baseline build and test run without any mutant comes first: the tests must pass there.

The scratch virtualenv shares the packages of the interpreter running this script (a
virtualenv's too, through a .pth file, read-only: nothing is installed there).

Prints a table: mutant, tests run, caught/missed/timeout, seconds. Exit status 0 only when every
mutant is caught. Not part of CI (each C++ mutant is a rebuild: minutes on two cores).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import subprocess
import sys
import sysconfig
import time
from pathlib import Path
from typing import List, Optional, Tuple

ROOT = Path(__file__).resolve().parents[1]
# Where the snapshot, the scratch venv and the build live (--workdir moves them, so that two
# checks can run side by side).
SRC = ROOT / "build" / "mutant-src"
VENV = ROOT / "build" / "mutant-venv"
BUILD_DIR = ROOT / "build" / "mutant"


def set_workdir(workdir: Path) -> None:
    global SRC, VENV, BUILD_DIR
    SRC, VENV, BUILD_DIR = workdir / "mutant-src", workdir / "mutant-venv", workdir / "mutant"
PER_TEST_TIMEOUT = 120  # seconds: a mutant that makes the search cycle ends as "timeout"
RUN_TIMEOUT = 900  # seconds for one mutant's whole test run

SEARCH = "cpp/include/salsox/search.hpp"
TABLE = "cpp/include/salsox/count_table.hpp"
CELL_SUM_SCORER = "cpp/include/salsox/cell_sum_scorer.hpp"
OMARI_SCORER = "cpp/include/salsox/omari_scorer.hpp"
ENTROPY_SCORER = "cpp/include/salsox/entropy_scorer.hpp"
TABLE_SCORER = "cpp/include/salsox/table_scorer.hpp"
PAIRWISE = "cpp/include/salsox/pairwise_state.hpp"
CHIPS = "cpp/include/salsox/chips.hpp"
ENGINE_TESTS = ["tests/test_engine_checks.py", "tests/test_search.py", "tests/test_threads.py"]


@dataclasses.dataclass(frozen=True)
class Mutant:
    name: str
    what: str
    path: str
    old: str
    new: str
    tests: Tuple[str, ...] = tuple(ENGINE_TESTS)


MUTANTS: List[Mutant] = [
    Mutant(
        "zealous-one-short",
        "a round of zealous updates tries one cluster too few",
        SEARCH,
        "t < q0 && attempts < opts_.max_zealous",
        "t < q0 && attempts + 1 < opts_.max_zealous",
    ),
    Mutant(
        "binder-score-sign",
        "Binder's allocation score adds the cell term instead of subtracting it",
        CELL_SUM_SCORER,
        "out[k] = loss_.b * H * static_cast<double>(sz(k)) -\n",
        "out[k] = loss_.b * H * static_cast<double>(sz(k)) +\n",
    ),
    Mutant(
        "omari-score-sign",
        "omARI's allocation score uses 1 + ARI instead of 1 - ARI",
        OMARI_SCORER,
        "return (1.0 - zero) * (1.0 - (X - expected) / (denom + zero));",
        "return (1.0 - zero) * (1.0 + (X - expected) / (denom + zero));",
        # The default SIMD path may not run this code: test_engine_simd.py forces every path.
        ("tests/test_engine_simd.py", *ENGINE_TESTS),
    ),
    Mutant(
        "lanes-own-cell",
        "the AVX2 lanes read the cell of the item's own slot at its count, not one lower",
        TABLE_SCORER,
        "_mm_and_si128(_mm_cmpeq_epi32(k, _mm_set1_epi32(dec)), _mm_set1_epi32(1));",
        "_mm_and_si128(_mm_cmpeq_epi32(k, _mm_set1_epi32(dec)), _mm_set1_epi32(0));",
        ("tests/test_engine_simd.py::test_every_lane_count_and_count_width_gives_the_portable_runs",),
    ),
    Mutant(
        "nvi-widest-lanes",
        "NVI's AVX2 lanes drop the last vector's sums at V = 8 (29 to 32 slots)",
        ENTROPY_SCORER,
        "for (int v = 0; v < V; ++v) _mm256_storeu_pd(acc + 4 * v, sum[v]);\n  acc[4 * V] = s_const;",
        "for (int v = 0; v < V - (V == 8); ++v) _mm256_storeu_pd(acc + 4 * v, sum[v]);\n  acc[4 * V] = s_const;",
        ("tests/test_engine_simd.py::test_every_lane_count_and_count_width_gives_the_portable_runs",),
    ),
    Mutant(
        "omari-second-lane-group",
        "omARI's AVX2 lanes past 32 slots store their sums over the first 32",
        OMARI_SCORER,
        "for (int v = 0; v < V; ++v) _mm256_storeu_pd(acc + 4 * (first + v), sum[v]);",
        "for (int v = 0; v < V; ++v) _mm256_storeu_pd(acc + 4 * v, sum[v]);",
        ("tests/test_engine_simd.py::test_every_lane_count_and_count_width_gives_the_portable_runs",),
    ),
    Mutant(
        "binder-four-draws",
        "Binder's count-table four-draw step (more than eight slots) adds its third row twice, not the fourth",
        CELL_SUM_SCORER,
        "acc[k] += (std::int64_t{r0[k]} + r1[k]) + (std::int64_t{r2[k]} + r3[k]);",
        "acc[k] += (std::int64_t{r0[k]} + r1[k]) + (std::int64_t{r2[k]} + r2[k]);",
        # Binder's searches in the other tests run on co-clustering counts or on at most 8 slots.
        ("tests/test_engine_simd.py::test_binder_count_table_paths_give_the_same_runs_as_one_draw_at_a_time",),
    ),
    Mutant(
        "binder-register-sums",
        "Binder's count-table sums over at most eight slots (in registers) drop the last draw of each block",
        CELL_SUM_SCORER,
        "      for (; h >= lo; --h) {\n        const Count* row = cnt + (base[h] + lab[h]) * stride;\n"
        "        for (std::int32_t k = 0; k < kBinderLanes; ++k) a[k] += row[k];",
        "      for (; h > lo; --h) {\n        const Count* row = cnt + (base[h] + lab[h]) * stride;\n"
        "        for (std::int32_t k = 0; k < kBinderLanes; ++k) a[k] += row[k];",
        ("tests/test_engine_simd.py::test_binder_count_table_paths_give_the_same_runs_as_one_draw_at_a_time",),
    ),
    Mutant(
        "sweep-skips-last",
        "a sweetening scan skips the last item of its order",
        SEARCH,
        "for (std::int64_t i : order_)\n        if (!is_fixed(i)) changed |= reallocate(i);",
        "for (std::size_t p = 0; p + 1 < order_.size(); ++p)\n"
        "        if (!is_fixed(order_[p])) changed |= reallocate(order_[p]);",
    ),
    Mutant(
        "no-new-cluster",
        "an item never opens a new cluster (unless there is none)",
        SEARCH,
        "if (occupied < st_.max_clusters() && (best < 0 || scores_[q] < best_score)) {",
        "if (occupied < st_.max_clusters() && best < 0) {",
    ),
    Mutant(
        "cap-off-by-one",
        "the cluster cap allows one cluster more than max_clusters",
        SEARCH,
        "if (occupied < st_.max_clusters() && (best < 0 || scores_[q] < best_score)) {",
        "if (occupied <= st_.max_clusters() && (best < 0 || scores_[q] < best_score)) {",
    ),
    Mutant(
        "moves-on-ties",
        "an item leaves its cluster for an equally good one",
        SEARCH,
        "if (kept <= best_score) best = keep;",
        "if (kept < best_score) best = keep;",
    ),
    Mutant(
        "best-run-tie-break",
        "among runs of equal loss the first to finish wins, not the lowest run index",
        SEARCH,
        "(res.loss == out.best_loss && res.run < out.best_run);",
        "false;",
        ("tests/test_engine_checks.py::test_best_run_is_the_lowest_run_even_when_a_later_run_finishes_first",),
    ),
    Mutant(
        "zealous-accepts-worse",
        "a zealous update is kept when it makes the partition worse (and undone when better)",
        SEARCH,
        "if (current < after) {",
        "if (after < current) {",
    ),
    Mutant(
        "dask-wrong-streams",
        "every Dask batch replays the random streams of runs 0, 1, ... instead of its own",
        "salsox/search/distributed.py",
        'opts["first_run"] = start',
        'opts["first_run"] = 0',
        ("tests/test_distributed.py",),
    ),
    Mutant(
        "scan-ignores-own-slot",
        "a scan scores an allocated item as if it were not in its own cluster already",
        TABLE,
        "void score_move(std::int64_t i, double* out) { scorer_->score(i, label(i), out); }",
        "void score_move(std::int64_t i, double* out) { scorer_->score(i, -1, out); }",
    ),
    Mutant(
        "omari-approx-new-cluster",
        "omARI.approx scores a new cluster 0, as Binder's PSM score does, instead of 1 - PEAR",
        PAIRWISE,
        "out[q_] = CountLoss::omari(m1, pairs, est_pairs_, within);",
        "out[q_] = 0.0;",
        ("tests/test_engine_checks.py::test_every_psm_estimate_is_a_local_minimum",),
    ),
    Mutant(
        "chips-canonical-stale",
        "CHIPS' canonical comparison leaves the labels of the first differing position mapped",
        CHIPS,
        "for (std::size_t k = 0; k <= i && k < a.size(); ++k) {",
        "for (std::size_t k = 0; k < i && k < a.size(); ++k) {",
        ("tests/test_chips.py::test_path_ties_over_many_comparisons_go_to_the_smallest_canonical_labels",),
    ),
    Mutant(
        "chips-ties-at-bound",
        "CHIPS' pruned search stops at an item whose bound equals the best count, losing tied items",
        CHIPS,
        "while (!heap_.empty() && heap_.front().first >= best) {",
        "while (!heap_.empty() && heap_.front().first > best) {",
        ("tests/test_chips.py::test_every_item_of_a_tie_can_be_chosen",),
    ),
    Mutant(
        "countsum-min-as-max",
        "the count-sum rewrites take min(x, c) as never negative, like max(x, 0), and split sqrt(x * y)",
        "salsox/losses/countsum_forms.py",
        'elif op in ("add", "mul", "min"):\n            nonneg[v] = nonneg[a] and nonneg[b]\n'
        '        elif op == "max":',
        'elif op in ("add", "mul"):\n            nonneg[v] = nonneg[a] and nonneg[b]\n'
        '        elif op in ("max", "min"):',
        ("tests/test_countsum_roots.py",),
    ),
    Mutant(
        "countsum-fused-sign",
        "the count-sum node loops run the fused a - p / q as a + p / q",
        "cpp/include/salsox/countsum_block_loops.hpp",
        "for (std::int64_t e = 0; e < len; ++e) out[e] = a.p[e] - p.p[e] / q.p[e];",
        "for (std::int64_t e = 0; e < len; ++e) out[e] = a.p[e] + p.p[e] / q.p[e];",
        ("tests/test_countsum_dense.py", "tests/test_countsum.py"),
    ),
    Mutant(
        "countsum-accumulate-side",
        "the count-sum scores accumulate x op s where the result is s op x (1 - ratio as ratio - 1)",
        "cpp/include/salsox/countsum_block_loops.hpp",
        "if (scalar_left)",
        "if (!scalar_left)",
        ("tests/test_countsum_dense.py", "tests/test_countsum.py"),
    ),
    Mutant(
        "countsum-gather-rows-old",
        "the AVX2 gather of a pair-count cell sum, in rows of fixed width, leaves the moved item in its own slot",
        "cpp/include/salsox/countsum_dense.hpp",
        "_mm256_add_pd(vb, counts4_pd(row + 4 * v)));\n    if (old >= 0) o[old] = base + dc[row[old] - 1];",
        "_mm256_add_pd(vb, counts4_pd(row + 4 * v)));",
        ("tests/test_countsum_dense.py",),
    ),
    Mutant(
        "omp-num-threads-under-quota",
        "OMP_NUM_THREADS is ignored when a cgroup CPU quota exists (issue 49)",
        "salsox/_cpus.py",
        "    if omp is not None:\n        default = omp",
        "    if omp is not None and quota is None:\n        default = omp",
        ("tests/test_cpus.py::test_omp_num_threads_wins_over_a_cgroup_quota",),
    ),
    Mutant(
        "wasabi-topvi-memory",
        "WASABI's memory estimate counts topvi's n x n work as 16 n^2 bytes, not 24 n^2 (issue 49)",
        "salsox/uncertainty/wasabi/memory.py",
        "(24 * n * n if topvi else 0)",
        "(16 * n * n if topvi else 0)",
        ("tests/test_memory_limit.py::test_wasabi_topvi_estimate_covers_what_topvi_allocates",),
    ),
]


class Restorer:
    """Applies one mutant and always puts the original text back."""

    def __init__(self, mutant: Mutant) -> None:
        self.path = SRC / mutant.path
        self.original = self.path.read_bytes()
        text = self.original.decode("utf-8")
        count = text.count(mutant.old)
        if count != 1:
            raise SystemExit(f"mutant {mutant.name}: pattern found {count} times in {mutant.path}, expected once:\n"
                             f"    {mutant.old!r}")
        self.mutated = text.replace(mutant.old, mutant.new).encode("utf-8")

    def __enter__(self) -> "Restorer":
        self.path.write_bytes(self.mutated)
        return self

    def restore(self) -> None:
        if self.path.read_bytes() != self.original:
            self.path.write_bytes(self.original)

    def __exit__(self, *exc: object) -> None:
        self.restore()


def snapshot() -> None:
    """Copies the working tree's files (tracked, or untracked but not ignored) to SRC."""
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                           check=True, capture_output=True).stdout.decode().split("\0")
    for old in sorted(SRC.rglob("*"), reverse=True) if SRC.exists() else []:
        if old.is_file() or old.is_symlink():
            old.unlink()
        elif old.is_dir():
            old.rmdir()
    for name in filter(None, files):
        src = ROOT / name
        if src.is_file():
            dst = SRC / name
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes(src.read_bytes())
    # The tests read shared/ beside the repository (tests/conftest.py): beside the snapshot too.
    shared, beside = ROOT.parent / "shared", SRC.parent / "shared"
    if shared.is_dir() and not beside.exists():
        beside.symlink_to(shared, target_is_directory=True)


def venv_python() -> Path:
    return VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def ensure_venv() -> None:
    """A scratch virtualenv sharing the base interpreter's packages (numpy, pytest, ...)."""
    if venv_python().exists():
        return
    base = getattr(sys, "_base_executable", sys.executable)
    print(f"== creating {VENV}", flush=True)
    subprocess.run([base, "-m", "venv", "--system-site-packages", str(VENV)], check=True)
    if sys.prefix != sys.base_prefix:
        # Run from a virtualenv: its packages (pytest-timeout, ...) too, after the scratch venv's
        # own, so that the salsox installed there wins. Only read: nothing is installed there.
        site_dir = subprocess.run([str(venv_python()), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                                  check=True, capture_output=True, text=True).stdout.strip()
        parent = dict.fromkeys([sysconfig.get_path("purelib"), sysconfig.get_path("platlib")])
        (Path(site_dir) / "_mutation_check_parent.pth").write_text("".join(f"{p}\n" for p in parent))
    plugins = [str(SRC / "plugins" / p) for p in ("salsox-example-losses", "salsox-hclust-init")]
    subprocess.run([str(venv_python()), "-m", "pip", "install", "-q", "--no-build-isolation", "--no-deps", *plugins],
                   check=True, cwd=SRC)


def build(opt: str) -> Optional[str]:
    """Builds and installs the snapshot into the scratch venv; returns an error or None."""
    # The Debug configuration with our own flags: no -O3 (CMakeLists adds it for Release only),
    # no link-time optimisation (pybind11 adds it for Release only), NDEBUG as in a release.
    cmd = [str(venv_python()), "-m", "pip", "install", "-q", "--no-build-isolation", "--no-deps",
           "--force-reinstall", ".", f"-Cbuild-dir={BUILD_DIR}", "-Ccmake.build-type=Debug",
           f"-Ccmake.define.CMAKE_CXX_FLAGS_DEBUG=-{opt} -DNDEBUG"]
    proc = subprocess.run(cmd, cwd=SRC, capture_output=True, text=True)
    if proc.returncode != 0:
        return (proc.stdout + proc.stderr)[-3000:]
    return None


def run_tests(tests: Tuple[str, ...]) -> Tuple[int, int, str, bool]:
    """(return code, tests run, first failure, whether a time limit was hit) of pytest -x over
    ``tests`` in the scratch venv."""
    # -P: the source tree's salsox/ (without a built extension) must not shadow the install.
    cmd = [str(venv_python()), "-P", "-m", "pytest", *tests, "-x", "-q", "-p", "no:cacheprovider",
           f"--timeout={PER_TEST_TIMEOUT}", "-o", "addopts="]
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    try:
        proc = subprocess.run(cmd, cwd=SRC, capture_output=True, text=True, timeout=RUN_TIMEOUT, env=env)
    except subprocess.TimeoutExpired:
        return -1, 0, f"whole run timed out after {RUN_TIMEOUT} s", True
    out = proc.stdout + proc.stderr
    counts = {k: int(v) for v, k in re.findall(r"(\d+) (passed|failed|errors?)", out)}
    ran = sum(counts.values())
    first = next((line[7:] for line in out.splitlines() if line.startswith("FAILED ") or line.startswith("ERROR ")),
                 "")
    if proc.returncode not in (0, 1):
        first = first or f"pytest exit status {proc.returncode}: " + " | ".join(out.strip().splitlines()[-3:])
    timed_out = hit_time_limit(out)
    if timed_out and not first:
        first = "per-test timeout"
    return proc.returncode, ran, first, timed_out


def hit_time_limit(out: str) -> bool:
    """Whether pytest's output shows a per-test timeout: pytest-timeout fails the test with
    "Failed: Timeout >120.0s" (signal method) or dumps the stacks between "+++ Timeout +++"
    lines and ends the process (thread method)."""
    return re.search(r"Failed: Timeout >|\+{5,} Timeout \+{5,}", out) is not None


def verdict(rc: int, timed_out: bool) -> str:
    """caught (the tests failed or crashed), timeout (a time limit ended them) or MISSED."""
    if timed_out:
        return "timeout"
    return "caught" if rc != 0 else "MISSED"


def selection(tests: Tuple[str, ...]) -> Tuple[str, ...]:
    """``tests`` without the single tests (``file::test``) whose whole file is there too."""
    files = {t for t in tests if "::" not in t}
    return tuple(t for t in dict.fromkeys(tests) if t.split("::")[0] not in files or "::" not in t)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", help="run only mutants whose name contains one of these")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    parser.add_argument("--no-baseline", action="store_true", help="skip the unmutated build and test run")
    parser.add_argument("--opt", default="O0", choices=["O0", "O1", "O2", "O3"], help="optimisation level (default O0)")
    parser.add_argument("--workdir", type=Path, default=ROOT / "build", help="for the snapshot, venv and build")
    args = parser.parse_args(argv)
    set_workdir(args.workdir.resolve())
    chosen = [m for m in MUTANTS if not args.names or any(w in m.name for w in args.names)]
    if args.list:
        for m in MUTANTS:
            print(f"{m.name:24} {m.path}: {m.what}")
        return 0
    if not chosen:
        raise SystemExit(f"no mutant matches {args.names}")
    snapshot()
    for m in chosen:  # fail before building anything if a pattern went stale
        Restorer(m)
    ensure_venv()
    if not args.no_baseline:
        print("== baseline build", flush=True)
        err = build(args.opt)
        if err:
            print(err)
            raise SystemExit("the unmutated tree does not build")
        tests = selection(tuple(sorted({t for m in chosen for t in m.tests})))
        t0 = time.perf_counter()
        rc, ran, first, _ = run_tests(tests)
        print(f"== baseline: {ran} tests, exit {rc}, {time.perf_counter() - t0:.0f} s", flush=True)
        if rc != 0:
            raise SystemExit(f"the tests fail without any mutant: {first}")
    rows = []
    for m in chosen:
        print(f"== {m.name}: {m.what}", flush=True)
        t0 = time.perf_counter()
        with Restorer(m):
            err = build(args.opt)
        built = time.perf_counter() - t0
        if err:
            print(err)
            rows.append((m.name, 0, "BUILD FAILED", built, 0.0, ""))
            continue
        t1 = time.perf_counter()
        rc, ran, first, timed_out = run_tests(m.tests)
        result = verdict(rc, timed_out)
        rows.append((m.name, ran, result, built, time.perf_counter() - t1, first))
        print(f"   {result}: {ran} tests, build {built:.0f} s, tests {time.perf_counter() - t1:.0f} s  {first}",
              flush=True)
    # The scratch venv keeps the last mutant's build: a next run starts with a baseline build.
    print()
    print(f"| {'mutant':24} | tests run | result       | build s | tests s | first failing test |")
    print(f"|{'-' * 26}|-----------|--------------|---------|---------|--------------------|")
    for name, ran, result, built, tested, first in rows:
        print(f"| {name:24} | {ran:9} | {result:12} | {built:7.0f} | {tested:7.1f} | {first[:90]} |")
    missed = [r[0] for r in rows if r[2] != "caught"]
    tail = "".join(f"; {what}: {', '.join(r[0] for r in rows if r[2] == what)}"
                   for what in ("MISSED", "timeout", "BUILD FAILED") if any(r[2] == what for r in rows))
    print(f"\n{len(rows) - len(missed)} of {len(rows)} mutants caught{tail}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
