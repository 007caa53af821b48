"""The data files saber ships in ``saber/data`` (references, baselines), read as text."""

from __future__ import annotations

import gzip
from importlib import resources


def data_text(name: str) -> str:
    """The UTF-8 text of ``saber/data/<name>``, decompressed when the name ends with ``.gz``
    (the larger tables ship gzipped: the package's size)."""
    data = resources.files("saber.data").joinpath(name).read_bytes()
    return (gzip.decompress(data) if name.endswith(".gz") else data).decode("utf-8")


def has_data(name: str) -> bool:
    """Whether ``saber/data/<name>`` is shipped."""
    return resources.files("saber.data").joinpath(name).is_file()
