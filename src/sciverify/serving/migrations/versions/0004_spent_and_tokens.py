"""Spent private parts and tokens an operator controls.

Adds to ``phases``: ``private_ids`` (the claim ids the phase's final ranking is computed on: its
private part, or the whole hidden gold without one) and ``private_spent_at`` (when the close revealed
that ranking); a later phase whose private part shares a claim with a spent one is refused at start.
Adds to ``submitters``: ``expires_at`` (None: no expiry) and ``revoked_at``; a token past either is
refused like an unknown one. Older phases have no recorded ids (nothing to compare); older teams keep
tokens that do not expire.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("phases") as batch:
        batch.add_column(sa.Column("private_ids", sa.JSON(), nullable=True))
        batch.add_column(sa.Column("private_spent_at", sa.DateTime(timezone=True), nullable=True))
    with op.batch_alter_table("submitters") as batch:
        batch.add_column(sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("submitters") as batch:
        batch.drop_column("revoked_at")
        batch.drop_column("expires_at")
    with op.batch_alter_table("phases") as batch:
        batch.drop_column("private_spent_at")
        batch.drop_column("private_ids")
