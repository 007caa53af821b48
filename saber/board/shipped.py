"""The entries of the project's own board, built with the docs and in CI: the shipped
references and agents of :data:`SHIPPED` (a new shipped agent joins with one line here)
and every run under :data:`RUN_FOLDERS`, verified by replay. From the repository's root::

    saber board baselines/evals --shipped --sample 10 --out site
"""

from __future__ import annotations

from pathlib import Path

SHIPPED: tuple[str, ...] = (
    "saber-paper",  # the SABER paper's Rainbow and Rainbow-IQN (Table 7, published means)
    "saber-random",  # saber's random agent under the full protocol, 100 episodes per game
    "ppo-pong",  # PPO trained under SABER on Pong (saber/agents/data/ppo_pong.json)
    "saber-ppo",  # saber's PPO baselines, 10M frames (docs/baselines.md)
)

# Folders of run directories in the repository (relative to its root) that the project's
# board verifies and ranks: the baselines' evaluations, and the entries users add by pull
# request (docs/board.md); a folder that is not there is left out.
RUN_FOLDERS: tuple[str, ...] = ("baselines/evals", "board/runs")
# Replays verified per run on the project's board: a seeded sample keeps the docs build
# within CI's minutes; each entry's page gives the command that checks the rest.
SAMPLE = 10


def project_runs(root: Path) -> list[str]:
    """The folders of :data:`RUN_FOLDERS` that ``root`` (the repository) holds, as paths
    relative to it (the board names them as given)."""
    return [folder for folder in RUN_FOLDERS if (root / folder).is_dir()]
