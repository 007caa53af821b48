"""The games of the SABER benchmark and their reference scores, looked up by any spelling.

Read once from the CSV files in ``saber/data``; every single-player ROM of ale-py is known,
one outside the 61 SABER games without reference scores (docs/environments.md).

>>> game = get_game("SABER/MsPacman")
>>> game.ale_id, game.env_name, game.title, game.world_record, get_game("ms pacman") is game
('ms_pacman', 'MsPacman', 'Ms. Pac-Man', 290090.0, True)
"""

from __future__ import annotations

import csv
import difflib
import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources

from saber.errors import UnknownGameError

__all__ = [
    "GameInfo",
    "atari57_games",
    "game_sets",
    "get_game",
    "resolve_games",
    "saber_games",
    "supported_rom_ids",
]


# Where each reference score of GameInfo comes from, worded so a paper can copy it; reports
# print these beside their Random, Human and World-record columns and keep them in JSON.
BASELINE_SOURCES = {
    "random": "Random: the random agent of the SABER paper (Toromanoff, Wirbel and Moutarde "
    "2019, arXiv:1908.04683, per-game tables)",
    "human": "Human: the beginner human of Mnih et al. 2015 (Nature 518, "
    "doi:10.1038/nature14236), as tabulated in the SABER paper",
    "world_record": "World record: the human world records collected by the SABER paper "
    "(Toromanoff, Wirbel and Moutarde 2019, arXiv:1908.04683, per-game tables)",
}


@dataclass(frozen=True)
class GameInfo:
    """Reference facts about one game. All scores are raw game points.

    Attributes:
        ale_id: the ROM id of ale-py, snake_case (``"ms_pacman"``).
        env_name: the PascalCase name used in environment ids (``"MsPacman"``).
        title: the game's name as people write it (``"Ms. Pac-Man"``), for tables and
            figures (``data/game_titles.csv``; other ROMs: their id in words).
        in_saber: one of the 61 games of the SABER paper.
        random: SABER's random-agent score (None outside the 61).
        human: beginner human of Mnih et al. 2015 (None where not published).
        world_record: human world record (None for Double Dunk, Elevator Action, Tennis).
        world_record_extrapolated: the record was extrapolated from a time or a distance.
        atari57_random: random score of the 57-game table used by Atari-5 (None outside it).
        atari57_human: average-human score of that table (None outside it).
    """

    ale_id: str
    env_name: str
    title: str
    in_saber: bool
    random: float | None
    human: float | None
    world_record: float | None
    world_record_extrapolated: bool
    atari57_random: float | None
    atari57_human: float | None

    @property
    def in_atari57(self) -> bool:
        """Whether the game is one of the 57 standard games (Atari-5's table)."""
        return self.atari57_random is not None

    @property
    def env_id(self) -> str:
        """The Gymnasium id registered by saber, e.g. ``"SABER/MsPacman"``."""
        return f"SABER/{self.env_name}"


# Every single-player ROM that ale-py 0.12 ships (the ALE ROM ids), the 61 SABER games among
# them: the ``SABER/<Game>`` envs. Written here, not asked of ale-py, so that looking a game
# up never loads the emulator; pyproject pins ale-py to 0.12.x and a test checks this list
# against ``ale_py.roms`` (ale-py also ships combat, joust, maze_craze and warlords, for
# their multi-player modes only: it registers none of them, nor does saber).
# fmt: off
SUPPORTED_ROM_IDS: tuple[str, ...] = (
    "adventure", "air_raid", "alien", "amidar", "assault", "asterix", "asteroids", "atlantis",
    "atlantis2", "backgammon", "bank_heist", "basic_math", "battle_zone", "beam_rider", "berzerk",
    "blackjack", "bowling", "boxing", "breakout", "carnival", "casino", "centipede",
    "chopper_command", "crazy_climber", "crossbow", "darkchambers", "defender", "demon_attack",
    "donkey_kong", "double_dunk", "earthworld", "elevator_action", "enduro", "entombed", "et",
    "fishing_derby", "flag_capture", "freeway", "frogger", "frostbite", "galaxian", "gopher",
    "gravitar", "hangman", "haunted_house", "hero", "human_cannonball", "ice_hockey", "jamesbond",
    "journey_escape", "kaboom", "kangaroo", "keystone_kapers", "king_kong", "klax", "koolaid",
    "krull", "kung_fu_master", "laser_gates", "lost_luggage", "mario_bros", "miniature_golf",
    "montezuma_revenge", "mr_do", "ms_pacman", "name_this_game", "othello", "pacman", "phoenix",
    "pitfall", "pitfall2", "pong", "pooyan", "private_eye", "qbert", "riverraid", "road_runner",
    "robotank", "seaquest", "sir_lancelot", "skiing", "solaris", "space_invaders", "space_war",
    "star_gunner", "superman", "surround", "tennis", "tetris", "tic_tac_toe_3d", "time_pilot",
    "trondead", "turmoil", "tutankham", "up_n_down", "venture", "video_checkers", "video_chess",
    "video_cube", "video_pinball", "wizard_of_wor", "word_zapper", "yars_revenge", "zaxxon",
)
# fmt: on


