"""How much the libraries under sciverify may say: warnings only, unless asked for more.

alembic announces every plugin and migration context at INFO, httpx every request; a user who asked for
one verdict, or mistyped a file name, should see the answer or the one-line error, not nine lines of
someone else's housekeeping first. ``sciverify --verbose COMMAND`` lets them all through.
"""

from __future__ import annotations

import logging

__all__ = ["LIBRARY_LOGGERS", "LOG_FORMAT", "configure_logging"]

#: Loggers of libraries held at WARNING unless verbose.
LIBRARY_LOGGERS = (
    "alembic", "httpx", "httpcore", "sqlalchemy", "urllib3", "filelock", "huggingface_hub", "transformers",
    "sentence_transformers", "multipart",
)
#: The one format of every log line sciverify writes (the server's, and everything under --verbose).
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def configure_logging(verbose: bool = False) -> None:
    """Quiet the libraries (:data:`LIBRARY_LOGGERS` at WARNING); verbose instead shows every INFO line
    of sciverify and the libraries alike."""
    if verbose:
        logging.basicConfig(level=logging.INFO, format=LOG_FORMAT)
    for name in LIBRARY_LOGGERS:
        logging.getLogger(name).setLevel(logging.NOTSET if verbose else logging.WARNING)
