"""The plugin registry (layer 2): pluggy, entry points, and what plugins provide.

Plugin authors use :mod:`salsox.plugins`, which re-exports what they need from here.
"""

from .host import (
    PluginError,
    PluginInfo,
    PluginWarning,
    declare_initializers,
    declare_losses,
    list_plugins,
    loss_label,
    register,
    registry,
    unregister,
)
from .origin import plugin_origin

__all__ = [
    "PluginError",
    "PluginInfo",
    "PluginWarning",
    "declare_initializers",
    "declare_losses",
    "list_plugins",
    "loss_label",
    "plugin_origin",
    "register",
    "registry",
    "unregister",
]
