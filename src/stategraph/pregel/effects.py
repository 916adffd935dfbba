"""Effect tags yielded by the sans-I/O loop to the shells that perform them.

Each effect is a tuple whose first item is one of these tags:

* ``(GET_TUPLE, config)`` -> the shell returns ``saver.get_tuple(config)``
* ``(PUT, config, checkpoint, metadata, new_versions, blocking)`` -> ``saver.put``
* ``(PUT_WRITES, config, writes, task_id, task_path, blocking)`` -> ``saver.put_writes``
* ``(EXECUTE, tasks)`` -> run the tasks, calling ``loop.task_finished`` as each ends
* ``(FLUSH,)`` -> wait until every background saver call has finished

``blocking=False`` (durability ``"async"``) lets the shell run the call in the
background, provided calls still reach the saver in the order they were yielded.
"""

from __future__ import annotations

__all__ = ["GET_TUPLE", "PUT", "PUT_WRITES", "EXECUTE", "FLUSH"]

GET_TUPLE = 0
PUT = 1
PUT_WRITES = 2
EXECUTE = 3
FLUSH = 4
