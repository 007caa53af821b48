"""Episode videos: the emulator's colour frames, streamed to MP4 (extra ``video``).

Three ways in, one writer (:class:`VideoWriter`, frames piped to ffmpeg one at a time:
memory stays bounded whatever the episode's length, 100 hours included):

* ``saber eval --video K`` / ``evaluate(..., video=K)``: the first K episodes of every
  game, as ``OUT/videos/<game>/episode-<n>.mp4``, **every emulator frame** at 60 fps
  (real time), 160 x 210 colour (the ALE's full screen). Every frame, not every agent
  step, because that is what a human player sees: many Atari games draw some objects
  only on alternate frames (flicker), and a video of every 4th frame can miss them
  entirely. Video frame ``i`` is the screen after emulator frame ``i + 1``, so a video
  holds exactly the episode's ``frames``.

  How, without changing what is played: the harness plays on ale-py's threaded vector
  engine, which returns grayscale only. The episodes to film keep their actions (one
  byte per agent step: at most 5.4 MB for a 100-hour episode); when one ends, its
  actions are replayed from its seed on a fresh ALE, frame by frame, with
  ``getScreenRGB``. The emulator is deterministic given the seed and the actions, and
  the replay checks that it ends at the record's frame with the record's score. The
  run's own env, seeds and policy calls are untouched, so ``episodes.jsonl`` is the same
  with or without videos (tested). A video that cannot be made is listed with its reason
  in ``run.json`` (``video_errors``); it never fails an episode.

* :class:`VideoRecorder`: a wrapper of a single env made with ``render_mode="rgb_array"``,
  one frame per agent step (``env.render()`` after each step, as Gymnasium's
  ``RecordVideo`` does), streamed. Gymnasium's ``RecordVideo`` works too (with
  ``moviepy``), but it keeps the whole episode in memory until it ends: 100 KB per
  step, 2.7 GB for a 30-minute episode.

* :class:`VectorVideoRecorder`: for ``SaberVectorEnv`` (``gymnasium.make_vec``), which
  has no colour frames to render: it mirrors one sub-env on a single SABER env, which
  plays exactly the same episodes for the same seeds and actions (by design, tested),
  and records that.
"""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Generator, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from saber.envs import SaberSettings, saber_settings
from saber.envs.emulator import ALL_ACTIONS, SeedStream, new_ale, rom_path
from saber.envs.rules import correct_rollover, is_rollover
from saber.errors import SaberError
from saber.protocol.settings import FRAMES_PER_SECOND

__all__ = [
    "VIDEOS_DIR",
    "EpisodeFilm",
    "VectorVideoRecorder",
    "VideoRecorder",
    "VideoRequest",
    "VideoWriter",
    "list_video_errors",
    "list_videos",
    "replay_in_steps",
    "replay_to_video",
    "require_video_extra",
    "video_path",
]

VIDEOS_DIR = "videos"  # inside a run directory


def require_video_extra() -> Any:
    """The ``imageio_ffmpeg`` module, or a :class:`SaberError` naming the extra to install."""
    try:
        import imageio_ffmpeg
    except ImportError:
        raise SaberError(
            'Recording videos needs the "video" extra (imageio-ffmpeg): pip install '
            '"saber-ale[video]" or, from a checkout, pip install ".[video]"'
        ) from None
    return imageio_ffmpeg


