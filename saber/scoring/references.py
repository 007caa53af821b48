"""Shipped reference agents to report beside the user's (``saber report --reference NAME``).

Each name adds agents ``<agent>@<source>`` to a score table; docs/reports.md lists them
and their data in ``saber/data``.

    >>> [r.name for r in list_references()][:4]
    ['saber-paper', 'saber-random', 'saber-ppo', 'dopamine']
"""

from __future__ import annotations

import csv
import functools
import io
from collections.abc import Callable
from dataclasses import dataclass

from saber.errors import ScoreFileError, UnknownReferenceError
from saber.protocol import limits
from saber.scoring import dopamine
from saber.scoring.csvscores import parse_score, parse_time_limit
from saber.scoring.packaged import data_text, has_data
from saber.scoring.runscores import add_harness_record
from saber.scoring.scoretable import EpisodeScore, ScoreTable, TableBuilder

PAPER_FILE = "saber_paper_agents.csv"
RANDOM_FILE = "saber_random_episodes.csv.gz"
PPO_FILE = "saber_ppo_episodes.csv"  # scripts/release/ship_trained_agent.py writes it
PPO_AGENT = "ppo@saber"
PPO_FRAMES = 10_000_000
# Training frames of the paper's final agents (Table 7); the other rows are Table 6.
PAPER_TRAINING_FRAMES = 200_000_000
_PAPER_AGENTS = {"rainbow": "rainbow@saber-paper", "rainbow_iqn": "rainbow-iqn@saber-paper"}
_FRAMES = {"10M": 10_000_000, "50M": 50_000_000, "100M": 100_000_000, "200M": 200_000_000}
PAPER_CITATION = (
    "Toromanoff, Wirbel and Moutarde (2019), Is Deep Reinforcement Learning Really "
    "Superhuman on Atari? Leveling the playing field, arXiv:1908.04683, Tables 6 and 7"
)


@dataclass(frozen=True)
class ReferenceInfo:
    """One shipped reference.

    Attributes:
        name: what ``--reference`` takes, e.g. ``"saber-paper"``.
        agents: the agent names it adds.
        description: one sentence: what it is.
        citation: where the numbers come from.
        mean_only: only per-game means were published (no episodes, no intervals).
        file: the data file in ``saber/data``.
        deviations: how its runs differ from SABER, compact (None: SABER's protocol);
            every table and figure prints it beside the agents.
    """

    name: str
    agents: tuple[str, ...]
    description: str
    citation: str
    mean_only: bool
    file: str
    deviations: str | None = None


def _paper_rows() -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(data_text(PAPER_FILE))))


def _paper_table() -> ScoreTable:
    builder = TableBuilder()
    for line, row in enumerate(_paper_rows(), start=2):
        if _FRAMES[row["training_frames"]] != PAPER_TRAINING_FRAMES:
            continue
        where = f"saber/data/{PAPER_FILE}:{line}"
        score, infinite = parse_score(row["score"], where, row["game"])
        builder.add(
            EpisodeScore(
                agent=_PAPER_AGENTS[row["agent"]],
                game=row["game"],
                time_limit=parse_time_limit(row["time_limit"], where),
                score=score,
                infinite=infinite,
                episode=None,
                where=where,
                run="paper",
            )
        )
    table = builder.table
    table.sources.append(f"saber/data/{PAPER_FILE} (--reference saber-paper)")
    table.mean_only = set(_PAPER_AGENTS.values())
    table.references = dict.fromkeys(_PAPER_AGENTS.values(), "saber-paper")
    return table


def _random_table() -> ScoreTable:
    table = _episodes_table(RANDOM_FILE, "random@saber", lambda row: "saber")
    table.sources.append(f"saber/data/{RANDOM_FILE} (--reference saber-random)")
    table.references = {"random@saber": "saber-random"}
    return table


def _ppo_table() -> ScoreTable:
    # One run per training seed: where a game has several, its intervals are over runs.
    table = _episodes_table(PPO_FILE, PPO_AGENT, lambda row: f"seed{row['training_seed']}")
    table.sources.append(f"saber/data/{PPO_FILE} (--reference saber-ppo)")
    table.references = {PPO_AGENT: "saber-ppo"}
    return table


