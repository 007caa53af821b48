"""The user's own modules, named on the command line as ``module:attr`` (an agent, an
env factory): importable from the working directory."""

from __future__ import annotations

import os
import sys


def working_directory_first() -> None:
    """``sys.path`` with the working directory first, for ``module:attr`` specs."""
    cwd = os.getcwd()
    if cwd in sys.path:
        sys.path.remove(cwd)
    sys.path.insert(0, cwd)


def import_from_working_directory(agent: str) -> None:
    """Put the working directory first on ``sys.path`` for a ``module:attr`` agent.

    ``python -m saber.cli`` does so, the ``saber`` console script does not: without this,
    ``saber eval --agent mymodule:policy`` could not import ``./mymodule.py``. It is done
    for the whole process on purpose: local worker processes are started with ``spawn``,
    which gives them this process's ``sys.path``, and they import the module again.
    """
    from saber.harness.policies import is_builtin_spec

    if not is_builtin_spec(agent):
        working_directory_first()