class VideoWriter:
    """Stream ``uint8`` RGB frames (H, W, 3) into an H.264 MP4 file, one frame at a time.

    The file appears under its name only when :meth:`close` succeeds (until then it is
    ``<name>.partial.mp4``), so a crash never leaves a truncated video that looks whole.

    Args:
        path: the ``.mp4`` file to write (parent folders are created).
        fps: frames per second of playback.
    """

    def __init__(self, path: str | Path, fps: float = FRAMES_PER_SECOND) -> None:
        self._ffmpeg = require_video_extra()
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.partial = self.path.with_name(self.path.stem + ".partial.mp4")
        self.fps = fps
        self.frames = 0
        self._pipe: Any = None
        self._size: tuple[int, int] | None = None

    def write(self, frame: np.ndarray) -> None:
        """Append one frame; every frame must have the first one's size."""
        frame = np.ascontiguousarray(frame, dtype=np.uint8)
        height, width = frame.shape[:2]
        if self._pipe is None:
            self._size = (width, height)
            self._pipe = self._ffmpeg.write_frames(
                str(self.partial),
                self._size,
                fps=self.fps,
                codec="libx264",
                pix_fmt_in="rgb24",
                pix_fmt_out="yuv420p",
                macro_block_size=1,  # keep 160 x 210 as it is (no padding to 16)
                quality=8,  # 0-10: sharp pixel art, still small files
                output_params=["-preset", "veryfast"],
            )
            self._pipe.send(None)  # start ffmpeg
        elif (width, height) != self._size:
            raise ValueError(f"Expect frames of {self._size} (w, h), actually: {(width, height)}")
        self._pipe.send(frame)
        self.frames += 1

    def close(self) -> Path | None:
        """Finish the file; returns its path, or None when no frame was written."""
        if self._pipe is None:
            return None
        self._pipe.close()
        self._pipe = None
        os.replace(self.partial, self.path)
        return self.path

    def abort(self) -> None:
        """Stop without keeping the file."""
        if self._pipe is not None:
            try:
                self._pipe.close()
            finally:
                self._pipe = None
                self.partial.unlink(missing_ok=True)

    def __enter__(self) -> VideoWriter:
        return self

    def __exit__(self, exc_type: object, *rest: object) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


def video_path(directory: str | Path, game: str, episode: int) -> Path:
    """``<run directory>/videos/<game>/episode-<n>.mp4``."""
    return Path(directory) / VIDEOS_DIR / game / f"episode-{episode}.mp4"


def replay_to_video(
    game: str,
    seed: int,
    actions: Iterable[int],
    record: dict[str, Any],
    path: str | Path,
    settings: SaberSettings | None = None,
) -> Path:
    """Replay an episode from its seed and actions, writing every emulator frame in colour.

    :func:`replay_in_steps` with the heartbeats ignored; same arguments.
    """
    for _ in replay_in_steps(game, seed, actions, record, path, settings):
        pass
    return Path(path)


HEARTBEAT_FRAMES = 1_800  # 30 s of play: about a second of replay and encoding


def replay_in_steps(
    game: str,
    seed: int,
    actions: Iterable[int],
    record: dict[str, Any],
    path: str | Path,
    settings: SaberSettings | None = None,
) -> Iterator[int]:
    """Replay an episode from its seed and actions, writing every emulator frame in colour;
    yields the frames written so far every ``HEARTBEAT_FRAMES`` frames.

    Filming a long episode takes long (a 100-hour one: hours); the heartbeats let a
    caller show it is alive (the harness's unit deadline stops a silent worker).

    Args:
        game: ale id.
        seed: the episode's seed (as given to a seeded reset).
        actions: the episode's actions, one per agent step (at least ``record["steps"]``).
        record: the episode's record (``steps``, ``frames``, ``score``): the replay stops
            after ``steps`` agent steps or at game over, and must match ``frames`` and
            ``score``.
        path: the ``.mp4`` file.
        settings: the run's settings (frame skip, sticky actions, rollovers).

    Writes ``path``, holding ``record["frames"]`` frames at 60 fps.

    Raises:
        SaberError: the replay did not reproduce the record (then no file is kept).
    """
    settings = settings or SaberSettings()
    ale = new_ale(settings.repeat_action_probability)
    # The ALE seed of a seeded reset: the same derivation as both SABER envs.
    ale.setInt("random_seed", SeedStream(seed).next_ale_seed())
    ale.loadROM(rom_path(game))
    ale.reset_game()
    height, width = ale.getScreenDims()
    screen = np.empty((height, width, 3), dtype=np.uint8)
    steps, frames, score = int(record["steps"]), 0, 0.0
    with VideoWriter(path) as writer:
        for step, action in enumerate(actions):
            if step == steps or ale.game_over():
                break
            reward = 0
            for _ in range(settings.frame_skip):
                reward += ale.act(ALL_ACTIONS[action])
                frames += 1
                ale.getScreenRGB(screen)
                writer.write(screen)
                if frames % HEARTBEAT_FRAMES == 0:
                    yield frames
                if ale.game_over():
                    break
            if is_rollover(reward, settings.rollover_threshold):
                score += correct_rollover(float(reward), settings.rollover_mode)
            else:
                score += reward
        if (frames, score) != (int(record["frames"]), float(record["score"])):
            raise SaberError(
                f"The replay of {game} episode {record.get('episode')} (seed {seed}) ended at "
                f"frame {frames} with score {score}, not the record's {record['frames']} and "
                f"{record['score']}; no video written. Please report this with the record."
            )


