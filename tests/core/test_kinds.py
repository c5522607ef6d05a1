"""The domain's words: ids."""

import subprocess
import sys

from elicitkit._core.kinds import is_id, new_id


def test_ids_are_unguessable_url_safe_and_never_repeat_across_reads_of_the_random_source() -> None:
    ids = [new_id() for _ in range(1000)]  # several reads of the OS's random source
    assert len(set(ids)) == len(ids)
    assert all(len(i) == 22 and is_id(i) and "." not in i for i in ids)
    assert len(set("".join(ids))) == 64  # every character of the URL-safe alphabet turns up: random, not a counter


def test_a_forked_child_makes_ids_of_its_own_not_its_parent_s_next_ones() -> None:
    # In a fresh interpreter: one thread, so the fork is sound on every Python (3.12 warns of forking a threaded one).
    script = """
import os
from elicitkit._core.kinds import new_id
new_id()  # the parent has ids read and not yet handed out
read, write = os.pipe()
if os.fork() == 0:
    os.write(write, new_id().encode())
    os._exit(0)
os.close(write)
child = os.read(read, 100).decode()
os.wait()
print(child, new_id())
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    child, parent = done.stdout.split()
    assert is_id(child) and is_id(parent) and child != parent
