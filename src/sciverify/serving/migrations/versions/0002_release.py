"""Released scores for hidden gold: the team's released F1s after each upload, and which upload set them.

Rows stored before this revision get ``released`` NULL and ``sets_release`` false: against a hidden
gold they are on no public view until the team uploads again (their exact scores stay for the operator).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("submissions") as batch:
        batch.add_column(sa.Column("released", sa.JSON(), nullable=True))
        batch.add_column(sa.Column("sets_release", sa.Boolean(), nullable=False, server_default=sa.false()))
    op.create_index("ix_submissions_submitter_gold", "submissions", ["submitter_id", "gold_sha256", "id"])


def downgrade() -> None:
    op.drop_index("ix_submissions_submitter_gold", table_name="submissions")
    with op.batch_alter_table("submissions") as batch:
        batch.drop_column("sets_release")
        batch.drop_column("released")
