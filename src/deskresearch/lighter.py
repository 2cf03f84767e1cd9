"""Imports our own processes leave out or put off: CPU on the way to the first step, saved.

Only the ``deskresearch`` command calls ``lighten()`` (before anything else is imported), so a
program importing deskresearch keeps its libraries exactly as they are.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
import threading
from typing import Any

__all__ = ["lighten"]


def lighten() -> None:
    """Leave out openai's aiohttp transport and put off ``langsmith.types``' package init."""
    _no_aiohttp_client()
    _defer_langsmith_types()


def _no_aiohttp_client() -> None:
    """Keep openai from importing aiohttp, which no command uses.

    openai imports its aiohttp transport whenever aiohttp is installed (Ray's extra brings it):
    12 MB of every command's and the page's memory and 0.15 s of CPU on the way to the first
    paid call. Without the transport openai works as ever (over httpx).
    """
    if "openai" not in sys.modules:
        sys.modules.setdefault("openai._vendor.httpx_aiohttp", None)  # type: ignore[arg-type]


def _defer_langsmith_types() -> None:
    """Run ``langsmith/types/__init__.py`` only when a name is first asked of the package.

    langchain_core imports ``langsmith.run_trees``, which imports one type alias from
    ``langsmith.types.run_select_field``; Python runs the package's ``__init__`` first, and
    that imports every generated API type (164 modules, langsmith 0.14–0.15): about
    0.2 s of CPU between the head start's call and the graph's first step, for a module no
    research uses. The package is put in place unexecuted, with its real ``__path__``, so its
    submodules import as ever; the first other name asked of it (LangSmith's API client and
    resources ask; tracing does not) runs the real ``__init__`` into it, once, and answers from it.
    """
    if "langsmith.types" in sys.modules:
        return
    top = importlib.util.find_spec("langsmith")
    if top is None or not top.submodule_search_locations:
        return
    folder = os.path.join(next(iter(top.submodule_search_locations)), "types")
    spec = importlib.util.spec_from_file_location(
        "langsmith.types", os.path.join(folder, "__init__.py"), submodule_search_locations=[folder]
    )
    if spec is None or spec.loader is None or not os.path.isfile(spec.origin or ""):
        return  # a langsmith without the package: nothing to put off
    package = importlib.util.module_from_spec(spec)
    loader, lock, ran = spec.loader, threading.RLock(), list[bool]()

    def __getattr__(name: str) -> Any:
        with lock:  # a second thread waits for the init the first one runs
            if not ran and (name == "__all__" or not name.startswith("__")):
                ran.append(True)  # first: names asked while the init runs are looked up
                try:
                    loader.exec_module(package)
                except BaseException:
                    ran.clear()  # as a failed import: the next use tries (and fails) again
                    raise
        try:
            return package.__dict__[name]
        except KeyError:
            raise AttributeError(f"module 'langsmith.types' has no attribute {name!r}") from None

    def __dir__() -> list[str]:
        with contextlib.suppress(AttributeError):  # the real init defines no __all__
            __getattr__("__all__")  # dir() lists what the real init defines
        return sorted(package.__dict__)

    package.__getattr__ = __getattr__  # type: ignore[method-assign]
    package.__dir__ = __dir__  # type: ignore[method-assign]
    sys.modules["langsmith.types"] = package
    import langsmith  # light (lazy names); the import system would set this attribute itself

    langsmith.types = package
