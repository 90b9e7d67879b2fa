"""trainsim: a discrete-event simulator of distributed LLM training, from Python.

Each function runs the trainsim command of the same name in-process, on the same C++ engine
as the command-line tool, and returns its JSON (the keys of docs/SPEC.md) as a dict:

    import trainsim
    result = trainsim.simulate("llama3-8b-dgx-h100", parallelism__tp=2)
    result["iteration_time_s"], result["mfu"], result["memory"]["fits"]

An experiment is a preset name, a path to a YAML file or a dict of the experiment schema
(docs/configuration.md). Overrides are `set={"parallelism.tp": 2}` or keywords with `__`
for the dots. Invalid input raises InputError with the file:line:col and the key. See
docs/python.md.
"""

from trainsim.commands import collective, memory, run, simulate, sweep, sweep_table, topology
from trainsim.errors import InputError, OutputError, TrainsimError

__all__ = [
    "collective",
    "memory",
    "run",
    "simulate",
    "sweep",
    "sweep_table",
    "topology",
    "InputError",
    "OutputError",
    "TrainsimError",
]
