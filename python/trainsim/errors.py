"""The errors trainsim's functions raise, one per exit code of the command-line tool."""


class TrainsimError(Exception):
    """A command that failed: `exit_code` is the command-line tool's (docs/SPEC.md), `stderr`
    its messages."""

    def __init__(self, message, exit_code, stderr=""):
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code
        self.stderr = stderr


class InputError(TrainsimError):
    """Invalid input (exit code 2): bad YAML, an unknown key, an impossible plan, a number out
    of range. `where` is "file:line:col" (or "--set KEY=VALUE" for an override, "" when there
    is no position), `key` the dotted key path, `message` what was expected and found."""

    def __init__(self, message, where="", key="", stderr=""):
        super().__init__(message, 2, stderr)
        self.where = where
        self.key = key

    def __str__(self):
        parts = [part for part in (self.where, self.key) if part]
        return ": ".join(parts + [self.message])


class OutputError(TrainsimError):
    """An output that could not be written, or an internal error (exit code 1)."""
