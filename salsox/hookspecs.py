"""Hook specifications for salsox plugins (pluggy project name and entry-point group: ``salsox``).

A plugin is an ordinary module, class or object that implements one or more of these hooks,
each marked with ``@salsox.hookimpl``. Installed packages declare their plugin module in
``pyproject.toml``::

    [project.entry-points.salsox]
    my_losses = "my_package.plugin"

Installed plugins are discovered the first time salsox needs a plugin (a loss or initialiser
name it does not know, or :func:`salsox.plugins.list_plugins`). A plugin can also be added at
runtime, without packaging, with :func:`salsox.plugins.register` -- in a notebook or a test.

Every hook is called with no arguments and returns a sequence; salsox collects the results of
all plugins. Names are case-insensitive and must be unique across plugins and must not be a
built-in loss name. An installed plugin that breaks these rules, fails to import (even with
``sys.exit``), whose hook raises or that implements a hook not specified here (a misspelt
``salsox_loss``) does not break the others: :func:`salsox.plugins.list_plugins`
and ``salsox plugins`` list it with its error, a :class:`salsox.plugins.PluginWarning` is issued
once, a built-in name keeps selecting the built-in loss, and a name two plugins provide
raises :class:`salsox.plugins.PluginError` naming both. :func:`salsox.plugins.register`
refuses such a plugin with that error instead.

See ``docs/plugins.md`` for a complete worked example.
"""

from __future__ import annotations

from typing import Any, Sequence

import pluggy

hookspec = pluggy.HookspecMarker("salsox")
hookimpl = pluggy.HookimplMarker("salsox")


@hookspec
def salsox_losses() -> Sequence[Any]:
    """Return the losses this plugin provides.

    :return: A sequence whose items are each a loss class (a subclass of
        :class:`salsox.plugins.DecomposableLoss`, :class:`salsox.plugins.CountSumLoss` or
        :class:`salsox.plugins.ContingencyLoss`, instantiated with no arguments when selected
        by name), a loss instance, or a zero-argument factory returning a loss instance.

    Each loss's ``name`` attribute selects it in :func:`salsox.salso`,
    :func:`salsox.partition_loss` and :func:`salsox.dlso`. When a user writes
    ``salso(draws, "my-loss", ...)`` with costs (``a``, ``b``) through
    :func:`salsox.losses.get_loss`, those are passed to the class or factory as keywords.

    * :class:`~salsox.plugins.DecomposableLoss`: per-draw-cluster, per-estimate-cluster and
      per-cell functions of counts; tabulated once for 0..n and searched at native speed.
    * :class:`~salsox.plugins.CountSumLoss`: a formula in per-draw sums of functions of counts;
      the functions are tabulated, the formula compiled and evaluated natively.
    * :class:`~salsox.plugins.ContingencyLoss`: any function of a contingency table, called
      from the C++ search in batches (the generic, slower path).

    Example::

        @salsox.hookimpl
        def salsox_losses():
            return [MyVI, MyOMARI]
    """
    return ()  # a specification: the body never runs


@hookspec
def salsox_initializers() -> Sequence[Any]:
    """Return the initialisers this plugin provides.

    :return: A sequence of :class:`salsox.plugins.Initializer` objects, each a ``name`` and a
        function ``init(draws, max_clusters, rng) -> labels``.

    The function receives the draws (an H x n read-only int32 array, each draw labelled
    0..k-1), the cluster cap of the search and a ``numpy.random.Generator`` seeded from the
    search's seed and the run index. It returns n integer labels with at most
    ``max_clusters`` distinct values (they are relabelled 0..q-1). It runs in Python before
    the search, once per run that uses it (once per search if ``deterministic=True``).

    Work that every run shares (the posterior similarity matrix, a tree of it) belongs in
    the initialiser's setup step, ``Initializer(..., setup=setup)``: ``setup(draws,
    max_clusters) -> state`` is called once per search, before the first run that uses the
    initialiser (never when no run does), and the function is then called as
    ``init(draws, max_clusters, rng, state)``. An exception in either is a
    :class:`salsox.plugins.PluginError` naming the initialiser.

    Users select it with ``salso(draws, initializer="name")``; ``prob_initializer`` mixes it
    with the built-in sequential and random initialisations.

    Example::

        @salsox.hookimpl
        def salsox_initializers():
            return [Initializer("psm-hclust", psm_hclust, deterministic=True, setup=psm_linkage)]
    """
    return ()  # a specification: the body never runs
