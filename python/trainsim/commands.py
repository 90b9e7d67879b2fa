"""trainsim's commands from Python.

Each function builds the command line of the trainsim command of the same name, runs it
in-process (trainsim._native, over cli/command_line.h) with `--json -` and returns the JSON as
a dict, so that a result has exactly the keys docs/SPEC.md gives the command-line tool.
"""

import json
import os
import tempfile
import warnings
from collections.abc import Mapping
from typing import NamedTuple

from trainsim import _native
from trainsim.errors import InputError, OutputError, TrainsimError

# Exit codes of docs/SPEC.md ("Command line").
_INVALID_INPUT = 2
_DOES_NOT_FIT = 3


class CommandResult(NamedTuple):
    """What `run` returns: the exit code and the command's output and messages."""

    exit_code: int
    stdout: str
    stderr: str


def run(*args, config_dir=None):
    """Runs `trainsim ARGS...` in-process and returns its exit code, stdout and stderr; a failed
    command does not raise. For what the other functions do not cover (`validate`,
    `calibrate`, text reports)."""
    exit_code, out, err, _ = _native.run(_global_args(config_dir) + [str(arg) for arg in args])
    return CommandResult(exit_code, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"))


def simulate(
    experiment,
    *,
    set=None,
    symmetric=False,
    every_microbatch=False,
    calibration=None,
    goodput_draws=None,
    seed=None,
    ops=False,
    max_memory_gib=None,
    config_dir=None,
    **overrides,
):
    """Simulates one training iteration of `experiment` (a preset name, a YAML path or a dict)
    and returns the keys of `trainsim simulate --json`. A plan that does not fit in GPU memory
    is returned too: result["memory"]["fits"] is False."""
    with _InputFile(experiment, "experiment") as input_file:
        args = ["simulate", input_file.path, "--json", "-"]
        args += _override_args(set, overrides)
        args += _flag("--symmetric", symmetric) + _flag("--every-microbatch", every_microbatch) + _flag("--ops", ops)
        args += _option("--calibration", calibration) + _option("--goodput-draws", goodput_draws)
        args += _option("--seed", seed) + _option("--max-memory-gib", max_memory_gib)
        return _json_command(args, config_dir, input_file, accept=(_DOES_NOT_FIT,))


def memory(experiment, *, set=None, calibration=None, config_dir=None, **overrides):
    """Per-stage memory per GPU of `experiment`: the keys of `trainsim memory --json`. A plan
    that does not fit is returned too (its "fits" is False)."""
    with _InputFile(experiment, "experiment") as input_file:
        args = ["memory", input_file.path, "--json", "-"] + _override_args(set, overrides) + _option("--calibration", calibration)
        return _json_command(args, config_dir, input_file, accept=(_DOES_NOT_FIT,))


def sweep(
    experiment,
    *,
    vary=None,
    fix=None,
    clusters=None,
    gpus=None,
    objective=None,
    deadline_days=None,
    budget_usd=None,
    top=None,
    simulate_all=False,
    max_simulations=None,
    full=False,
    threads=None,
    goodput=False,
    calibration=None,
    max_memory_gib=None,
    set=None,
    config_dir=None,
    **overrides,
):
    """Sweeps the parallel plans of `experiment`: the keys of `trainsim sweep --json`, every
    plan in result["plans"] (sweep_table flattens them for pandas.DataFrame).

    vary: {"tp": [4, 8]} replaces a dimension's values; fix: {"pp": 8} keeps one; clusters
    and gpus: lists to compare; objective: "time", "cost" or "mfu"."""
    with _InputFile(experiment, "experiment") as input_file:
        args = ["sweep", input_file.path, "--json", "-"] + _override_args(set, overrides)
        for name, values in (vary or {}).items():
            args += ["--vary", f"{name}={','.join(_value_text(value) for value in _as_list(values))}"]
        for name, value in (fix or {}).items():
            args += ["--fix", f"{name}={_value_text(value)}"]
        if clusters is not None:
            args += ["--clusters", ",".join(os.fspath(cluster) for cluster in _as_list(clusters))]
        if gpus is not None:
            args += ["--gpus", ",".join(str(count) for count in _as_list(gpus))]
        args += _option("--objective", objective) + _option("--deadline-days", deadline_days)
        args += _option("--budget-usd", budget_usd) + _option("--top", top)
        args += _flag("--simulate-all", simulate_all) + _option("--max-simulations", max_simulations)
        args += _flag("--full", full) + _option("--threads", threads) + _flag("--goodput", goodput)
        args += _option("--calibration", calibration) + _option("--max-memory-gib", max_memory_gib)
        return _json_command(args, config_dir, input_file)


def sweep_table(result):
    """The plans of a `sweep` result as flat rows ({"parallelism.tp": 8, "memory.fits": True,
    ...}): pandas.DataFrame(sweep_table(result)) has one column per key."""
    return [_flatten(plan) for plan in result["plans"]]


def collective(
    cluster,
    op,
    *,
    gpus=None,
    gpus_per_node=None,
    min_bytes=None,
    max_bytes=None,
    step_factor=None,
    algo=None,
    proto=None,
    calibration=None,
    max_memory_gib=None,
    set=None,
    config_dir=None,
    **overrides,
):
    """One collective over sizes, as nccl-tests measures it: the keys of `trainsim collective
    --json`. Sizes are bytes or text as nccl-tests takes them ("1M", "4G")."""
    with _InputFile(cluster, "cluster") as input_file:
        args = ["collective", "--cluster", input_file.path, "--op", op, "--json", "-"] + _override_args(set, overrides)
        args += _option("--gpus", gpus) + _option("--gpus-per-node", gpus_per_node)
        args += _option("--min-bytes", min_bytes) + _option("--max-bytes", max_bytes)
        args += _option("--step-factor", step_factor) + _option("--algo", algo) + _option("--proto", proto)
        args += _option("--calibration", calibration) + _option("--max-memory-gib", max_memory_gib)
        return _json_command(args, config_dir, input_file)


def topology(cluster, *, path=None, bisection=True, set=None, config_dir=None, **overrides):
    """The cluster's device graph, link counts and bandwidths: the keys of `trainsim topology
    --json`. path=(a, b) adds the route between two GPUs; bisection=False skips the max-flow
    bisection (slow on very large clusters)."""
    with _InputFile(cluster, "cluster") as input_file:
        args = ["topology", input_file.path, "--json", "-"] + _override_args(set, overrides) + _flag("--no-bisection", not bisection)
        if path is not None:
            first, second = path
            args += ["--path", str(first), str(second)]
        return _json_command(args, config_dir, input_file)


class _InputFile:
    """A preset name or path as is; a dict written to a temporary YAML file (JSON is YAML) for
    the run, named "<experiment dict>" or "<cluster dict>" in error messages."""

    def __init__(self, value, kind):
        self._value = value
        self._kind = kind
        self._directory = None
        self.path = None

    def __enter__(self):
        if isinstance(self._value, Mapping):
            self._directory = tempfile.TemporaryDirectory(prefix="trainsim-")
            self.path = os.path.join(self._directory.name, f"{self._kind}.yaml")
            with open(self.path, "w", encoding="utf-8") as yaml_file:
                json.dump(self._value, yaml_file, indent=1, allow_nan=False)
                yaml_file.write("\n")
        elif isinstance(self._value, (str, os.PathLike)):
            self.path = os.fspath(self._value)
        else:
            raise TypeError(f"{self._kind}: expected a preset name, a path or a dict, found {type(self._value).__name__}")
        return self

    def __exit__(self, *exc_info):
        if self._directory is not None:
            self._directory.cleanup()
        return False

    def renamed(self, text):
        """`text` with the temporary file of a dict named as what it is."""
        return text.replace(self.path, f"<{self._kind} dict>") if self._directory is not None else text


def _global_args(config_dir):
    return ["--config-dir", os.fspath(config_dir)] if config_dir is not None else []


def _json_command(args, config_dir, input_file, accept=()):
    """Runs a command that writes JSON on stdout; returns the JSON, or raises its error."""
    exit_code, out, err, error = _native.run(_global_args(config_dir) + args)
    stderr = input_file.renamed(err.decode("utf-8", "replace"))
    for line in stderr.splitlines():
        if line.startswith("warning: "):
            warnings.warn(line[len("warning: ") :], stacklevel=3)
    if exit_code == 0 or exit_code in accept:
        return json.loads(out.decode("utf-8"))
    raise _command_error(exit_code, stderr, error, input_file)


def _command_error(exit_code, stderr, error, input_file):
    if error is not None:
        message = input_file.renamed(error["message"])
        where = input_file.renamed(error["where"])
        if error["exit_code"] == _INVALID_INPUT:
            return InputError(message, where, error["key"], stderr)
        return OutputError(": ".join(part for part in (where, message) if part), error["exit_code"], stderr)
    # A command-line parse error (an option's value) or an internal error: its message only.
    lines = [line for line in stderr.splitlines() if line.startswith("trainsim: ")]
    message = lines[-1].removeprefix("trainsim: ").removeprefix("error: ") if lines else stderr.strip()
    if exit_code == _INVALID_INPUT:
        return InputError(message, stderr=stderr)
    if exit_code == 1:
        return OutputError(message, exit_code, stderr)
    return TrainsimError(message, exit_code, stderr)


def _override_args(set_overrides, keywords):
    overrides = dict(set_overrides or {})
    overrides.update({key.replace("__", "."): value for key, value in keywords.items()})
    args = []
    for key, value in overrides.items():
        args += ["--set", f"{key}={_value_text(value)}"]
    return args


def _value_text(value):
    """A Python value as the YAML text --set reads: lists and dicts in JSON (YAML's flow style)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return json.dumps(value, allow_nan=False)
    if isinstance(value, str):
        return value
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, (list, tuple, Mapping)):
        return json.dumps(value, allow_nan=False)
    raise TypeError(f"cannot pass a {type(value).__name__} to trainsim: {value!r}")


def _as_list(values):
    return list(values) if isinstance(values, (list, tuple)) else [values]


def _flag(name, given):
    return [name] if given else []


def _option(name, value):
    return [] if value is None else [name, os.fspath(value) if isinstance(value, os.PathLike) else str(value)]


def _flatten(mapping, prefix=""):
    row = {}
    for key, value in mapping.items():
        if isinstance(value, Mapping):
            row.update(_flatten(value, f"{prefix}{key}."))
        else:
            row[f"{prefix}{key}"] = value
    return row
