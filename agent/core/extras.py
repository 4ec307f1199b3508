"""Optional dependencies ("extras"): a missing one is one line naming what to install.

A feature that needs an extra calls :func:`require` before it starts working, so a user without
it gets ``pip install 'tangram-agent[analysis]'`` instead of a ModuleNotFoundError traceback from
deep inside the feature (or, worse, after it has half written its output).
"""

from __future__ import annotations

import importlib

DISTRIBUTION = "tangram-agent"


class MissingExtra(RuntimeError):
    """An optional dependency is not installed; the text says which extra brings it."""


def require(feature: str, extra: str, *modules: str) -> None:
    """Import ``modules`` now; MissingExtra (one line) if any of them cannot be imported."""
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError as exc:
            missing = exc.name or name
            raise MissingExtra(f"{feature} needs {missing}, which is not installed here: "
                               f"pip install '{DISTRIBUTION}[{extra}]'") from None