@dataclass(frozen=True)
class VideoRequest:
    """What a worker films: the first ``episodes`` of every game, into ``directory``."""

    directory: str
    episodes: int


class EpisodeFilm:
    """Wraps a policy for one work unit: keeps the actions of the episodes to film, then films.

    The runner tells the policy which rows start which seeded episodes
    (``start_episodes``); this keeps, for the rows playing an episode to film, every
    action the policy returns, and :meth:`finish` replays the episode when its record
    arrives. The wrapped policy sees exactly the calls it would see unwrapped.
    """

    def __init__(
        self,
        policy: Any,
        request: VideoRequest,
        game: str,
        episodes: Iterable[tuple[int, int]],
        overrides: dict[str, Any],
    ) -> None:
        self.policy = policy
        self.request = request
        self.game = game
        self.settings = SaberSettings.from_overrides(**overrides)
        self._wanted = {seed: index for index, seed in episodes if index < request.episodes}
        self._rows: dict[int, tuple[int, int, bytearray]] = {}  # row -> episode, seed, actions

    def start_episodes(self, rows: np.ndarray, seeds: np.ndarray) -> None:
        for row, seed in zip(np.asarray(rows).tolist(), np.asarray(seeds).tolist(), strict=True):
            self._rows.pop(row, None)
            if seed in self._wanted:
                self._rows[row] = (self._wanted[seed], seed, bytearray())
        hook = getattr(self.policy, "start_episodes", None)
        if hook is not None:
            hook(rows, seeds)

    def __call__(self, observations: np.ndarray) -> Any:
        actions = self.policy(observations)
        if self._rows:
            try:
                array = np.asarray(actions)
                for row, (_, _, log) in self._rows.items():
                    log.append(int(array[row]))
            except (IndexError, TypeError, ValueError):
                pass  # not valid actions: the runner's check says so, with the policy's name
        return actions

    def finish(self, record: dict[str, Any]) -> Path | None:
        """Film the episode of ``record`` if it is one to film (after it ended); returns
        the video, or None (not one to film, or see :meth:`filming`)."""
        steps = self.filming(record)
        while True:
            try:
                next(steps)
            except StopIteration as done:
                return done.value  # type: ignore[no-any-return]

    def filming(self, record: dict[str, Any]) -> Generator[int, None, Path | None]:
        """:meth:`finish`, yielding a heartbeat (frames filmed) every ``HEARTBEAT_FRAMES``.

        A video that cannot be made (the replay disagrees with the record, ffmpeg or the
        disk fails) never fails the evaluation: the reason goes to a warning and to
        ``episode-<n>.error.txt`` beside where the video would be, which ``run.json``
        lists under ``video_errors``; the record is already stored, the unit goes on.
        """
        for row, (episode, seed, actions) in list(self._rows.items()):
            if episode == record["episode"]:
                del self._rows[row]
                path = video_path(self.request.directory, self.game, episode)
                note = _error_note(path)
                try:
                    yield from replay_in_steps(
                        self.game, seed, actions, record, path, self.settings
                    )
                except Exception as error:
                    message = f"{type(error).__name__}: {error}"
                    warnings.warn(f"No video of {path}: {message}", RuntimeWarning, stacklevel=2)
                    with contextlib.suppress(OSError):  # the disk may be what failed
                        note.parent.mkdir(parents=True, exist_ok=True)
                        note.write_text(message + "\n", encoding="utf-8")
                    return None
                note.unlink(missing_ok=True)  # filmed now: an earlier session's failure is gone
                return path
        return None


