"""Evaluate the random agent on two games under the SABER protocol and print the report.

    python examples/evaluate_random.py

Results go to runs/random (run it again: it resumes, and runs nothing more). A real
evaluation uses episodes=100 (the protocol) and your policy: any callable mapping uint8
observations (n, 4, 84, 84) to n actions, or "mypackage.agents:make_policy".
"""

from saber.harness import evaluate
from saber.reports import to_markdown

# Worker processes import this script: evaluate must run under the __main__ guard.
if __name__ == "__main__":
    result = evaluate("random", "breakout,pong", episodes=4, out="runs/random", progress=True)
    print(f"{len(result.records)} episodes in {result.directory}, {result.seconds:.0f} s")
    print(result.mean_scores())
    print(to_markdown(result.report()))
