"""The option objects of :func:`saber.evaluate` besides the backend: what the env is
(:class:`EnvOptions`) and what the run directory keeps besides the scores
(:class:`Recording`); each groups options that mean nothing apart (docs/harness.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from saber.errors import ProtocolError, SaberError
from saber.protocol.settings import SaberSettings

# The most episodes per game a call plans. Every episode of a run is planned before any
# plays (its seed, its work unit: about 200 bytes of memory each), so the plan must fit:
# 10,000 episodes of all 61 games is about 120 MB and seconds of planning, 100 times the
# protocol's 100 episodes; 10**9 would be a MemoryError, not a run.
MAX_EPISODES = 10_000
#: Why :data:`MAX_EPISODES` bounds a run, as the refusals of a larger count say it.
MAX_EPISODES_WHY = "every episode is planned in memory before any plays; the protocol asks for 100"


def check_count(name: str, value: object, minimum: int = 1) -> None:
    """Raise :class:`SaberError` unless ``value`` is an integer (not a bool) >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise SaberError(f"Expect `{name}` to be an integer >= {minimum}, actually: {value!r}")


def check_episodes(episodes: object) -> None:
    """Raise :class:`SaberError` unless ``episodes`` is an integer from 1 to
    :data:`MAX_EPISODES`."""
    check_count("episodes", episodes)
    if episodes > MAX_EPISODES:  # type: ignore[operator]  # an int, checked above
        raise SaberError(
            f"Expect `episodes` to be at most {MAX_EPISODES:,} per game ({MAX_EPISODES_WHY}), "
            f"actually: {episodes:,}"
        )


@dataclass(frozen=True)
class EnvOptions:
    """What the envs are: overrides of :class:`~saber.protocol.SaberSettings`, and whether
    settings (or envs) that break the SABER protocol may run.

    Attributes:
        overrides: setting name -> value (``--env-option KEY=VALUE``); empty: SABER's.
        allow_non_saber: run even when ``overrides`` break the protocol (the run is then
            marked ``non_saber``, and so is its report), and skip the quick behavioural
            probe of the env (``--allow-non-saber``).
    """

    overrides: Mapping[str, Any] = field(default_factory=dict)
    allow_non_saber: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.overrides, Mapping):
            raise SaberError(
                "Expect `EnvOptions(overrides)` to be a mapping of setting names to values, "
                f"actually: {self.overrides!r}"
            )

    def settings(self) -> SaberSettings:
        """The settings, checked.

        Raises:
            ProtocolError: an unknown or invalid setting, or settings that break SABER
                without ``allow_non_saber``.
        """
        settings = SaberSettings.from_overrides(**self.overrides)
        if not settings.is_compliant and not self.allow_non_saber:
            changes = ", ".join(
                f"{name}={actual!r} (SABER: {saber!r})"
                for name, (saber, actual) in settings.deviations().items()
            )
            raise ProtocolError(
                f"These settings break the SABER protocol: {changes}. Pass "
                "EnvOptions(..., allow_non_saber=True) (--allow-non-saber) to run anyway; the "
                "results are then marked as not SABER."
            )
        return settings


@dataclass(frozen=True)
class Recording:
    """What the run directory keeps besides the episodes' records.

    Attributes:
        replays: record each episode's replay, ``out/replays/<game>/episode-<n>.saber-replay``
            (a few kilobytes), named in its record with its SHA-256, so that ``saber
            verify`` can check every score and ``saber replay`` film any episode later
            (:mod:`saber.replay`). False records none (the records then have no
            ``replay`` key, as before saber 0.4); ``--no-replays``.
        video: film the first ``video`` episodes of every game played in this call, as
            ``out/videos/<game>/episode-<n>.mp4`` (every frame, in colour; listed in
            ``run.json``); needs the ``video`` extra; ``--video K``. The records are the
            same either way.
        command: the command line recorded in ``run.json`` (None: ``sys.argv``).
    """

    replays: bool = True
    video: int = 0
    command: Sequence[str] | None = None

    def __post_init__(self) -> None:
        check_count("Recording(video)", self.video, minimum=0)
