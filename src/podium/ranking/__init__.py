"""Ranking: result documents read back, teams ranked from them, bootstrap confidence of the ranks."""
