"""Private gold, opaque ids, idempotent uploads and phases.

Adds to ``submissions``: ``public_id`` (an opaque id for URLs; rows stored before this revision get a
fresh random one), ``private_scores`` and ``private_counts`` (figures on the private part of the gold),
``idempotency_key`` (sha256 of the client's key, unique per team) and ``chosen`` (the upload a team
picked for the final ranking); and the table ``phases`` (one row per gold and private part, with the
last time a server started on it and the time the operator closed it). Older rows keep their
scores; they have no private figures.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-24
"""

from __future__ import annotations

import secrets

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("submissions") as batch:
        batch.add_column(sa.Column("public_id", sa.String(16), nullable=True))
        batch.add_column(sa.Column("private_scores", sa.JSON(), nullable=True))
        batch.add_column(sa.Column("private_counts", sa.JSON(), nullable=True))
        batch.add_column(sa.Column("idempotency_key", sa.String(64), nullable=True))
        batch.add_column(sa.Column("chosen", sa.Boolean(), nullable=False, server_default=sa.false()))
    conn = op.get_bind()
    submissions = sa.table("submissions", sa.column("id", sa.Integer), sa.column("public_id", sa.String))
    for (row_id,) in conn.execute(sa.select(submissions.c.id)).all():
        conn.execute(
            submissions.update().where(submissions.c.id == row_id).values(public_id=secrets.token_urlsafe(9))
        )
    with op.batch_alter_table("submissions") as batch:
        batch.alter_column("public_id", existing_type=sa.String(16), nullable=False)
    op.create_index("ix_submissions_public_id", "submissions", ["public_id"], unique=True)
    op.create_index(
        "ix_submissions_idempotency", "submissions", ["submitter_id", "idempotency_key"], unique=True
    )
    op.create_table(
        "phases",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("key", sa.String(64), nullable=False, unique=True),
        sa.Column("opened_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("closed_at", sa.DateTime(timezone=True), nullable=True),
    )


def downgrade() -> None:
    op.drop_table("phases")
    op.drop_index("ix_submissions_idempotency", table_name="submissions")
    op.drop_index("ix_submissions_public_id", table_name="submissions")
    with op.batch_alter_table("submissions") as batch:
        batch.drop_column("chosen")
        batch.drop_column("idempotency_key")
        batch.drop_column("private_counts")
        batch.drop_column("private_scores")
        batch.drop_column("public_id")
