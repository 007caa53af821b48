"""Evaluate the random agent on two games under the SABER protocol and print the report.

    python examples/evaluate_random.py [OUT]

Results go to OUT (default: saber-runs/random in your temporary directory, never inside
the repository); run it again and it resumes, running nothing more. A real evaluation
uses episodes=100 (the protocol) and your policy: any callable mapping uint8
observations (n, 4, 84, 84) to n actions, or "mypackage.agents:make_policy".
"""

import sys
import tempfile
from pathlib import Path

from saber.harness import evaluate
from saber.reports import to_markdown

# Worker processes import this script: evaluate must run under the __main__ guard.
if __name__ == "__main__":
    out = (
        Path(sys.argv[1])
        if len(sys.argv) > 1
        else Path(tempfile.gettempdir()) / "saber-runs" / "random"
    )
    result = evaluate("random", "breakout,pong", episodes=4, out=out, progress=True)
    print(
        f"{result.finished} finished, {len(result.failed)} failed, in {result.directory}, {result.seconds:.0f} s"
    )
    print(result.mean_scores())
    print(to_markdown(result.report()))
    sys.exit(1 if result.failed else 0)  # a run with failed episodes is not a success
