"""``python -m saber.cli``: the ``saber`` command."""

from saber.cli import main

if __name__ == "__main__":  # not on import (a doctest collector imports every module)
    main()
