#!/usr/bin/env python3
"""Reads gdb's `thread apply all bt` of a hung test process (demangled) and prints each distinct
stack once, with how many threads share it: threads idle in an event loop or a pool's wait are
counted, not printed. What is left is what the process was waiting on."""
import re
import sys

threads, current = [], None
for line in open(sys.argv[1], errors="replace"):
    if line.startswith("Thread "):
        current = {"name": line.strip(), "frames": []}
        threads.append(current)
    elif current is not None and line.startswith("#"):
        m = re.match(r"#\d+\s+(?:0x[0-9a-f]+ in )?(.+?)(?: \(.*?\))?(?: at (\S+))?(?: from \S+)?$", line.strip())
        if m:
            where = m.group(2)
            current["frames"].append(m.group(1)[:160] + (f"  [{where.split('/')[-1]}]" if where else ""))

IDLE = ("epoll_wait", "SelectableEventLoop.run", "swift_task_asyncMainDrainQueue")
groups = {}
for thread in threads:
    key = tuple(thread["frames"][:24])
    groups.setdefault(key, []).append(thread["name"])
idle = 0
print(f"{len(threads)} threads, {len(groups)} distinct stacks")
for frames, names in sorted(groups.items(), key=lambda item: -len(item[1])):
    text = " ".join(frames)
    herald = "Herald" in text
    if not herald and (any(word in text for word in IDLE) or "pthread_cond_wait" in text or not frames):
        idle += len(names)
        continue
    print(f"\n{len(names)} thread(s), e.g. {names[0][:80]}")
    for frame in frames:
        print("   ", frame)
print(f"\n{idle} more threads idle (event loops, pools waiting for work)")
