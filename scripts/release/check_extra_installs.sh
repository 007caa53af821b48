#!/usr/bin/env bash
# Each extra installs what its commands need: for every extra named (default: plots, dask,
# video, minari), a fresh venv with saber and that extra alone, as a user installs it
# (pip install ".[EXTRA]" from this checkout), then the commands the extra is for, on a
# tiny run. A missing dependency shows as the command's failure (the minari extra once
# lacked Pillow, which Minari's HDF5 storage imports).
#
# CI runs it as a chain of its own (.ci/run, stage 4): each venv installs saber's
# dependencies anew, mostly unpacking, light on the CPU. The venvs go under $TMPDIR.
#
#   scripts/release/check_extra_installs.sh [EXTRA ...]
set -euo pipefail
cd "$(dirname "$0")/../.."
python="${PYTHON:-python3}"
root="$(mktemp -d)"
trap 'rm -rf "$root"' EXIT
extras=("$@")
if [ "${#extras[@]}" -eq 0 ]; then
    extras=(plots dask video minari)
fi
short=(--games pong --episodes 1 --env-option max_episode_frames=400 --allow-non-saber)
for extra in "${extras[@]}"; do
    venv="$root/$extra"
    work="$root/$extra-work"
    mkdir -p "$work"
    echo "== $extra: pip install \".[$extra]\" into a fresh venv"
    "$python" -m venv "$venv"
    "$venv/bin/pip" install --quiet ".[$extra]"
    saber="$venv/bin/saber"
    case "$extra" in
        plots)
            "$saber" eval --agent noop "${short[@]}" --workers 0 --out "$work/run" --no-report
            "$saber" report "$work/run" --plots "$work/figures" > /dev/null
            ;;
        dask)
            "$saber" eval --agent noop "${short[@]}" --backend dask --workers 1 --out "$work/run" --no-report
            ;;
        video)
            "$saber" eval --agent noop "${short[@]}" --workers 0 --video 1 --out "$work/run" --no-report
            ;;
        minari)
            "$saber" eval --agent noop "${short[@]}" --workers 0 --out "$work/run" --no-report
            MINARI_DATASETS_PATH="$work/datasets" "$saber" export "$work/run"
            ;;
        *)
            echo "no commands known for the extra $extra" >&2
            exit 2
            ;;
    esac
    echo "== $extra: its commands ran"
    rm -rf "$venv" "$work"
done
