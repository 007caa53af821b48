"""The entries of the project's own board (``saber board --shipped``), one line each.

Each is a name ``saber board`` reads (:mod:`saber.board._entries`): a shipped reference
(``saber report --list-references``) or a trained agent saber ships (``saber list``),
whose shipped evaluation becomes the entry. A new shipped agent joins the board with one
line here.
"""

from __future__ import annotations

SHIPPED: tuple[str, ...] = (
    "saber-paper",  # the SABER paper's Rainbow and Rainbow-IQN (Table 7, published means)
    "saber-random",  # saber's random agent under the full protocol, 100 episodes per game
    "ppo-pong",  # PPO trained under SABER on Pong (saber/agents/data/ppo_pong.json)
    "saber-ppo",  # saber's PPO baselines, 10M frames (docs/baselines.md)
)
