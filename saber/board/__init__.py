"""The SABER board: every entry's status decided by replaying it, ranked like for like, as
a static site (``saber board ENTRY... --out SITE``).

An entry is a run directory of ``saber eval`` (a claim: only what its replays reproduce,
as ``saber verify`` plays them, is shown as verified), a published score table with its
citation, or a shipped reference or agent. docs/board.md says what it checks, what is
proven and what is claimed, and how to add an entry.

Example (illustration, not run as a doctest)::

    from saber.board import build_board
    board = build_board(["runs/my-agent", "saber-paper"], "site")
    print(board.summary())
"""

from __future__ import annotations

from saber.board.build import Board, build_board

__all__ = ["Board", "build_board"]
