"""The benchmarks' harness: a suite's modes, interleaved rounds, timing, and its result
file, which scripts/docs/measurements_pages.py renders into docs/measurements/.

A suite records its figures through this module: ``add_options`` adds ``--results PATH``
(default ``benchmarks/results/<name>.json``; ``-`` writes none) and ``--note TEXT`` (what
else ran on the machine, and anything else a reader of the figures should know) to the
suite's options; ``Measurement`` prints each table as it records it and writes one file
at the end with the conditions of the run beside the figures:

- ``machine``: the CPU model, cores, memory, GPU (when ``nvidia-smi`` names one), OS and Python;
- ``commands``: the command line, without ``--results`` and ``--note``;
- ``date``: when the run started and ended, in UTC;
- ``code``: saber's version and the git commit measured;
- ``note``: the ``--note`` given;
- ``source``: "written by the benchmark" (files written by hand say how they were obtained);
- ``blocks``: the figures, tables and short texts, in the order recorded;
- ``data``: the raw numbers behind them, where the benchmark keeps them (not rendered).

A re-run replaces the file of the same name, so ``git diff benchmarks/results/`` shows what
changed; ``python scripts/docs/measurements_pages.py`` then renders the pages again.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
WRITTEN = "written by the benchmark"
_OWN_OPTIONS = ("--results", "--note")  # options about the file, not the measurement
T = TypeVar("T")


def interleaved(
    sides: Mapping[str, Callable[[], T]], rounds: int, label: str | None = None
) -> dict[str, list[T]]:
    """Each side's results of ``rounds`` rounds, every side once a round, their order
    reversed every other round, so that machine noise and drift hit every side alike;
    with a ``label``, each round's results are printed under it."""
    results: dict[str, list[T]] = {name: [] for name in sides}
    for round_ in range(rounds):
        for name in list(sides) if round_ % 2 == 0 else list(reversed(sides)):
            results[name].append(sides[name]())
        if label is not None:
            shown = ", ".join(f"{name} {results[name][-1]:.0f}" for name in sides)
            print(f"{label}: {shown}", flush=True)
    return results


def spread(ratios: Sequence[float]) -> str:
    """``median x [min-max]`` of per-round ratios."""
    return f"{statistics.median(ratios):.2f}x [{min(ratios):.2f}-{max(ratios):.2f}]"


def cpu_seconds(children: bool = False) -> float:
    """CPU seconds (user + system, every thread) of this process, and with ``children`` of
    its reaped child processes too."""
    whom = [resource.RUSAGE_SELF] + ([resource.RUSAGE_CHILDREN] if children else [])
    return sum(usage.ru_utime + usage.ru_stime for usage in map(resource.getrusage, whom))


def timed(
    commands: Sequence[Sequence[str]], env: Mapping[str, str], cwd: Path
) -> tuple[float, float, list[str]]:
    """Run ``commands`` at once: (wall seconds until all exit, their CPU seconds, their
    stdouts). A command that fails ends the benchmark with its stderr's tail."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    processes = [
        subprocess.Popen(
            list(command),
            cwd=cwd,
            env=dict(env),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for command in commands
    ]
    outputs = []
    for process, command in zip(processes, commands, strict=True):
        out, err = process.communicate()
        if process.returncode:
            sys.exit(f"failed ({process.returncode}): {' '.join(command)}\n{err[-3000:]}")
        outputs.append(out)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, outputs


def run_modes(modes: Mapping[str, tuple[Callable[[list[str]], None], str]], doc: str) -> None:
    """Run the suite's mode named by the first argument, with the arguments after it; with
    none or ``--help``, list the modes; an unknown mode exits 1 with one line."""
    argv = sys.argv[1:]
    if argv and argv[0] in modes:
        modes[argv[0]][0](argv[1:])
        return
    if argv and argv[0] not in ("-h", "--help"):
        raise SystemExit(f"unknown mode {argv[0]!r}: use one of {', '.join(modes)}")
    width = max(len(name) for name in modes)
    listed = [f"  {name:{width}}  {summary}" for name, (_, summary) in modes.items()]
    print("\n".join([doc.strip(), "", "modes (MODE --help for each):", *listed]))


def add_options(parser: argparse.ArgumentParser, name: str) -> None:
    """Add ``--results`` (default ``benchmarks/results/<name>.json``) and ``--note``."""
    parser.add_argument(
        "--results",
        default=None,
        metavar="PATH",
        help=f"write the result file here (default: benchmarks/results/{name}.json; "
        "'-' writes none)",
    )
    parser.add_argument(
        "--note",
        default="",
        help="what else ran on the machine, and anything else a reader should know "
        "(written beside the figures)",
    )
    parser.set_defaults(results_name=name)


def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory_gib() -> float | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError, AttributeError):
        return None


def _gpus() -> list[str]:
    if shutil.which("nvidia-smi") is None:
        return []
    done = subprocess.run(
        ["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
        capture_output=True,
        text=True,
        check=False,
    )
    return (
        [line.strip() for line in done.stdout.splitlines() if line.strip()]
        if done.returncode == 0
        else []
    )


def machine() -> str:
    """The machine in one line: CPU, cores, memory, GPUs, OS, Python."""
    parts = [f"{_cpu_model()}, {os.cpu_count()} cores"]
    memory = _memory_gib()
    if memory is not None:
        parts.append(f"{memory:.0f} GiB memory")
    parts += _gpus()
    parts.append(f"{platform.system()} {platform.release()}, Python {platform.python_version()}")
    return "; ".join(parts)


def code() -> str:
    """saber's version, and the git commit measured (with a mark if the tree differs)."""
    from saber import __version__

    described = f"saber {__version__}"

    def git(*command: str) -> str | None:
        try:
            done = subprocess.run(
                ["git", "-C", str(ROOT), *command], capture_output=True, text=True, check=False
            )
        except OSError:
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    commit = git("rev-parse", "--short", "HEAD")
    if commit:
        changed = git(
            "status", "--porcelain", "--untracked-files=no", "--", "saber", "benchmarks/*.py"
        )
        described += f", commit {commit}" + (" with uncommitted changes" if changed else "")
    return described


