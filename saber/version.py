"""The version of saber, in a module of its own so that any layer can read it without
importing the top package (which would run up the layers); and the installed version of
a library, read without importing it."""

from __future__ import annotations

import functools
import importlib
import importlib.metadata

#: saber's version (what ``saber --version`` prints and ``run.json`` records).
__version__ = "0.6.0"


@functools.cache  # read once a process: the probe's key and run.json both ask
def installed_version(module: str, *distributions: str) -> str:
    """The version of the library ``module``, as its installed metadata says.

    ``distributions``: the names it is installed under, the first one found wins
    (``"opencv-python-headless", "opencv-python"`` for ``cv2``); default: ``module``.
    Reading the metadata takes a few ms; importing ale-py or OpenCV tens of ms, which the
    main process of ``saber eval`` (it plays nothing) does not pay to write ``run.json``.
    With none of them installed (a library from the system's packages, say), the module
    is imported and its ``__version__`` read.
    """
    for distribution in distributions or (module,):
        try:
            return importlib.metadata.version(distribution)
        except importlib.metadata.PackageNotFoundError:
            continue
    return str(importlib.import_module(module).__version__)
