"""The ``stategraph`` command line: draw graphs, inspect and resume saved threads.

Each subcommand is a module of this package exposing ``HELP``, ``DESCRIPTION``,
``add_arguments(parser)`` and ``run(args) -> int``; :mod:`stategraph.cli._main` finds
and registers them.
"""