def command(argv: Sequence[str] | None = None) -> str:
    """The command line as a reader would type it, without ``--results`` and ``--note``."""
    argv = list(sys.argv if argv is None else argv)
    script = Path(argv[0]).resolve()
    shown = script.relative_to(ROOT) if script.is_relative_to(ROOT) else Path(argv[0])
    words = ["python", shown.as_posix()]
    rest = iter(argv[1:])
    for word in rest:
        if word in _OWN_OPTIONS:
            next(rest, None)
        elif not word.startswith(tuple(option + "=" for option in _OWN_OPTIONS)):
            words.append(word)
    return " ".join(shlex.quote(word) for word in words)


def _when(start: datetime, end: datetime) -> str:
    if start.date() == end.date():
        return f"{start:%Y-%m-%d %H:%M}-{end:%H:%M} UTC"
    return f"{start:%Y-%m-%d %H:%M} UTC - {end:%Y-%m-%d %H:%M} UTC"


class Measurement:
    """The figures of one benchmark run, recorded in order, then written as one result file.

    Args:
        args: the parsed options, with ``results`` and ``note`` (see :func:`add_options`).
        page: the measurement page it belongs to (a key of ``benchmarks/results/pages.json``).
        order: its place on that page (results sort by it).
        title: its heading on the page.
        benchmark: the benchmark's file (``__file__``).
        name: the default file's name, where a mode of the benchmark measures something
            else than its default (``benchmarks/results/<name>.json``; default: the name
            given to :func:`add_options`).
    """

    def __init__(
        self,
        args: argparse.Namespace,
        *,
        page: str,
        order: int,
        title: str,
        benchmark: str,
        name: str | None = None,
    ) -> None:
        self.results: str = args.results or str(RESULTS / f"{name or args.results_name}.json")
        self.note: str = args.note
        self.page = page
        self.order = order
        self.title = title
        path = Path(benchmark).resolve()
        self.benchmark = (path.relative_to(ROOT) if path.is_relative_to(ROOT) else path).as_posix()
        self.started = _utc_now()
        self.blocks: list[dict[str, Any]] = []
        self.data: dict[str, Any] = {}

    def text(self, text: str) -> None:
        """Record (and print) a short text: what a table shows, a figure that is no table."""
        print(text, flush=True)
        self.blocks.append({"text": text})

    def table(
        self, columns: Sequence[str], rows: Sequence[Sequence[object]], align: Sequence[str] = ()
    ) -> None:
        """Record (and print) a table; ``align`` is "left" or "right" per column (default:
        the first left, the others right). Cells are kept as the strings printed."""
        aligns = list(align) or ["left"] + ["right"] * (len(columns) - 1)
        if len(aligns) != len(columns):
            raise ValueError(f"{len(aligns)} alignments for {len(columns)} columns")
        cells = [[str(cell) for cell in row] for row in rows]
        for row in cells:
            if len(row) != len(columns):
                raise ValueError(f"a row of {len(row)} cells under {len(columns)} columns: {row}")
        rule = ["---:" if a == "right" else "---" for a in aligns]
        for line in (list(columns), rule, *cells):
            print("| " + " | ".join(line) + " |")
        print(flush=True)
        self.blocks.append({"table": {"columns": list(columns), "align": aligns, "rows": cells}})

    def result(self, argv: Sequence[str] | None = None) -> dict[str, Any]:
        """The result file's content, in the layout scripts/docs/measurements_pages.py reads."""
        result: dict[str, Any] = {
            "page": self.page,
            "order": self.order,
            "title": self.title,
            "benchmark": self.benchmark,
            "commands": [command(argv)],
            "machine": machine(),
            "date": _when(self.started, _utc_now()),
            "code": code(),
            "source": WRITTEN,
            "blocks": self.blocks,
        }
        if self.note:
            result["note"] = self.note
        if self.data:
            result["data"] = self.data
        return result

    def write(self, argv: Sequence[str] | None = None) -> Path | None:
        """Write the result file (unless ``--results -``) and say where; return its path."""
        if self.results == "-":
            return None
        path = Path(self.results)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.result(argv), indent=1) + "\n", encoding="utf-8")
        print(
            f"wrote {path}; render the pages: python scripts/docs/measurements_pages.py", flush=True
        )
        return path