def _error_note(video: Path) -> Path:
    """``episode-<n>.error.txt``: why ``episode-<n>.mp4`` could not be made."""
    return video.with_name(video.stem + ".error.txt")


def list_videos(directory: str | Path) -> list[str]:
    """The videos of a run directory, as paths relative to it, sorted by game and episode."""
    root = Path(directory)
    found = [p for p in (root / VIDEOS_DIR).glob("*/episode-*.mp4") if ".partial" not in p.name]
    found.sort(key=lambda p: (p.parent.name, int(p.stem.split("-")[-1])))
    return [p.relative_to(root).as_posix() for p in found]


def list_video_errors(directory: str | Path) -> list[dict[str, str]]:
    """The videos of a run directory that could not be made: ``{"video", "error"}`` each."""
    root = Path(directory)
    notes = list((root / VIDEOS_DIR).glob("*/episode-*.error.txt"))
    notes.sort(key=lambda p: (p.parent.name, int(p.name.split(".")[0].split("-")[-1])))
    return [
        {
            "video": p.with_name(p.name.replace(".error.txt", ".mp4")).relative_to(root).as_posix(),
            "error": p.read_text(encoding="utf-8").strip(),
        }
        for p in notes
    ]


def video_entries(directory: str | Path) -> dict[str, Any]:
    """The ``run.json`` keys of a run directory's videos: ``videos`` (every video), and
    ``video_errors`` (the videos that could not be made, with why; None when there are
    none, which removes the key). The store writes them (its one writer of ``run.json``)."""
    return {
        "videos": list_videos(directory),
        "video_errors": list_video_errors(directory) or None,
    }


class VideoRecorder(gym.Wrapper):
    """Record episodes of a single env made with ``render_mode="rgb_array"``, streamed to MP4.

    One frame per agent step: the first screen after ``reset``, then ``env.render()``
    after every step, as Gymnasium's ``RecordVideo`` does, but written as it comes (no
    episode held in memory). Files: ``<folder>/<name_prefix>-episode-<n>.mp4``.

    Args:
        env: an env with ``render_mode="rgb_array"``.
        folder: where to write the videos.
        episodes: record the first ``episodes`` episodes (0-based numbering of resets).
        name_prefix: file name prefix.
        fps: playback rate (default: the env's ``render_fps``, else 60 / frame skip).
    """

    def __init__(
        self,
        env: gym.Env,
        folder: str | Path,
        episodes: int = 1,
        name_prefix: str = "saber",
        fps: float | None = None,
    ) -> None:
        super().__init__(env)
        if env.render_mode != "rgb_array":
            raise ValueError(
                f"Expect an env made with render_mode='rgb_array', actually: {env.render_mode!r}"
            )
        require_video_extra()
        self.folder = Path(folder)
        self.episodes = episodes
        self.name_prefix = name_prefix
        self.fps = fps or _step_fps(env)
        self.episode_id = -1
        self.paths: list[Path] = []
        self._writer: VideoWriter | None = None

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        self._finish()
        obs, info = self.env.reset(**kwargs)
        self.episode_id += 1
        if self.episode_id < self.episodes:
            path = self.folder / f"{self.name_prefix}-episode-{self.episode_id}.mp4"
            self._writer = VideoWriter(path, fps=self.fps)
            self._writer.write(self.env.render())
        return obs, info

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        if self._writer is not None:
            self._writer.write(self.env.render())
            if terminated or truncated:
                self._finish()
        return obs, reward, terminated, truncated, info

    def _finish(self) -> None:
        if self._writer is not None:
            path = self._writer.close()
            self._writer = None
            if path is not None:
                self.paths.append(path)

    def close(self) -> None:
        self._finish()
        super().close()


def _step_fps(env: gym.Env) -> float:
    try:
        return FRAMES_PER_SECOND / saber_settings(env).frame_skip
    except TypeError:
        return float(env.metadata.get("render_fps") or 30)


