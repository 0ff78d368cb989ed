"""The contracts of Strata: event and command models, their codec, topic names, config.

Everything outside consumers may rely on is here; this package imports nothing else of ours.
"""
