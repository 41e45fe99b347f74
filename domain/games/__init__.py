"""Every game module; importing this package registers them all."""

from domain.games import san_ban  # noqa: F401
from domain.games import nin_nal  # noqa: F401
from domain.games import kiri_ai  # noqa: F401