def supported_rom_ids() -> tuple[str, ...]:
    """Every single-player ROM id of ale-py (the 61 SABER games among them), sorted.

    >>> len(supported_rom_ids()), "pong" in supported_rom_ids()
    (104, True)
    """
    return SUPPORTED_ROM_IDS


def ale_id_to_env_name(ale_id: str) -> str:
    """PascalCase name of a ROM id, exactly as ale-py's registration spells it."""
    return ale_id.title().replace("_", "")


# Spellings in papers that the mechanical folding below does not reach. (No "pacman":
# ale-py has a Pac-Man ROM of its own, SABER/Pacman, which is not Ms. Pac-Man.)
_ALIASES = {
    "montezumasrevenge": "montezuma_revenge",
    "jamesbond007": "jamesbond",
    "upanddown": "up_n_down",
}

_ID_DECORATIONS = re.compile(
    r"^(saber|ale)/|(noframeskip|deterministic)?(-v\d+)?$", flags=re.IGNORECASE
)


def normalize_game_key(name: str) -> str:
    """Fold a spelling of a game to a lookup key: ``"SABER/MsPacman"`` -> ``"mspacman"``.

    Removes ``SABER/``, ``ALE/``, ``NoFrameskip``, ``-v5``-style suffixes, case and every
    character that is not a letter or a digit.
    """
    stripped = _ID_DECORATIONS.sub("", name.strip())
    return re.sub(r"[^a-z0-9]", "", stripped.lower())


def read_data_csv(filename: str) -> list[dict[str, str]]:
    """Rows of a CSV file shipped in ``saber/data`` (header keys, string values)."""
    text = resources.files("saber.data").joinpath(filename).read_text(encoding="utf-8")
    return list(csv.DictReader(text.splitlines()))


def game_title(ale_id: str) -> str:
    """A game's title as people write it: ``"space_invaders"`` -> ``"Space Invaders"``.

    Titles come from ``data/game_titles.csv``; a ROM outside it gets its id in words.

    >>> game_title("qbert"), game_title("basic_math")
    ('Q*bert', 'Basic Math')
    """
    return _titles().get(ale_id) or ale_id.replace("_", " ").title()


@functools.lru_cache(maxsize=1)
def _titles() -> dict[str, str]:
    return {row["game"]: row["title"] for row in read_data_csv("game_titles.csv")}


def _number(text: str) -> float | None:
    return None if text.strip().upper() in {"", "NA", "NAN"} else float(text)


def _game_info(ale_id: str, saber: dict[str, str], atari57: dict[str, str]) -> GameInfo:
    """A game from its rows of the two reference tables (``{}``: not in that table)."""
    return GameInfo(
        ale_id=ale_id,
        env_name=ale_id_to_env_name(ale_id),
        title=game_title(ale_id),
        in_saber=bool(saber),
        random=_number(saber.get("random", "")),
        human=_number(saber.get("human_mnih2015", "")),
        world_record=_number(saber.get("world_record", "")),
        world_record_extrapolated=saber.get("world_record_extrapolated") == "true",
        atari57_random=_number(atari57.get("random", "")),
        atari57_human=_number(atari57.get("human_average", "")),
    )


@functools.lru_cache(maxsize=1)
def _games_by_id() -> dict[str, GameInfo]:
    saber_rows = {row["game"]: row for row in read_data_csv("saber_baselines.csv")}
    atari57_rows = {row["game"]: row for row in read_data_csv("atari57_human_random.csv")}
    games = {}
    for ale_id in sorted(saber_rows.keys() | atari57_rows.keys()):
        games[ale_id] = _game_info(ale_id, saber_rows.get(ale_id, {}), atari57_rows.get(ale_id, {}))
    return games


@functools.lru_cache(maxsize=1)
def _ids_by_key() -> dict[str, str]:
    keys = {normalize_game_key(ale_id): ale_id for ale_id in _games_by_id()}
    # A title is a spelling too ("Robot Tank", "River Raid").
    keys.update({normalize_game_key(game.title): ale_id for ale_id, game in _games_by_id().items()})
    keys.update(_ALIASES)
    return keys


def _rom_game(ale_id: str) -> GameInfo:
    """A ROM of ale-py outside the reference tables: no score of any kind."""
    return _game_info(ale_id, {}, {})


@functools.lru_cache(maxsize=1)
def _rom_games_by_key() -> dict[str, GameInfo]:
    """Every single-player ROM of ale-py by lookup key."""
    games = _games_by_id()
    return {
        normalize_game_key(rom_id): games.get(rom_id) or _rom_game(rom_id)
        for rom_id in supported_rom_ids()
    }


def all_games() -> tuple[GameInfo, ...]:
    """Every game with reference scores: the 61 SABER games plus Surround (Atari-57 only).

    The other ROMs of ale-py, which :func:`get_game` also knows, have no reference score.
    """
    return tuple(_games_by_id().values())


def saber_games() -> tuple[GameInfo, ...]:
    """The 61 games of the SABER paper, alphabetical by ROM id."""
    return tuple(game for game in all_games() if game.in_saber)


