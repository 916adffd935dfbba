"""The parts of :class:`~stategraph.pregel.loop.Loop`, one concern per module.

Private: import ``Loop`` from :mod:`stategraph.pregel.loop`.
"""
