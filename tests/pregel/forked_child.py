"""Waiting for a forked test child without letting a hang stall the suite."""

from __future__ import annotations

import os
import time

import pytest


def wait_for_child(pid: int, hung: str, seconds: float = 60) -> int:
    """The exit code of child ``pid``; a child still running after ``seconds`` is
    killed and the test fails with ``hung`` (what the child must have been stuck on)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.05)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    pytest.fail(hung)
