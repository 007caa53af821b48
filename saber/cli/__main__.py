"""``python -m saber.cli``: the ``saber`` command."""

from saber.cli import main

main()
