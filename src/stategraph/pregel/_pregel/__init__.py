"""The parts of :class:`~stategraph.pregel.Pregel`, one concern per module.

Private: import ``Pregel`` from :mod:`stategraph.pregel`.
"""
