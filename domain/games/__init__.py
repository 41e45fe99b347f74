"""The games Kifu plays: ``GAMES``, each game module's rules object, by id. ``domain.registry`` serves them by
id; a new game is one more module here and one more line in ``GAMES`` (no module registers itself)."""

from domain.contract import Game
from domain.games import front_line, kiri_ai, nin_nal, san_ban, san_ni_ichi

GAMES: tuple[Game, ...] = (front_line.RULES, kiri_ai.RULES, nin_nal.RULES, san_ban.RULES, san_ni_ichi.RULES)