class VectorVideoRecorder(gym.vector.VectorWrapper):
    """Record episodes of one sub-env of a SABER vector env (``gymnasium.make_vec``).

    ``SaberVectorEnv`` emulates in ale-py's threaded engine, which has grayscale screens
    only. This wrapper replays sub-env ``row`` on a single SABER env with
    ``render_mode="rgb_array"``, seeded and stepped as that sub-env is (the two envs
    play the same episodes, by design and by test), and records it with
    :class:`VideoRecorder`: one frame per agent step. It costs one more emulator.

    Args:
        env: a ``SaberVectorEnv`` (NEXT_STEP or DISABLED autoreset).
        folder: where to write the videos.
        episodes: record the first ``episodes`` episodes of the sub-env.
        row: the sub-env to record.
        name_prefix: file name prefix.
    """

    def __init__(
        self,
        env: gym.vector.VectorEnv,
        folder: str | Path,
        episodes: int = 1,
        row: int = 0,
        name_prefix: str = "saber",
    ) -> None:
        super().__init__(env)
        unwrapped = env.unwrapped
        game = getattr(unwrapped, "rom_id", None)
        if game is None:
            raise TypeError(
                f"Expect a SaberVectorEnv (gymnasium.make_vec('SABER/<Game>', n)), actually: "
                f"{type(unwrapped).__name__}; for Gymnasium's Sync/AsyncVectorEnv use "
                "gymnasium.wrappers.vector.RecordVideo"
            )
        if not 0 <= row < env.num_envs:
            raise ValueError(f"Expect `row` in [0, {env.num_envs}), actually: {row}")
        from saber.envs.factory import make_env

        settings = saber_settings(env)
        overrides = {name: value for name, (_, value) in settings.deviations().items()}
        shadow = make_env(game, render_mode="rgb_array", **overrides)
        self.recorder = VideoRecorder(shadow, folder, episodes, f"{name_prefix}-env-{row}")
        self.row = row
        self._ended = True  # no episode running in the shadow yet

    @property
    def paths(self) -> list[Path]:
        """The videos written so far."""
        return self.recorder.paths

    def reset(
        self, *, seed: Any = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(seed=seed, options=options)
        mask = (options or {}).get("reset_mask")
        if mask is None or bool(np.asarray(mask)[self.row]):
            self._reset_shadow(_row_seed(seed, self.row, mask))
        return obs, info

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        obs, rewards, terminated, truncated, info = self.env.step(actions)
        autoreset = self.env.unwrapped.autoreset_mode == gym.vector.AutoresetMode.NEXT_STEP
        if self._ended and autoreset:
            self._reset_shadow(None)  # the vector env reset this row, without a seed
        else:
            _, _, done, cut, mirror = self.recorder.step(int(np.asarray(actions)[self.row]))
            self._ended = bool(done or cut)
            frame = int(np.asarray(info["episode_frame_number"])[self.row])
            if (mirror["episode_frame_number"], self._ended) != (
                frame,
                bool(terminated[self.row] or truncated[self.row]),
            ):
                raise RuntimeError(
                    f"The recording of sub-env {self.row} no longer follows it (frame "
                    f"{mirror['episode_frame_number']} vs {frame}): was the vector env reset "
                    "or stepped around this wrapper?"
                )
        return obs, rewards, terminated, truncated, info

    def _reset_shadow(self, seed: int | None) -> None:
        self.recorder.reset(seed=seed)
        self._ended = False

    def close(self, **kwargs: Any) -> None:
        self.recorder.close()
        super().close(**kwargs)


def _row_seed(seed: Any, row: int, mask: Any) -> int | None:
    """The seed the vector env gives sub-env ``row``: seeds go to the reset rows in order."""
    if seed is None:
        return None
    index = row if mask is None else int(np.count_nonzero(np.asarray(mask)[:row]))
    if isinstance(seed, (int, np.integer)):
        return int(seed) + index
    return int(np.asarray(seed)[index])