def ppo_runs() -> list[dict[str, str]]:
    """The saber-ppo runs shipped: ``{"agent", "game", "training_seed"}``, one per run."""
    if not has_data(PPO_FILE):
        return []
    runs = {
        (row["agent"], row["game"], row["training_seed"])
        for row in csv.DictReader(io.StringIO(data_text(PPO_FILE)))
    }
    return [
        {"agent": agent, "game": game, "training_seed": seed} for agent, game, seed in sorted(runs)
    ]


PPO_TRAINING_FILE = "saber_ppo_training.csv.gz"


def ppo_training_episodes() -> dict[str, dict[int, list[dict[str, float]]]]:
    """The saber-ppo runs' training episodes: ``{game: {training_seed: episodes}}``, each
    episode ``{"episode", "frames", "score"}`` in the order the run logged it (frames:
    cumulative training frames at its end). Empty until the data is shipped."""
    if not has_data(PPO_TRAINING_FILE):
        return {}
    runs: dict[str, dict[int, list[dict[str, float]]]] = {}
    text = data_text(PPO_TRAINING_FILE)
    for row in csv.DictReader(io.StringIO(text)):
        episodes = runs.setdefault(row["game"], {}).setdefault(int(row["training_seed"]), [])
        episodes.append(
            {"episode": len(episodes), "frames": int(row["frames"]), "score": float(row["score"])}
        )
    return runs


def _episodes_table(file: str, agent: str, run: Callable[[dict[str, str]], str]) -> ScoreTable:
    """A table of harness records shipped as CSV rows (one per episode)."""
    builder = TableBuilder()
    for line, row in enumerate(csv.DictReader(io.StringIO(data_text(file))), start=2):
        where = f"saber/data/{file}:{line}"
        try:
            record = {
                "game": row["game"],
                "episode": int(row["episode"]),
                # One column per registered time limit (score, score_5min, score_30min).
                **{
                    limit.record_field: float(row[limit.record_field])
                    for limit in limits.TIME_LIMITS
                },
                "infinite": row["infinite"].strip().lower() == "true",
            }
        except (KeyError, ValueError) as error:
            raise ScoreFileError(f"{where}: not a harness record ({error})") from None
        add_harness_record(builder, record, where, run=run(row), agent=agent)
    return builder.table


_REFERENCES: dict[str, tuple[ReferenceInfo, Callable[[], ScoreTable]]] = {
    "saber-paper": (
        ReferenceInfo(
            name="saber-paper",
            agents=tuple(_PAPER_AGENTS.values()),
            description="The SABER paper's Rainbow and Rainbow-IQN after 200M training "
            "frames, at 5 minutes, 30 minutes and SABER (published per-game means: one run, "
            "no intervals); Rainbow-IQN at 10M/50M/100M frames for training-time reports",
            citation=PAPER_CITATION,
            mean_only=True,
            file=PAPER_FILE,
        ),
        _paper_table,
    ),
    "saber-random": (
        ReferenceInfo(
            name="saber-random",
            agents=("random@saber",),
            description="The built-in random agent (uniform over 18 actions) evaluated by "
            "this package under the full SABER protocol, 100 episodes per game",
            citation="saber/data/saber_random_provenance.json (saber eval --agent random)",
            mean_only=False,
            file=RANDOM_FILE,
        ),
        _random_table,
    ),
}


def _dopamine_info(name: str, agents: tuple[str, ...]) -> ReferenceInfo:
    which = (
        "DQN, C51, Rainbow, IQN, QR-DQN and DQN (Adam + MSE)"
        if len(agents) > 1
        else f"{dopamine.AGENTS[agents[0]]} ({agents[0]})"
    )
    return ReferenceInfo(
        name=name,
        agents=tuple(f"{a}@dopamine-<10M|50M|100M|200M>" for a in agents),
        description=f"Dopamine's {which}: mean training return of one 1M-frame iteration, "
        "5 runs per game (intervals over runs), 60 of the 61 games; append @10M, @50M, "
        "@100M or @200M (default) for the checkpoint",
        citation=dopamine.CITATION,
        mean_only=False,
        file=dopamine.CHECKPOINT_FILE,
        deviations=dopamine.deviation_label(),
    )


