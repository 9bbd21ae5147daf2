"""Spent claims recorded by content, and where the phase's gold lives.

Adds to ``phases``: ``gold_path`` (the gold file a server started the phase with, so that
``sciverify leaderboard close`` can write the spent record beside it) and ``spent_digests`` (claim id ->
sha256 of the claim's gold line, for the claims the final ranking uses: what the close publishes). A
later phase is compared by these digests, whatever its file is called and however its ids are numbered;
phases recorded before this migration are compared by ``private_ids``, as before.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("phases") as batch:
        batch.add_column(sa.Column("gold_path", sa.String(4096), nullable=True))
        batch.add_column(sa.Column("spent_digests", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("phases") as batch:
        batch.drop_column("spent_digests")
        batch.drop_column("gold_path")
