"""Speed of reading text draws: salsox.read_draws against np.loadtxt, measured in the same run,
on a CSV of about 50 MB in the layouts the reader meets: a header of names, R's write.csv (a
quoted row name on every line), and names quoted with commas and doubled quotes.

    python benchmarks/bench_readers.py [--megabytes 50] [--items 200] [--repeat 3] [--python-parser]

Issue 49 asks that a 50 MB file read within 1.5x of np.loadtxt. For each layout the table
prints the fastest of ``--repeat`` calls (the functions taking turns, so that a change in the
machine's load touches all of them alike) of

* ``read_draws``: the file to a :class:`salsox.Draws` (the labels parsed, checked, relabelled
  and compacted by the engine: what a user waits for);
* ``read_matrix_named``: the file to the matrix of labels and the names (parsing alone);
* ``np.loadtxt(path, delimiter=",", skiprows=1, dtype=np.int64)`` (``usecols`` skipping R's row
  names): NumPy's C reader of integers, the reference (its float64 default is several times
  slower: the reference is the faster one);
* ``pandas.read_csv`` (its C parser, with its defaults), for comparison;

and the ratios of the first two to np.loadtxt in wall-clock time, and of read_draws in CPU
time (all threads: large files are read by the default number of threads, as salsox's other
calls use). ``--python-parser`` adds a row for the Python parser that reads the files when
pandas is absent (tens of seconds on 50 MB). The CPU, the date and the load average before and
after are printed too: on a shared machine the ratios, measured in the same run, are what to
compare.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import tempfile
import time
from typing import Callable, Dict, List, Tuple

import numpy as np

from _common import print_table


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def load() -> str:
    try:
        return " ".join(f"{v:.1f}" for v in os.getloadavg())
    except OSError:
        return "?"


def best_wall_and_cpu(fns: List[Callable[[], object]], repeat: int) -> List[Tuple[float, float, object]]:
    """Fastest wall-clock and process-CPU seconds of ``repeat`` calls of each function, the
    functions taking turns (a, b, a, b, ...): a change in the machine's load then touches all
    of them alike. CPU seconds count every thread of the process."""
    wall = [float("inf")] * len(fns)
    cpu = [float("inf")] * len(fns)
    results: List[object] = [None] * len(fns)
    for _ in range(repeat):
        for j, fn in enumerate(fns):
            results[j] = None  # the previous result freed before the next call
            c0, t0 = time.process_time(), time.perf_counter()
            results[j] = fn()
            wall[j] = min(wall[j], time.perf_counter() - t0)
            cpu[j] = min(cpu[j], time.process_time() - c0)
    return list(zip(wall, cpu, results))


def write_layouts(folder: str, draws: np.ndarray) -> Dict[str, str]:
    """The draws written in each layout; the file names by layout."""
    h, n = draws.shape
    body = [",".join(map(str, row)) for row in draws.tolist()]
    layouts = {
        "header of names": [",".join(f"i{j}" for j in range(n))] + body,
        "R write.csv": ['"",' + ",".join(f'"V{j + 1}"' for j in range(n))]
        + [f'"{r + 1}",{line}' for r, line in enumerate(body)],
        'quoted names ("a,b")': [",".join(f'"item {j}, ""x"""' for j in range(n))] + body,
    }
    paths = {}
    for name, lines in layouts.items():
        path = os.path.join(folder, f"{len(paths)}.csv")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        paths[name] = path
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=50.0, help="size of each file (default 50)")
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--python-parser", action="store_true", help="also time the parser used without pandas")
    args = parser.parse_args()

    import pandas as pd

    import salsox
    from salsox._cpus import default_threads
    from salsox.io import readers

    n = args.items
    # Labels 1..8 (one digit and a comma each): 2 bytes a label.
    h = max(1, int(args.megabytes * 1e6 / (2 * n)))
    draws = np.random.default_rng(0).integers(1, 9, size=(h, n))
    load_before = load()
    rows: List[List[object]] = []
    with tempfile.TemporaryDirectory() as folder:
        for name, path in write_layouts(folder, draws).items():
            row_names = name.startswith("R ")
            usecols = range(1, n + 1) if row_names else None
            calls: List[Callable[[], object]] = [
                lambda path=path: salsox.read_draws(path),
                lambda path=path: readers.read_matrix_named(path),
                lambda path=path, usecols=usecols: np.loadtxt(
                    path, delimiter=",", skiprows=1, dtype=np.int64, usecols=usecols
                ),
                lambda path=path, row_names=row_names: pd.read_csv(path, index_col=0 if row_names else None),
            ]
            timed = best_wall_and_cpu(calls, args.repeat)
            (ours, ours_cpu, d), (parse, _, (matrix, _)), (reference, reference_cpu, expected), (theirs, _, _) = timed
            assert isinstance(d, salsox.Draws) and (d.n_draws, d.n_items) == (h, n)
            assert np.array_equal(matrix, expected) and np.array_equal(expected, draws)
            mb = os.path.getsize(path) / 1e6
            rows.append(
                [name, f"{mb:.1f}", f"{ours:.3f}", f"{parse:.3f}", f"{reference:.3f}", f"{theirs:.3f}",
                 f"{ours / reference:.2f}x", f"{parse / reference:.2f}x", f"{ours_cpu / reference_cpu:.2f}x"]
            )
            if args.python_parser and name.startswith("header"):
                saved = readers._FAST_BYTES
                readers._FAST_BYTES = 1 << 62  # as without pandas
                try:
                    (slow, _, _), (reference, _, _) = best_wall_and_cpu(calls[1:3], 1)
                finally:
                    readers._FAST_BYTES = saved
                rows.append([name + ", Python parser", f"{mb:.1f}", "", f"{slow:.3f}", f"{reference:.3f}", "", "",
                             f"{slow / reference:.2f}x", ""])
    now = datetime.datetime.now(datetime.timezone.utc)
    print(f"{h} draws x {n} items; CPU: {cpu_name()}; {now:%Y-%m-%d %H:%M} UTC")
    print(f"load average before: {load_before}; after: {load()}; pandas {pd.__version__}, numpy {np.__version__}")
    print(f"threads reading a file: {default_threads()} (salsox's default; OMP_NUM_THREADS sets it)")
    print_table(
        ["layout", "MB", "read_draws s", "read_matrix s", "np.loadtxt s", "pandas s", "read_draws / loadtxt",
         "read_matrix / loadtxt", "CPU: read_draws / loadtxt"],
        rows,
    )


if __name__ == "__main__":
    main()
