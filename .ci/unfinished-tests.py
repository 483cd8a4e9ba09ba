#!/usr/bin/env python3
"""Reads swift test's output and prints the tests that started and did not finish (for a run
that was stopped at its time limit: the tests that hung)."""
import re
import sys

started, finished = [], set()
for line in open(sys.argv[1], errors="replace"):
    m = re.search(r"◇ Test (.+?) started\.$", line.rstrip())
    if m and m.group(1) != "run" and not m.group(1).startswith("case "):
        started.append(m.group(1))
    m = re.search(r"[✔✘➜↷] Test (.+?)(?: with \d+ test cases?)? (?:passed after|failed after|was cancelled|skipped[.:])", line)
    if m:
        finished.add(m.group(1))
left = [name for name in started if name not in finished]
print(f"{len(left)} tests started and did not finish:" if left else "no test was left running")
for name in left:
    print("  ", name)
