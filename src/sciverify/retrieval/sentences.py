"""The sentence splitter, where the index builder has always imported it from.

It lives in :mod:`sciverify.data.sentences` because the literature readers (``data/sources``) split
abstracts too, and ``data`` imports nothing below it.
"""

from __future__ import annotations

from sciverify.data.sentences import split_sentences

__all__ = ["split_sentences"]
