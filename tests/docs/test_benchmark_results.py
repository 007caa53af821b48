"""The benchmarks write their result files themselves (benchmarks/_results.py), in the layout
scripts/docs/measurements_pages.py renders: a file written by the writer becomes a section of its
measurement page, with its machine, command, note, date, code and figures."""

from __future__ import annotations

import argparse
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.script_modules import load_script

ROOT = Path(__file__).resolve().parents[2]


WRITER = load_script("_results", ROOT / "benchmarks" / "_results.py")
PAGES = load_script("measurements_pages", ROOT / "scripts" / "docs" / "measurements_pages.py")
BENCHMARK = ROOT / "benchmarks" / "vector_speed.py"


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    WRITER.add_options(parser, "multigame")
    return parser.parse_args(list(argv))


def test_a_written_result_renders_as_a_section_of_its_page(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "results"
    results.mkdir()
    shutil.copy(PAGES.RESULTS / "pages.json", results / "pages.json")
    path = results / "multigame.json"
    argv = [
        str(BENCHMARK),
        "games",
        "--quick",
        "--results",
        str(path),
        "--note=a PPO training on 2 cores",
    ]
    args = _args(*argv[2:])
    measurement = WRITER.Measurement(
        args, page="envs", order=100, title="Many games in one vector env", benchmark=str(BENCHMARK)
    )
    measurement.text("Side by side, random actions:")
    measurement.table(["games", "steps/s"], [["Atari-5", "205"], ["Atari-57", 21.1]])
    assert measurement.write(argv) == path
    printed = capsys.readouterr().out
    assert "| games | steps/s |\n| --- | ---: |\n| Atari-5 | 205 |\n| Atari-57 | 21.1 |" in printed

    result = json.loads(path.read_text(encoding="utf-8"))
    assert result["commands"] == ["python benchmarks/vector_speed.py games --quick"]
    assert result["source"] == "written by the benchmark"
    assert result["note"] == "a PPO training on 2 cores"
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d-\d\d:\d\d UTC", result["date"])
    assert result["code"].startswith("saber ")
    assert f"{__import__('os').cpu_count()} cores" in result["machine"]

    page = PAGES.render(results, tmp_path / "pages")[tmp_path / "pages" / "envs.md"]
    section = page[page.index("## Many games in one vector env") :]
    assert section == "\n".join(
        [
            "## Many games in one vector env",
            "",
            "- **Benchmark:** `benchmarks/vector_speed.py`",
            "- **Command:** `python benchmarks/vector_speed.py games --quick`",
            f"- **Machine:** {result['machine']}",
            "- **Note:** a PPO training on 2 cores",
            f"- **When:** {result['date']}",
            f"- **Code:** {result['code']}",
            "- **Source:** written by the benchmark",
            "",
            "Side by side, random actions:",
            "",
            "| games | steps/s |",
            "| --- | ---: |",
            "| Atari-5 | 205 |",
            "| Atari-57 | 21.1 |",
            "",
        ]
    )


def test_the_default_file_is_the_benchmarks_own_and_a_dash_writes_none() -> None:
    def measurement(*argv: str, name: str | None = None) -> Any:
        return WRITER.Measurement(
            _args(*argv), page="envs", order=1, title="t", benchmark=str(BENCHMARK), name=name
        )

    results = ROOT / "benchmarks" / "results"
    assert measurement().results == str(results / "multigame.json")
    assert measurement(name="multigame-startup").results == str(results / "multigame-startup.json")
    assert measurement("--results", "x.json", name="other").results == "x.json"
    assert measurement("--results", "-").write([str(BENCHMARK), "--results", "-"]) is None


def test_the_command_keeps_the_measurements_options_and_drops_the_files() -> None:
    argv = [
        str(BENCHMARK),
        "games",
        "--note",
        "idle",
        "--rounds",
        "3",
        "--results=/tmp/x.json",
        "--games",
        "a b",
    ]
    assert (
        WRITER.command(argv) == "python benchmarks/vector_speed.py games --rounds 3 --games 'a b'"
    )


def test_a_row_of_the_wrong_width_is_refused_when_recorded() -> None:
    measurement = WRITER.Measurement(
        _args("--results", "-"), page="envs", order=1, title="t", benchmark=str(BENCHMARK)
    )
    with pytest.raises(ValueError, match="a row of 1 cells under 2 columns"):
        measurement.table(["a", "b"], [["1"]])


def _benchmarks_named_by_results() -> list[str]:
    named = set()
    for path in PAGES.RESULTS.glob("*.json"):
        if path.name == "pages.json":
            continue
        result = json.loads(path.read_text(encoding="utf-8"))
        commands = " ".join(result.get("commands") or [])
        named.update(re.findall(r"\bpython (benchmarks/\w+\.py)", commands))
        if result.get("benchmark"):
            named.add(result["benchmark"])
    return sorted(named)


@pytest.mark.parametrize("benchmark", _benchmarks_named_by_results())
def test_every_benchmark_a_page_shows_writes_its_result_file(benchmark: str) -> None:
    source = (ROOT / benchmark).read_text(encoding="utf-8")
    assert "add_options(" in source and ".write(" in source, (
        f"{benchmark} is shown on a measurement page but does not write its result file "
        "(benchmarks/_results.py)"
    )


def test_interleaved_rounds_reverse_the_sides_order_every_other_round() -> None:
    calls: list[str] = []

    def side(name: str) -> Any:
        return lambda: calls.append(name) or len(calls)

    results = WRITER.interleaved({"a": side("a"), "b": side("b"), "c": side("c")}, 3)
    assert calls == ["a", "b", "c", "c", "b", "a", "a", "b", "c"]
    assert results == {"a": [1, 6, 7], "b": [2, 5, 8], "c": [3, 4, 9]}
    assert WRITER.spread([1.0, 0.9, 1.25]) == "1.00x [0.90-1.25]"


def test_a_suite_runs_the_mode_named_and_refuses_another_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ran: list[list[str]] = []
    modes = {"games": (ran.append, "many games"), "profile": (ran.append, "a step's time")}
    monkeypatch.setattr("sys.argv", ["vector_speed.py", "games", "--quick"])
    WRITER.run_modes(modes, "The vector env.")
    assert ran == [["--quick"]]
    monkeypatch.setattr("sys.argv", ["vector_speed.py", "--help"])
    WRITER.run_modes(modes, "The vector env.")
    assert capsys.readouterr().out.splitlines()[-2:] == [
        "  games    many games",
        "  profile  a step's time",
    ]
    monkeypatch.setattr("sys.argv", ["vector_speed.py", "game"])
    with pytest.raises(SystemExit, match=r"^unknown mode 'game': use one of games, profile$"):
        WRITER.run_modes(modes, "The vector env.")
