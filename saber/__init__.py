"""saber: the SABER Atari benchmark (Toromanoff, Wirbel and Moutarde, 2019) for Gymnasium.

Importing saber registers ``SABER/<Game>`` environments with Gymnasium.
"""

from __future__ import annotations

__version__ = "0.1.0"
