"""The quick probe's verdicts kept on disk (saber.check.verdicts): a pass skips the probe
under the same key, and nothing else does."""

from __future__ import annotations

import json

import pytest

from saber.check import gate, verdicts
from saber.errors import ProtocolError

# A frame skip of 3: the probe fails it (its settings check is not run by the gate).
FAILING = {"frame_skip": 3}


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A fresh verdict folder, and the gate's in-process memory forgotten around the test."""
    monkeypatch.setenv("SABER_CACHE_DIR", str(tmp_path))
    gate._require_once.cache_clear()
    yield tmp_path
    gate._require_once.cache_clear()


def probed(monkeypatch) -> list[str]:
    """Record each probe the gate really runs (it still runs)."""
    calls: list[str] = []
    real = gate.require_saber

    def spy(factory, target):
        calls.append(target)
        return real(factory, target)

    monkeypatch.setattr(gate, "require_saber", spy)
    return calls


def test_a_pass_is_kept_and_the_next_run_skips_the_probe(cache, monkeypatch):
    calls = probed(monkeypatch)
    gate.require_saber_env({"clip_rewards": True})
    assert calls == ["saber env of pong"]
    [kept] = cache.glob("quick-probe-*.json")
    assert json.loads(kept.read_text())["verdict"] == "passed"

    gate._require_once.cache_clear()  # as a new process would start
    gate.require_saber_env({"clip_rewards": True})
    assert calls == ["saber env of pong"]
    # Other settings are another key: probed.
    gate.require_saber_env()
    assert len(calls) == 2 and len(list(cache.glob("quick-probe-*.json"))) == 2


def test_a_failure_is_not_kept_and_is_probed_again(cache, monkeypatch):
    calls = probed(monkeypatch)
    for _ in range(2):
        gate._require_once.cache_clear()
        with pytest.raises(ProtocolError, match="does not behave as SABER"):
            gate.require_saber_env(FAILING)
    assert len(calls) == 2 and not list(cache.glob("quick-probe-*.json"))


def test_a_damaged_or_foreign_file_is_no_pass(cache, monkeypatch):
    key = verdicts.probe_key("pong", "{}")
    path = cache / f"quick-probe-{key}.json"
    for content in ("{not json", json.dumps({"key": "other", "verdict": "passed"})):
        path.write_text(content)
        assert not verdicts.was_passed(key)
    calls = probed(monkeypatch)
    gate.require_saber_env()
    assert calls and verdicts.was_passed(key)


def test_the_key_follows_saber_source_and_settings(monkeypatch):
    key = verdicts.probe_key("pong", "{}")
    assert key == verdicts.probe_key("pong", "{}")
    assert key != verdicts.probe_key("pong", '{"clip_rewards": true}')
    monkeypatch.setattr(verdicts, "_source_digest", lambda: "an edited checkout")
    assert key != verdicts.probe_key("pong", "{}")


@pytest.mark.parametrize("library", ["ale_py", "numpy", "gymnasium", "cv2"])
def test_the_key_follows_each_librarys_version(monkeypatch, library):
    key = verdicts.probe_key("pong", "{}")
    real = verdicts.installed_version

    def upgraded(module, *distributions):
        return "99.0" if module == library else real(module, *distributions)

    monkeypatch.setattr(verdicts, "installed_version", upgraded)
    assert key != verdicts.probe_key("pong", "{}")


@pytest.mark.parametrize("variable", ["SABER_CACHE_DIR", "ALE_ROMS_DIR"])
def test_nothing_is_kept_when_off_or_with_roms_from_elsewhere(cache, monkeypatch, variable):
    if variable == "SABER_CACHE_DIR":
        monkeypatch.setenv("SABER_CACHE_DIR", "off")
    else:
        from saber.envs.emulator import rom_path

        monkeypatch.setenv("ALE_ROMS_DIR", str(rom_path("pong").parent))
        rom_path.cache_clear()
    assert verdicts.probe_key("pong", "{}") is None
    calls = probed(monkeypatch)
    for _ in range(2):
        gate._require_once.cache_clear()
        gate.require_saber_env()
    assert len(calls) == 2 and not list(cache.glob("*"))


def test_a_folder_that_cannot_be_written_only_means_probing(tmp_path, monkeypatch):
    blocker = tmp_path / "a file"
    blocker.write_text("")
    monkeypatch.setenv("SABER_CACHE_DIR", str(blocker / "saber"))  # under a file: no folder
    gate._require_once.cache_clear()
    try:
        gate.require_saber_env()
    finally:
        gate._require_once.cache_clear()
    assert verdicts.probe_key("pong", "{}") is not None and not (blocker / "saber").exists()
