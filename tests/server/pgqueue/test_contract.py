"""The PostgreSQL run queue keeps the queue contract (``tests/server/queue_contract.py``)."""

from __future__ import annotations

import pytest
from tests.server.queue_contract import QueueContract

pytestmark = pytest.mark.server


class TestPostgresQueue(QueueContract):
    pass
