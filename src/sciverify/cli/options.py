"""Options shared by several commands, defined once so that their names, help and shown defaults agree.

Help text is Rich markup: a literal ``[`` is written ``\\[`` (``\\[llm]``), or the section name vanishes
from ``--help``. An option whose default comes from the pipeline configuration shows where it comes from
and the value it has when nothing sets it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sciverify.models.llm_config import LlmConfig

__all__ = [
    "AddressOpt",
    "ApiKeyEnvOpt",
    "BaseUrlOpt",
    "ConcurrencyOpt",
    "ConfigOpt",
    "DataOpt",
    "EngineOpt",
    "FormatOpt",
    "IndexDirOpt",
    "JsonSchemaOpt",
    "JudgeKeyEnvOpt",
    "JudgeOpt",
    "MaxTokensOpt",
    "ModelNameOpt",
    "ModelsDirOpt",
    "ServeDbOpt",
    "ServeDirOpt",
    "TimeoutOpt",
    "WorkersOpt",
]

_LLM = LlmConfig()


def _from_config(value: object) -> str:
    """The shown default of an option that overrides the pipeline configuration's ``[llm]`` section."""
    return f"{value}, or pipeline.toml's"


DataOpt = Annotated[
    Path | None,
    typer.Option(
        "--data", help="SciFact data directory (default: $SCIVERIFY_DATA, then ../shared/data/scifact)."
    ),
]
IndexDirOpt = Annotated[
    Path | None,
    typer.Option("--index", help="Corpus index directory (default: the SciFact index)."),
]
ModelsDirOpt = Annotated[
    Path | None,
    typer.Option("--models", help="Model directory with label/ and rationale/ (default: shipped)."),
]
ConfigOpt = Annotated[
    Path | None,
    typer.Option("--config", help="pipeline.toml to use (default: the model directory's tuned one)."),
]
FormatOpt = Annotated[str, typer.Option("--format", help="text or json.")]

# ---- the LLM judge -------------------------------------------------------------------------------------

BaseUrlOpt = Annotated[
    str | None,
    typer.Option("--base-url", help="OpenAI-compatible server root, e.g. http://127.0.0.1:8080/v1."),
]
ModelNameOpt = Annotated[str | None, typer.Option("--model", help="Model name as the server knows it.")]
ApiKeyEnvOpt = Annotated[
    str, typer.Option("--api-key-env", help="Environment variable holding the API key (never printed).")
]
JudgeKeyEnvOpt = Annotated[
    str | None,
    typer.Option(
        "--api-key-env",
        help="Environment variable holding the API key (never printed).",
        show_default=_from_config(_LLM.api_key_env),
    ),
]
JudgeOpt = Annotated[
    str | None,
    typer.Option(
        "--judge",
        help="'models' (shipped models) or 'llm' (--base-url --model).",
        show_default=_from_config("models"),
    ),
]
ConcurrencyOpt = Annotated[
    int | None,
    typer.Option(
        "--concurrency", help="Requests in flight at once.", show_default=_from_config(_LLM.concurrency)
    ),
]
TimeoutOpt = Annotated[
    float | None,
    typer.Option("--timeout", help="Seconds per request.", show_default=_from_config(_LLM.timeout)),
]
MaxTokensOpt = Annotated[
    int | None,
    typer.Option(
        "--max-tokens", help="Longest answer, in tokens.", show_default=_from_config(_LLM.max_tokens)
    ),
]
JsonSchemaOpt = Annotated[
    bool, typer.Option("--json-schema", help="Send response_format with the verdict/evidence JSON schema.")
]

# ---- engines -------------------------------------------------------------------------------------------

EngineOpt = Annotated[
    str, typer.Option("--engine", help="Where the heavy steps run: local (this process) or ray.")
]
AddressOpt = Annotated[
    str | None,
    typer.Option("--address", help="Ray cluster: auto or ray://HOST:10001 (default: Ray starts here)."),
]
WorkersOpt = Annotated[int, typer.Option("--workers", help="Ray actors per stage (each loads models once).")]

# ---- serving -------------------------------------------------------------------------------------------

ServeDbOpt = Annotated[
    str | None,
    typer.Option("--db", help="Database URL (default: SQLite in the serving data dir)."),
]
ServeDirOpt = Annotated[
    Path | None,
    typer.Option("--data-dir", help="Serving data dir, home of the default SQLite database."),
]
