"""Speed of reading text draws: salsox.read_draws against pandas.read_csv (its C parser), in
the same run, on the layouts the reader meets: plain numbers, R's write.csv (a quoted row
name on every line), and names quoted with commas and doubled quotes (the tokeniser's slow
path is then only the header).

    python benchmarks/bench_readers.py [--draws 10000] [--items 200]

Prints seconds and the ratio read_draws / read_csv (lower is better), and the CPU.
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile

import numpy as np

from _common import best_times, print_table


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def write_layouts(folder: str, draws: np.ndarray) -> dict:
    h, n = draws.shape
    body = [",".join(map(str, row)) for row in draws.tolist()]
    layouts = {
        "plain": [",".join(f"i{j}" for j in range(n))] + body,
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
    parser.add_argument("--draws", type=int, default=10000)
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    import pandas as pd

    import salsox

    draws = np.random.default_rng(0).integers(1, 9, size=(args.draws, args.items))
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for name, path in write_layouts(folder, draws).items():
            index_col = 0 if name.startswith("R ") else None
            (ours, d), (theirs, _) = best_times(
                [
                    lambda path=path: salsox.read_draws(path),
                    lambda path=path, index_col=index_col: pd.read_csv(path, index_col=index_col),
                ],
                args.repeat,
            )
            assert d.n_draws == args.draws and d.n_items == args.items
            rows.append([name, f"{ours:.3f}", f"{theirs:.3f}", f"{ours / theirs:.2f}x"])
    print(f"{args.draws} draws x {args.items} items; CPU: {cpu_name()}")
    print_table(["layout", "read_draws s", "pandas.read_csv s", "ratio"], rows)


if __name__ == "__main__":
    main()
