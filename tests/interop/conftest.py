"""The LangChain interop tests run only where langchain-core is installed
(``make unit-langchain`` builds that environment); elsewhere they are not collected."""

from __future__ import annotations

import importlib.util

collect_ignore_glob = [] if importlib.util.find_spec("langchain_core") else ["*.py"]
