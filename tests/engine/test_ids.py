"""Ids (``engine.new_id``): 128 random bits as 32 hex characters, never repeated across batches,
threads or a fork (the random bytes are read 64 ids at a time)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from engine._events import new_id


def test_ids_are_32_hex_characters_and_unique_across_many_batches():
    ids = [new_id() for _ in range(5_000)]
    assert all(re.fullmatch(r"[0-9a-f]{32}", i) for i in ids)
    assert len(set(ids)) == len(ids)


def test_threads_taking_ids_at_once_never_share_one():
    taken: list[list[str]] = [[] for _ in range(8)]
    start = threading.Barrier(len(taken))

    def take(into: list[str]) -> None:
        start.wait()
        into.extend(new_id() for _ in range(3_000))

    threads = [threading.Thread(target=take, args=(into,)) for into in taken]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    every = [i for into in taken for i in into]
    assert len(every) == 24_000
    assert len(set(every)) == len(every)


FORK_CHECK = """
import os
from engine._events import new_id

new_id()  # a batch is under way: the child inherits its remaining ids
read, write = os.pipe()
pid = os.fork()
if pid == 0:
    os.write(write, "".join(new_id() for _ in range(10)).encode())
    os._exit(0)
os.close(write)
os.waitpid(pid, 0)
with os.fdopen(read) as pipe:
    text = pipe.read()
child = {text[at : at + 32] for at in range(0, len(text), 32)}
parent = {new_id() for _ in range(10)}
print(len(child), len(child & parent))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_does_not_repeat_its_parents_ids():
    # In a fresh interpreter: forking pytest's own process (which may run threads) is unsafe.
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", FORK_CHECK], cwd=root, capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["10", "0"]  # ten ids from the child, none of them the parent's
