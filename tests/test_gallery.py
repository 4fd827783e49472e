"""docs/gallery.md matches docs/make_figures.py and the pictures it draws."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest

import salsox
from salsox import plots

DOCS = Path(__file__).resolve().parents[1] / "docs"


def _make_figures():
    pytest.importorskip("matplotlib")
    spec = importlib.util.spec_from_file_location("make_figures", DOCS / "make_figures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_gallery_picture_is_drawn_and_shown():
    figures = _make_figures()
    text = (DOCS / "gallery.md").read_text(encoding="utf-8")
    shown = set(re.findall(r"\(images/(gallery_\w+\.png)\)", text))
    drawn = {f"gallery_{case}_{name}.png" for case in ("example", "many") for name in figures.GALLERY}
    assert shown == drawn
    assert all((DOCS / "images" / name).is_file() for name in drawn)


def test_gallery_counts_the_items_it_draws():
    figures = _make_figures()
    data, draws = figures.many_clusters()
    n = data.shape[0]
    assert draws.shape[1] == n
    text = (DOCS / "gallery.md").read_text(encoding="utf-8")
    assert f"**many**: {n} points" in text and "140 points" not in text
    est = salsox.salso(draws, "VI", n_runs=16, seed=0)
    assert f"finds\n  {est.n_clusters} clusters" in text or f"finds {est.n_clusters} clusters" in text
    sizes = np.sort(est.sizes)
    assert sizes[:3].tolist() == [1, 1, 2]  # "a pair and two singletons"
    assert "never two shades of one hue" not in text  # false beyond nine clusters (tab20's light halves)


def test_heatmap_numbers_rows_and_columns_alike():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rng = np.random.default_rng(0)
    # 40 clusters of very different sizes: some numbers must be left out, on both axes alike.
    sizes = rng.integers(1, 30, size=40)
    truth = np.repeat(np.arange(40), sizes)
    draws = np.array([np.where(rng.random(truth.shape[0]) < 0.05, 0, truth) for _ in range(20)])
    ax = plots.plot_heatmap(truth, draws, show_ids=False)
    columns = [t.get_text() for t in ax.get_xticklabels()]
    rows = [t.get_text() for t in ax.get_yticklabels()]
    assert columns == rows and 0 < len(columns) < 40
    plt.close("all")