if has_data(PPO_FILE):
    _REFERENCES["saber-ppo"] = (
        ReferenceInfo(
            name="saber-ppo",
            agents=(PPO_AGENT,),
            description="saber's PPO baselines: examples/ppo_saber.py (CleanRL's PPO "
            "settings, a half-width Nature CNN) trained for 10M frames under the full SABER "
            "protocol on 2 CPU cores, one script and one set of hyperparameters for every "
            "game, evaluated for 100 episodes per game; "
            + ", ".join(f"{run['game']} (seed {run['training_seed']})" for run in ppo_runs())
            + " (docs/baselines.md)",
            citation="saber/data/saber_ppo_episodes.csv; provenance in "
            "saber/agents/data/ppo_*.json (scripts/release/ship_trained_agent.py)",
            mean_only=False,
            file=PPO_FILE,
        ),
        _ppo_table,
    )

_DOPAMINE = dopamine.REFERENCE_NAMES
for _name, _agents in _DOPAMINE.items():
    _REFERENCES[_name] = (
        _dopamine_info(_name, _agents),
        functools.partial(dopamine.reference_table, _agents, "200M", _name),
    )


def list_references() -> list[ReferenceInfo]:
    """Every shipped reference, in ``--list-references`` order."""
    return [info for info, _ in _REFERENCES.values()]


@functools.cache
def _cached_table(name: str, checkpoint: str | None = None) -> ScoreTable:
    if checkpoint is None:
        return _REFERENCES[name][1]()
    return dopamine.reference_table(_DOPAMINE[name], checkpoint, name)


def reference_table(name: str) -> ScoreTable:
    """The score table of a shipped reference, ready to merge with the user's.

    Args:
        name: one of :func:`list_references` (``"saber-paper"``, ``"dopamine:rainbow"``);
            a Dopamine reference may end in ``@10M``, ``@50M``, ``@100M`` or ``@200M``.

    Raises:
        UnknownReferenceError: the name is not shipped; the message lists those that are.

    Example:
        >>> table = reference_table("saber-paper")
        >>> sorted(table.agents()) == sorted(table.mean_only) == ["rainbow-iqn@saber-paper", "rainbow@saber-paper"]
        True
    """
    key, at, checkpoint = name.strip().lower().partition("@")
    if key not in _REFERENCES:
        raise UnknownReferenceError(
            f"Unknown reference {name!r} for --reference; shipped: {', '.join(_REFERENCES)} "
            "(saber report --list-references)"
        )
    label = checkpoint.strip().upper() if at else None
    if label is not None and key not in _DOPAMINE:
        raise UnknownReferenceError(
            f"Reference {name!r}: only the Dopamine references take a checkpoint "
            f"(dopamine@10M, dopamine:rainbow@50M); write {key!r} alone"
        )
    if label is not None and label not in dopamine.CHECKPOINT_ITERATIONS:
        raise UnknownReferenceError(
            f"Reference {name!r}: no checkpoint @{label}; the Dopamine "
            f"references have @{', @'.join(dopamine.CHECKPOINT_ITERATIONS)}"
        )
    table = _cached_table(key, label)
    # A copy: merging appends to the table's lists.
    return ScoreTable(
        records=list(table.records),
        sources=list(table.sources),
        saber_compliant=True,
        warnings=[],
        mean_only=set(table.mean_only),
        references=dict(table.references),
    )


def training_reference(name: str = "saber-paper") -> dict[str, dict[int, dict[str, float]]]:
    """Training-time scores of a reference: ``{agent: {training_frames: {game: score}}}``.

    The SABER paper's Rainbow-IQN under SABER at 10M, 50M, 100M (Table 6) and 200M
    (Table 7) training frames; ``inf`` for infinite gameplay. Only ``saber-paper`` has
    training-time scores.

    Raises:
        UnknownReferenceError: another name.
    """
    if name.strip().lower() != "saber-paper":
        reference_table(name)  # an unknown name gets the message listing the shipped ones
        raise UnknownReferenceError(f"Reference {name!r} has no training-time scores")
    scores: dict[str, dict[int, dict[str, float]]] = {}
    for line, row in enumerate(_paper_rows(), start=2):
        if row["time_limit"] != "saber" or row["agent"] != "rainbow_iqn":
            continue
        where = f"saber/data/{PAPER_FILE}:{line}"
        value, _ = parse_score(row["score"], where, row["game"])
        frames = _FRAMES[row["training_frames"]]
        scores.setdefault(_PAPER_AGENTS[row["agent"]], {}).setdefault(frames, {})[row["game"]] = (
            value
        )
    return scores
