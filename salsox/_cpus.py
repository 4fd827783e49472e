"""The CPUs this process may use, and the default thread count of every call that takes n_jobs.

A container limited by a CPU quota (Docker ``--cpus``, Kubernetes limits) or a shared node's job
slot sees the host's cores in ``os.cpu_count()``; threads beyond its share only queue for the same
CPUs. So the default is, as joblib's ``cpu_count()`` takes it: the CPUs of the affinity mask,
lowered to the cgroup v2 (``cpu.max``) or v1 (``cpu.cfs_quota_us / cpu.cfs_period_us``) quota
rounded down, at least one. ``OMP_NUM_THREADS``, when set, is the user's own choice and wins, and
the OpenMP runtime's current limit (what ``threadpoolctl.threadpool_limits`` sets) caps both.
"""

from __future__ import annotations

import dataclasses
import math
import os
from typing import List, Optional, Tuple

__all__ = ["CpuInfo", "cpu_info", "default_threads", "usable_cpus", "CGROUP_ROOT_ENV"]

# Where the cgroup file system is mounted; tests point it at fake quota files.
CGROUP_ROOT_ENV = "SALSOX_CGROUP_ROOT"
_DEFAULT_CGROUP_ROOT = "/sys/fs/cgroup"


@dataclasses.dataclass(frozen=True)
class CpuInfo:
    """What :func:`cpu_info` found.

    Attributes
    ----------
    affinity : int
        CPUs in this process's affinity mask (``os.cpu_count()`` where the platform has none).
    quota : float or None
        The tightest cgroup CPU quota, in CPUs (``None``: no quota).
    quota_file : str or None
        The file it was read from.
    omp_num_threads : int or None
        ``OMP_NUM_THREADS`` (its first value), when set to a positive integer.
    openmp_limit : int
        The OpenMP runtime's current ``omp_get_max_threads()`` in this thread (1 without OpenMP).
    default : int
        The default number of threads: ``OMP_NUM_THREADS`` if set, else the affinity CPUs lowered
        to the quota rounded down (at least one); either way at most ``openmp_limit``.
    """

    affinity: int
    quota: Optional[float]
    quota_file: Optional[str]
    omp_num_threads: Optional[int]
    openmp_limit: int
    default: int


def _affinity() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - macOS, Windows
        return max(1, os.cpu_count() or 1)


def _read(path: str) -> Optional[str]:
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def _own_cgroup_dirs(root: str) -> List[str]:
    """This process's cgroup directories under ``root``, deepest first, then ``root`` itself: a
    quota set on any ancestor limits the process too. Inside a container the namespace puts the
    container's own cgroup at the root."""
    paths = []
    text = _read("/proc/self/cgroup") if root == _DEFAULT_CGROUP_ROOT else None
    for line in (text or "").splitlines():
        parts = line.split(":", 2)  # hierarchy-ID:controllers:path
        if len(parts) == 3 and (parts[1] == "" or "cpu" in parts[1].split(",")):
            sub = parts[2].strip("/")
            v1 = [os.path.join(root, c) for c in ("cpu", "cpu,cpuacct")] if parts[1] else [root]
            for base in v1:
                p = sub
                while p:
                    paths.append(os.path.join(base, p))
                    p = os.path.dirname(p)
    return paths + [root, os.path.join(root, "cpu"), os.path.join(root, "cpu,cpuacct")]


def _quota(root: str) -> Tuple[Optional[float], Optional[str]]:
    """The tightest CPU quota (in CPUs) of the cgroup v2 ``cpu.max`` or v1 CFS files found."""
    best: Tuple[Optional[float], Optional[str]] = (None, None)
    for d in _own_cgroup_dirs(root):
        found = None
        v2 = _read(os.path.join(d, "cpu.max"))
        if v2 is not None:
            fields = v2.split()
            if len(fields) == 2 and fields[0] != "max":
                found = (fields[0], fields[1], os.path.join(d, "cpu.max"))
        else:
            q, p = _read(os.path.join(d, "cpu.cfs_quota_us")), _read(os.path.join(d, "cpu.cfs_period_us"))
            if q is not None and p is not None and q != "-1":
                found = (q, p, os.path.join(d, "cpu.cfs_quota_us"))
        if found is None:
            continue
        try:
            cpus = int(found[0]) / int(found[1])
        except (ValueError, ZeroDivisionError):
            continue
        if cpus > 0 and (best[0] is None or cpus < best[0]):
            best = (cpus, found[2])
    return best


def _omp_num_threads() -> Optional[int]:
    value = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    try:
        n = int(value)
    except ValueError:
        return None
    return n if n > 0 else None


def cpu_info() -> CpuInfo:
    """What bounds the default thread count here (see :class:`CpuInfo`)."""
    from . import _core

    affinity = _affinity()
    quota, quota_file = _quota(os.environ.get(CGROUP_ROOT_ENV) or _DEFAULT_CGROUP_ROOT)
    omp = _omp_num_threads()
    limit = max(1, int(_core.max_threads())) if _core.has_openmp() else 1
    if omp is not None:
        default = omp
    else:
        default = affinity if quota is None else max(1, min(affinity, math.floor(quota)))
    return CpuInfo(affinity, quota, quota_file, omp, limit, max(1, min(default, limit)))


def default_threads() -> int:
    """The default number of threads (``n_jobs=None`` or ``-1``): see :class:`CpuInfo`."""
    return cpu_info().default


def usable_cpus(info: Optional[CpuInfo] = None) -> int:
    """The CPUs this process may use: the affinity mask lowered to the cgroup quota rounded
    down, at least one (``OMP_NUM_THREADS`` aside). ``info``: what :func:`cpu_info` found
    (default: look now)."""
    info = cpu_info() if info is None else info
    return info.affinity if info.quota is None else max(1, min(info.affinity, math.floor(info.quota)))
