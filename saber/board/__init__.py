"""The SABER board: every entry's status decided by replaying it, ranked like for like, as
a static site (``saber board ENTRY... --out SITE``).

An entry is a run directory of ``saber eval`` (verified by playing its replays again, as
``saber verify`` does), a published score table with its citation, or a shipped reference
or agent. The site works offline and sorts its tables with a few lines of JavaScript;
docs/board.md says what it checks and how to add an entry.

Example (illustration, not run as a doctest)::

    from saber.board import build_board
    board = build_board(["runs/my-agent", "saber-paper"], "site")
    print(board.summary())
"""

from __future__ import annotations

from saber.board.build import Board, build_board

__all__ = ["Board", "build_board"]
