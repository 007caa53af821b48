"""``saber check``: is this environment SABER? A behavioural probe of any Atari env.

It drives the user's whole stack and measures each rule of the protocol through the
emulator under it; each rule gets pass, fail or unknown (never a pass), with the evidence.
``saber.check`` is this package and, called, :func:`check`. docs/check.md gives each probe.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from saber.check.api import check
    from saber.check.result import CheckResult, RuleResult, Status

__all__ = [
    "CheckResult",
    "RuleResult",
    "Status",
    "check",
]

# Public name -> its module, imported on first use: the harness imports saber.check.gate
# and saber.check.verdicts before every evaluation, and with the quick probe's pass on
# disk it needs neither the probes nor the envs (saber.harness.evaluate).
_HOMES = {
    "check": "saber.check.api",
    "CheckResult": "saber.check.result",
    "RuleResult": "saber.check.result",
    "Status": "saber.check.result",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


class _CallableModule(types.ModuleType):
    """``saber.check`` is this package and, called, its :func:`check`: importing the
    package binds the name ``saber.check`` to it, so the package itself must be callable."""

    def __call__(self, env: Any, **kwargs: Any) -> CheckResult:
        from saber.check.api import check

        return check(env, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
