"""Hook specifications for salsox plugins (pluggy project name and entry-point group: ``salsox``).

A plugin is an ordinary module or package that implements one or more of these hooks with
``@salsox.hookimpl`` and is declared in its ``pyproject.toml``::

    [project.entry-points.salsox]
    my_losses = "my_package.plugin"

Installed plugins are discovered when salsox first needs them; ``salsox.plugins.register``
adds one at runtime (a notebook, a test) without packaging.
"""

from __future__ import annotations

from typing import Any, Sequence

import pluggy

hookspec = pluggy.HookspecMarker("salsox")
hookimpl = pluggy.HookimplMarker("salsox")


@hookspec
def salsox_losses() -> Sequence[Any]:
    """Losses this plugin provides.

    Return a sequence of loss classes (subclasses of ``salsox.plugins.DecomposableLoss`` or
    ``salsox.plugins.ContingencyLoss``), or of zero-argument factories returning loss
    instances. Each loss's ``name`` selects it in ``salso``, ``partition_loss`` and ``dlso``;
    names must not clash with built-in losses or other plugins.
    """


@hookspec
def salsox_initializers() -> Sequence[Any]:
    """Initialisers this plugin provides.

    Return a sequence of ``salsox.plugins.Initializer`` objects: a ``name`` and a function
    ``init(draws, max_clusters, rng) -> labels`` given the draws (an H x n int array), the
    cluster cap and a ``numpy.random.Generator``, returning n integer labels with at most
    ``max_clusters`` distinct values.
    """
