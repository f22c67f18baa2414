"""podium inside the platforms organizers already use.

Each adapter reads the platform's folder layout, scores with the engine, and
writes what the platform stores, in the platform's own format:

- :mod:`~podium.publish.platforms.codabench`: a Codabench scoring program
  (``input/ref``, ``input/res`` -> ``scores.json``, ``detailed_results.html``),
  and :mod:`~podium.publish.platforms.codabench_bundle`, a competition bundle from a contest file.
- :mod:`~podium.publish.platforms.evalai`: EvalAI's ``evaluate(test_annotation_file,
  user_submission_file, phase_codename, **kwargs)`` and the leaderboard part of
  ``challenge_config.yaml``.
- :mod:`~podium.publish.platforms.grand_challenge`: a Grand Challenge evaluation
  (``/input`` -> ``/output/metrics.json`` with ``case`` and ``aggregates``).

The truth side is a *reference folder* (:mod:`~podium.publish.platforms.reference`):
the truth itself, or the truth with a ``contest.toml`` that names the
challenge, parameters and split. Platforms store numbers only
(:mod:`~podium.publish.platforms.scores`).
"""