def atari57_games() -> tuple[GameInfo, ...]:
    """The 57 standard games of the Atari-57 benchmark, alphabetical by ROM id."""
    return tuple(game for game in all_games() if game.in_atari57)


def subset_games(subset: str) -> tuple[GameInfo, ...]:
    """The games of an Atari-N subset (``atari1``, ``atari3``, ``atari5``, ``atari10``, ...)."""
    rows = [row for row in read_data_csv("atari_subsets.csv") if row["subset"] == subset]
    if not rows:
        known = sorted({row["subset"] for row in read_data_csv("atari_subsets.csv")})
        raise UnknownGameError(f"Unknown game subset {subset!r}; known subsets: {', '.join(known)}")
    return tuple(get_game(row["game"]) for row in rows)


@functools.lru_cache(maxsize=1)
def game_sets() -> dict[str, tuple[GameInfo, ...]]:
    """Every named set of games, each in its own order: the Atari-N subsets of
    ``data/atari_subsets.csv`` (``atari1`` ... ``atari10``, ``atari3_val``, ``atari5_val``)
    in the order of that file, ``atari57`` and ``saber61`` (the 61 games of the SABER
    paper) alphabetical by ROM id. Their ids are ``SABER/Atari5``, ..., ``SABER/Saber61``.

    >>> [game.ale_id for game in game_sets()["atari5"]]
    ['battle_zone', 'double_dunk', 'name_this_game', 'phoenix', 'qbert']
    >>> list(game_sets())
    ['atari1', 'atari3', 'atari5', 'atari10', 'atari3_val', 'atari5_val', 'atari57', 'saber61']
    >>> len(game_sets()["atari57"]), len(game_sets()["saber61"])
    (57, 61)
    """
    subsets = dict.fromkeys(row["subset"] for row in read_data_csv("atari_subsets.csv"))
    sets = {name: subset_games(name) for name in subsets}
    sets["atari57"] = atari57_games()
    sets["saber61"] = saber_games()
    return sets


def game_names() -> list[str]:
    """ROM ids of every game with reference scores (:func:`all_games`), for messages and
    completion; :func:`supported_rom_ids` lists every ROM."""
    return list(_games_by_id())


def get_game(name: str) -> GameInfo:
    """Look a game up by any common spelling: one of the 61 SABER games, Surround, or any
    other single-player ROM of ale-py (which has no reference score).

    Args:
        name: ``"ms_pacman"``, ``"MsPacman"``, ``"ms pacman"``, ``"SABER/MsPacman"``,
            ``"ALE/MsPacman-v5"``, ``"MsPacmanNoFrameskip-v4"``, ``"basic_math"``, ...

    Raises:
        UnknownGameError: no game matches; the message names the closest games.
    """
    key = normalize_game_key(name)
    ale_id = _ids_by_key().get(key)
    if ale_id is not None:
        return _games_by_id()[ale_id]
    game = _rom_games_by_key().get(key)
    if game is None:
        raise UnknownGameError(unknown_game_message(name))
    return game


def _all_ids_by_key() -> dict[str, str]:
    keys = {key: game.ale_id for key, game in _rom_games_by_key().items()}
    keys.update(_ids_by_key())
    return keys


def unknown_game_message(name: str) -> str:
    """``Unknown game 'pongg'. Did you mean: pong? ...`` for any misspelled game."""
    ids_by_key = _all_ids_by_key()
    close = difflib.get_close_matches(normalize_game_key(name), list(ids_by_key), n=3, cutoff=0.5)
    suggestions = list(dict.fromkeys(ids_by_key[key] for key in close))
    hint = f" Did you mean: {', '.join(suggestions)}?" if suggestions else ""
    return (
        f"Unknown game {name!r}.{hint} Known games are the single-player ROM ids of ale-py "
        "(saber.games.supported_rom_ids(); the 61 SABER games are saber.games.saber_games()), "
        "in any spelling: ms_pacman, MsPacman, SABER/MsPacman."
    )


def resolve_games(spec: str | list[str] | tuple[str, ...]) -> tuple[GameInfo, ...]:
    """Expand a list of games: names (any ROM of ale-py, in any spelling), or ``all`` (the
    61 SABER games; also ``saber61``), ``atari57``, ``atari5``, ``atari10`` (and the other Atari-N subsets).
    A string is split on commas. Duplicates are dropped, first occurrence kept.
    """
    items = [part.strip() for part in spec.split(",")] if isinstance(spec, str) else list(spec)
    found: dict[str, GameInfo] = {}
    for item in _nonempty(items):
        key = item.lower()
        if key in {"all", "saber", "saber61"}:
            games: tuple[GameInfo, ...] = saber_games()
        elif key == "atari57":
            games = atari57_games()
        elif re.fullmatch(r"atari\d+(_val)?", key):
            games = subset_games(key)
        else:
            games = (get_game(item),)
        for game in games:
            found.setdefault(game.ale_id, game)
    if not found:
        raise UnknownGameError("No games given: name games, or use all, atari57, atari5, atari10.")
    return tuple(found.values())


def _nonempty(items: list[str]) -> Iterator[str]:
    return (item for item in items if item)
