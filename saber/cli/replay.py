"""``saber replay``: play a recorded episode again from its replay; film it."""

from __future__ import annotations

from pathlib import Path

import click

from saber.cli.errors import refuse_overwrite, saber_errors_as_messages, writing_results
from saber.cli.options import force_option, output_file
from saber.errors import counted


@click.command("replay")
@click.argument(
    "run_dir", metavar="RUN", type=click.Path(exists=True, file_okay=False, path_type=Path)
)
@click.option("--game", required=True, help="The game (any spelling).")
@click.option("--episode", required=True, type=click.IntRange(min=0), help="The episode's index.")
@output_file(
    "--video",
    "video_out",
    "Film the episode into this MP4 file: every emulator frame in colour, 60 fps "
    '(needs pip install "saber-ale[video]").',
)
@force_option
@saber_errors_as_messages
def replay_command(
    run_dir: Path, game: str, episode: int, video_out: Path | None, force: bool
) -> None:
    """Play a recorded episode of RUN again from its replay; with --video, film it.

    Without --video, prints the episode's record and what its replay holds. The replay
    must reproduce the record (as saber verify checks), or nothing is written.
    """
    from saber.replay import recorded_episode

    refuse_overwrite([video_out], force)
    recorded = recorded_episode(run_dir, game, episode)
    header = recorded.replay.header
    record = recorded.record
    click.echo(
        f"{header.game} episode {header.episode}: seed {header.seed}, {counted(header.steps, 'step')}, "
        f"score {record.get('score')}, {record.get('frames')} frames, end {record.get('end')} "
        f"(recorded with saber {header.versions.get('saber', '?')}, ale-py "
        f"{header.versions.get('ale_py', '?')})"
    )
    if video_out is None:
        return
    from saber.training.video import film_replay
    from saber.training.video_writer import require_video_extra

    require_video_extra()
    with writing_results():
        for _ in film_replay(recorded.replay, video_out, record):
            pass  # a failure leaves no file under video_out (VideoWriter)
    click.echo(f"wrote {video_out}", err=True)
