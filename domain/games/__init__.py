"""Every game module; importing this package registers them all."""

from domain.games import (
    front_line,  # noqa: F401
    kiri_ai,  # noqa: F401
    nin_nal,  # noqa: F401
    san_ban,  # noqa: F401
    san_ni_ichi,  # noqa: F401
)
