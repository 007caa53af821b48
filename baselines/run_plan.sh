#!/usr/bin/env bash
# Train (or resume) every run of the plans in baselines/README.md, in its order; a finished
# run (its summary.json says all its 2,442 updates are done) is skipped. Stop it with SIGTERM:
# the run in progress checkpoints and exits 143, and this script stops with it.
#   bash baselines/run_plan.sh            # PYTHON=... to choose the interpreter
set -euo pipefail
cd "$(dirname "$0")/.."
python="${PYTHON:-python}"
runs=(
    "Breakout 1" "Qbert 1" "BattleZone 1" "DoubleDunk 1" "NameThisGame 1" "Phoenix 1"
    "Breakout 2" "Breakout 3" "Qbert 2" "Qbert 3"
    "BattleZone 2" "DoubleDunk 2" "NameThisGame 2" "Phoenix 2"
    "BattleZone 3" "DoubleDunk 3" "NameThisGame 3" "Phoenix 3"
    # What SABER costs: runs 17-20, each a training setup that is not SABER.
    "Breakout 1 lifeloss" "Qbert 1 lifeloss" "Breakout 1 cleanrl" "Qbert 1 cleanrl"
)
for run in "${runs[@]}"; do
    read -r game seed setup <<<"$run"
    name="$(echo "$game" | tr '[:upper:]' '[:lower:]')"
    options=()
    if [ -n "$setup" ]; then
        name="$name-$setup"
        options=(--setup "$setup" --allow-non-saber)
    fi
    out="baselines/runs/ppo-$name-$seed"
    if [ -f "$out/summary.json" ] && [ ! -f "$out/checkpoint.pt.partial" ] \
        && "$python" -c "import json,sys; sys.exit(json.load(open(sys.argv[1]))['iterations'] < 2442)" "$out/summary.json"; then
        echo "$out: done"
        continue
    fi
    echo "$out: training"
    "$python" examples/ppo_saber.py --game "$game" --seed "$seed" "${options[@]}" --out "$out"
done
