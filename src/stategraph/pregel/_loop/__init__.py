"""The parts of :class:`~stategraph.pregel._loop.drive.Loop`, one concern per module.

Private: import ``Loop`` from :mod:`stategraph.pregel._loop.drive`.
"""
