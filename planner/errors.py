"""One error type for bad input: its message is one line naming file and line or field."""

from __future__ import annotations

MAX_CHARS = 500  # longest message text (file, line and field come on top)


class InputError(ValueError):
    """Bad user input (a log, an instance, a grid). str(err) is a single line.

    The CLI maps it to exit code 2; the app shows it in red and goes on.
    """

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None,
                 field: str | None = None):
        where = []
        if file:
            where.append(str(file))
        if line is not None:
            where.append(f"line {line}")
        if field:
            where.append(f"field '{field}'")
        text = " ".join(str(message).split())  # one line, always
        if len(text) > MAX_CHARS:  # a hostile 10 MB field must not become a 10 MB message
            text = text[: MAX_CHARS - 3] + "..."
        super().__init__(f"{': '.join([', '.join(where), text]) if where else text}")
        self.file, self.line, self.field = file, line, field
        self.reason = text  # the message without the place (to re-raise it elsewhere)
