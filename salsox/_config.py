"""``salsox.show_config()``: the build and the threads salsox would use here, for bug reports."""

from __future__ import annotations

import os
import platform
import sys
from typing import Any, Dict, List, Optional, TextIO

__all__ = ["config", "show_config"]


def _openmp_libraries() -> List[Dict[str, Any]]:
    """The OpenMP runtimes threadpoolctl sees in this process (salsox's among them), or [] when
    threadpoolctl is not installed."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return []
    return [
        {k: lib.get(k) for k in ("prefix", "filepath", "version", "num_threads")}
        for lib in threadpool_info()
        if lib.get("user_api") == "openmp"
    ]


def config() -> Dict[str, Any]:
    """What :func:`show_config` prints, as a dict."""
    from . import _core
    from ._cpus import cpu_info, usable_cpus
    from ._version import __version__

    cpus = cpu_info()
    _core.set_usable_cpus(usable_cpus(cpus))  # as the next call that takes n_jobs sets it
    return {
        "salsox": __version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "openmp": bool(_core.has_openmp()),
        "simd_path": _core.simd_path(),
        "simd_paths": list(_core.simd_paths()),
        "cpus_affinity": cpus.affinity,
        "os_cpu_count": os.cpu_count(),
        "cgroup_quota": cpus.quota,
        "cgroup_quota_file": cpus.quota_file,
        "OMP_NUM_THREADS": cpus.omp_num_threads,
        "openmp_limit": cpus.openmp_limit,
        "default_n_jobs": cpus.default,
        "engine_cpus": _core.usable_cpus(),
        "openmp_libraries": _openmp_libraries(),
    }


def show_config(file: Optional[TextIO] = None) -> None:
    """Print salsox's build and the threads it would use here: the CPUs of the affinity mask,
    the cgroup CPU quota, ``OMP_NUM_THREADS``, the OpenMP runtime's limit (which
    ``threadpoolctl.threadpool_limits`` lowers) and the resulting default ``n_jobs``, with the
    OpenMP libraries loaded (through threadpoolctl, when installed).

    Examples
    --------
    >>> salsox.show_config()  # doctest: +SKIP
    salsox: ...
    cpus_affinity: 2
    cgroup_quota: None
    ...
    default_n_jobs: 2
    """
    out = sys.stdout if file is None else file
    for key, value in config().items():
        if key == "openmp_libraries":
            print(f"{key}:{'' if value else ' (none found, or threadpoolctl not installed)'}", file=out)
            for lib in value:
                print("  " + ", ".join(f"{k}={v}" for k, v in lib.items()), file=out)
        else:
            print(f"{key}: {value}", file=out)
