"""Leaderboard tables: submitters (hashed tokens) and submissions (bytes + scores in one row).

Revision ID: 0001
Revises:
Create Date: 2025-01-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "submitters",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("name", sa.String(100), nullable=False, unique=True),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "submissions",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("submitter_id", sa.Integer(), sa.ForeignKey("submitters.id"), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("system", sa.String(100), nullable=False, server_default=""),
        sa.Column("filename", sa.String(255), nullable=False),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("content", sa.LargeBinary(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("gold_sha256", sa.String(64), nullable=False),
        sa.Column("scores", sa.JSON(), nullable=True),
        sa.Column("counts", sa.JSON(), nullable=True),
        sa.Column("problems", sa.JSON(), nullable=True),
        sa.Column("report_html", sa.Text(), nullable=True),
        sa.CheckConstraint("status IN ('scored', 'invalid')", name="ck_submissions_status"),
        sa.CheckConstraint(
            "status <> 'scored' OR (scores IS NOT NULL AND counts IS NOT NULL)",
            name="ck_submissions_scored_complete",
        ),
    )
    op.create_index("ix_submissions_submitter_id", "submissions", ["submitter_id"])
    op.create_index("ix_submissions_created_at", "submissions", ["created_at"])


def downgrade() -> None:
    op.drop_index("ix_submissions_created_at", table_name="submissions")
    op.drop_index("ix_submissions_submitter_id", table_name="submissions")
    op.drop_table("submissions")
    op.drop_table("submitters")
