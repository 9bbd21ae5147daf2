"""Reading an upload form strictly: every text is UTF-8 or the request is a 422.

Starlette decodes a multipart field (and a file name) that is not UTF-8 as Latin-1 instead of failing,
so a lone surrogate sent as its UTF-8-like bytes (``ED A0 80``) was stored as ``"í\\x80"``. The upload
routes therefore parse their multipart body here, with python-multipart (the parser Starlette uses)
and a strict decoder: the same rule as the JSON API, whose bodies must be Unicode text. The body size
is already bounded by :class:`~sciverify.serving.limits.BodyLimitMiddleware`; the file part is kept in
memory up to one byte past the upload limit (what the route needs to answer 413) and no further.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fastapi import Request

from sciverify.serving.http_errors import ApiError

__all__ = ["UploadForm", "read_upload_form", "utf8"]

#: Largest text field accepted in an upload form (bytes).
MAX_FIELD_BYTES = 1024
#: Parts in one upload form (file, token, system, idempotency key, with room for a browser's extras).
MAX_PARTS = 16


def utf8(raw: bytes, what: str) -> str:
    """``raw`` decoded as UTF-8, or a 422 naming ``what`` (the input itself is not echoed)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ApiError(
            422,
            "invalid_request",
            f"{what}: text is not valid UTF-8 (byte {exc.start}: a lone surrogate or a broken "
            "byte sequence); send UTF-8 text",
        ) from None


@dataclass
class _Part:
    headers: dict[bytes, bytes] = field(default_factory=dict)
    data: bytearray = field(default_factory=bytearray)
    name: str = ""
    filename: str | None = None
    truncated: bool = False


@dataclass(frozen=True)
class UploadForm:
    """The text fields of an upload form and its file (bytes, capped; ``None`` when absent), and the
    first thing wrong with the form, if any.

    The problem is kept, not raised, so the route can authenticate first: a revoked token with a broken
    form is told ``401``, and only a valid token learns what is wrong with its form.
    """

    fields: dict[str, str]
    content: bytes | None
    filename: str | None
    problem: ApiError | None = None


async def read_upload_form(request: Request, max_file_bytes: int) -> UploadForm:
    """Parse ``multipart/form-data`` with strict UTF-8 for field names, values and the file name.

    The file part (the part named ``file``, with or without a file name) keeps at most
    ``max_file_bytes + 1`` bytes, so the caller can answer 413. Nothing is raised: the first problem
    found is returned with the fields read before and after it (see :class:`UploadForm`).
    """
    from python_multipart.multipart import MultipartParser, parse_options_header

    ctype, params = parse_options_header(request.headers.get("content-type", ""))
    if ctype != b"multipart/form-data" or b"boundary" not in params:
        problem = "send multipart/form-data with the predictions file as 'file'"
        return UploadForm({}, None, None, ApiError(422, "missing_file", problem))
    parts: list[_Part] = []
    current = _Part()
    header_name = bytearray()
    header_value = bytearray()

    def on_part_begin() -> None:
        nonlocal current
        if len(parts) >= MAX_PARTS:
            raise ApiError(422, "invalid_request", f"at most {MAX_PARTS} form fields")
        current = _Part()

    def on_header_field(data: bytes, start: int, end: int) -> None:
        header_name.extend(data[start:end])

    def on_header_value(data: bytes, start: int, end: int) -> None:
        header_value.extend(data[start:end])

    def on_header_end() -> None:
        current.headers[bytes(header_name).lower()] = bytes(header_value)
        header_name.clear()
        header_value.clear()

    def on_headers_finished() -> None:
        _, options = parse_options_header(current.headers.get(b"content-disposition", b""))
        if b"name" not in options:
            raise ApiError(422, "invalid_request", "a form part has no name")
        current.name = utf8(options[b"name"], "form field name")
        if b"filename" in options:
            current.filename = utf8(options[b"filename"], "file name")

    def on_part_data(data: bytes, start: int, end: int) -> None:
        is_file = current.filename is not None or current.name == "file"
        cap = max_file_bytes + 1 if is_file else MAX_FIELD_BYTES + 1
        room = cap - len(current.data)
        if room > 0:
            current.data.extend(data[start : min(end, start + room)])
        if end - start > room:
            current.truncated = True

    def on_part_end() -> None:
        parts.append(current)

    parser = MultipartParser(
        params[b"boundary"],
        {
            "on_part_begin": on_part_begin,
            "on_part_data": on_part_data,
            "on_part_end": on_part_end,
            "on_header_field": on_header_field,
            "on_header_value": on_header_value,
            "on_header_end": on_header_end,
            "on_headers_finished": on_headers_finished,
        },
    )
    from python_multipart.exceptions import FormParserError
    from python_multipart.multipart import MultipartState

    problems: list[ApiError] = []
    try:
        async for chunk in request.stream():
            parser.write(chunk)
        parser.finalize()
    except FormParserError:
        problems.append(ApiError(422, "invalid_request", "the multipart body is malformed"))
    except ApiError as exc:
        problems.append(exc)
    else:
        if parser.state != MultipartState.END:
            # python-multipart's finalize() does not check: a body cut short (a dropped connection, a
            # proxy's limit, a hand-built form) would otherwise be told to "attach the predictions file"
            problems.append(_truncated(parser.state == MultipartState.START))
    fields: dict[str, str] = {}
    content: bytes | None = None
    filename: str | None = None
    for part in parts:
        if part.name == "file" and not part.filename:
            problems.append(_no_file_name(part.filename))
            continue
        if part.filename is not None:
            if part.name == "file" and content is None:
                content, filename = bytes(part.data), part.filename
            continue
        if part.truncated:
            too_long = f"form field {part.name!r} is longer than {MAX_FIELD_BYTES} bytes"
            problems.append(ApiError(422, "field_too_long", too_long))
            continue
        try:
            fields.setdefault(part.name, utf8(bytes(part.data), f"form field {part.name!r}"))
        except ApiError as exc:
            problems.append(exc)
    return UploadForm(fields, content, filename, problems[0] if problems else None)


def _truncated(empty: bool) -> ApiError:
    """The body ended before the form's closing boundary (``--BOUNDARY--``), or held nothing at all."""
    if empty:
        return ApiError(
            422, "missing_file", "the multipart body is empty: attach the predictions file as 'file'"
        )
    return ApiError(
        422,
        "truncated_form",
        "the multipart body is truncated: it ended before the form's closing boundary, so the file may "
        "be incomplete; send the whole form again",
    )


def _no_file_name(name: str | None) -> ApiError:
    """The form part ``file`` came as a text field (no file name) or with an empty one (a browser's
    form sent with no file chosen): say that, not that a text field is too long."""
    what = "has no file name" if name is None else "has an empty file name (was a file chosen?)"
    return ApiError(
        422,
        "missing_file",
        f"the form part 'file' {what}: attach the predictions file as a file "
        '(Content-Disposition: form-data; name="file"; filename="predictions.jsonl")',
    )
