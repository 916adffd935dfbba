"""The run loop as a sans-I/O state machine.

:meth:`Loop.drive` is a generator. It makes every scheduling decision itself (what to
load, which tasks run, how writes are committed, what is checkpointed and streamed,
when to stop) and *yields effects* for the things it cannot do without I/O: loading
and saving checkpoints, writing pending writes, reading and writing the node cache,
and executing a step's tasks. The synchronous shell (``pregel/_sync_shell.py``) and the
asynchronous shell (``pregel/_async_shell.py``) perform those effects and send results
back. The decisions therefore exist exactly once.

``Loop`` is assembled from one mixin per concern, in ``pregel/_loop/``:

* ``fields.py``: what the loop holds (``LoopFields.__init__``);
* ``start.py``: loading the checkpoint and applying the input or ``Command``;
* ``prepare.py``: preparing a step's tasks and the checks before it runs;
* ``writes.py``: recording finished tasks and committing a step's writes;
* ``checkpoints.py``: saving checkpoints and pending writes per durability;
* ``report.py``: reporting finished tasks to the stream modes.

This module keeps :meth:`Loop.drive`, which strings them together.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from stategraph.errors import ErrorCode, GraphRecursionError, create_error_message
from stategraph.pregel import _effects as fx
from stategraph.pregel._loop.fields import WriteBatch
from stategraph.pregel._loop.start import StartMixin
from stategraph.pregel._loop.writes import WritesMixin

__all__ = ["Loop", "WriteBatch"]


class Loop(StartMixin, WritesMixin):
    """One run of a graph over its channels, driven step by step by a shell."""

    def drive(self) -> Generator[fx.Effect, Any, Any]:
        """Run the whole loop, yielding effects (:mod:`~stategraph.pregel._effects`)
        and receiving their results; returns the final output."""
        run = self.run
        saved = None
        if self.saver is not None:
            saved = yield from self._load()
        self._restore(saved, share=True)
        yield from self._hydrate(saved)
        try:
            yield from self._first(saved)
            while self._tick():
                todo = self._step_todo()
                if todo:
                    yield fx.Execute(todo)
                stop_after = self._end_step()
                if self.want_checkpoints:
                    yield from self._save("loop", self.step)
                else:
                    self._advance(self.step)
                if stop_after:
                    self._break_after()
                if self.status != "pending":
                    break
        except GeneratorExit:
            # the shell abandoned the run (e.g. a saver call failed): nothing to save
            raise
        except BaseException:
            yield from self._finish_exit()
            raise
        yield from self._finish_exit()
        if self.status == "out_of_steps":
            raise GraphRecursionError(
                create_error_message(
                    message=(
                        f"Recursion limit of {run.recursion_limit} reached without hitting a "
                        "stop condition. You can increase the limit by setting the "
                        '`recursion_limit` config key, e.g. config={"recursion_limit": 100}, '
                        "or add a condition that routes to END."
                    ),
                    error_code=ErrorCode.GRAPH_RECURSION_LIMIT,
                )
            )
        return self.output
