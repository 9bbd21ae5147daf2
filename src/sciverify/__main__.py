"""`python -m sciverify` runs the CLI."""

from __future__ import annotations

from sciverify.cli import main

if __name__ == "__main__":
    main()
