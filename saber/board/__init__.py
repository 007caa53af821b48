"""The SABER board: every entry's status decided by replaying it, ranked like for like, as
a static site (``saber board ENTRY... --out SITE``); docs/board.md says what it checks.

Example (illustration, not run as a doctest)::

    from saber.board import build_board
    board = build_board(["runs/my-agent", "saber-paper"], "site")
    print(board.summary())
"""

from __future__ import annotations

from saber.board.build import Board, build_board

__all__ = ["Board", "build_board"]
