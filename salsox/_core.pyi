# Type stub of the compiled pybind11 extension salsox._core (cpp/bindings/). The engine is
# internal: the package's Python modules validate every argument before calling it, so it is
# typed loosely here and the public API carries the precise types.
from typing import Any

def __getattr__(name: str) -> Any: ...
