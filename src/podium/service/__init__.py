"""podium serve: the contest service (web API, database, durable queue, workers).

Depends downward only: it drives :mod:`podium.scoring.engine`, :mod:`podium.runner` and
:mod:`podium.contest`; nothing below imports it.
"""
