"""The Python module against the command-line tool: same results, same errors (docs/python.md).

Run by ctest (python/CMakeLists.txt) with PYTHONPATH at build/python and TRAINSIM_EXECUTABLE
naming the trainsim binary of the same build.
"""

import json
import os
import subprocess
import threading

import pytest

import trainsim

EXECUTABLE = os.environ.get("TRAINSIM_EXECUTABLE")

# A whole experiment as a dict: the shipped llama3-8b-dgx-h100 preset, spelled out.
LLAMA3_8B = {
    "name": "llama3-8b-from-python",
    "model": "llama3-8b",
    "cluster": "dgx-h100",
    "training": {
        "seq_len": 8192,
        "global_batch_size": 128,
        "micro_batch_size": 1,
        "precision": "bf16",
        "optimizer": "adam",
        "tokens": 15e12,
    },
    "parallelism": {"gpus": 8, "tp": 1, "pp": 1, "dp": 4, "cp": 2, "zero": 1},
}


def cli_json(*args):
    """The command-line tool's --json output, for comparison."""
    assert EXECUTABLE, "TRAINSIM_EXECUTABLE is not set (ctest sets it)"
    completed = subprocess.run([EXECUTABLE, *args, "--json", "-"], capture_output=True, timeout=300, check=False)
    assert completed.returncode in (0, 3), completed.stderr.decode()
    return json.loads(completed.stdout)


def test_simulate_returns_the_command_line_json():
    result = trainsim.simulate("llama3-8b-dgx-h100")
    assert result == cli_json("simulate", "llama3-8b-dgx-h100")
    assert result["experiment"] == "llama3-8b-dgx-h100"
    assert result["iteration_time_s"] > 0
    assert 0 < result["mfu"] < 1
    assert result["memory"]["fits"] is True


def test_simulate_is_deterministic():
    assert trainsim.simulate("llama3-8b-dgx-h100") == trainsim.simulate("llama3-8b-dgx-h100")


def test_overrides_as_keywords_and_as_set_are_the_same_as_the_command_line():
    by_keywords = trainsim.simulate("llama3-8b-dgx-h100", parallelism__cp=1, parallelism__dp=8, training__seq_len=4096)
    by_set = trainsim.simulate(
        "llama3-8b-dgx-h100", set={"parallelism.cp": 1, "parallelism.dp": 8, "training.seq_len": 4096}
    )
    on_command_line = cli_json(
        "simulate",
        "llama3-8b-dgx-h100",
        "--set",
        "parallelism.cp=1",
        "--set",
        "parallelism.dp=8",
        "--set",
        "training.seq_len=4096",
    )
    assert by_keywords == by_set == on_command_line
    assert by_keywords["parallelism"]["dp"] == 8
    assert by_keywords["iteration_time_s"] != trainsim.simulate("llama3-8b-dgx-h100")["iteration_time_s"]


def test_an_experiment_dict_runs_like_its_preset():
    from_dict = trainsim.simulate(LLAMA3_8B)
    from_preset = trainsim.simulate("llama3-8b-dgx-h100")
    assert from_dict["experiment"] == "llama3-8b-from-python"
    assert from_dict["iteration_time_s"] == pytest.approx(from_preset["iteration_time_s"], rel=1e-12)


def test_an_experiment_file_path(tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text(json.dumps(LLAMA3_8B))
    assert trainsim.simulate(path)["iteration_time_s"] == trainsim.simulate(LLAMA3_8B)["iteration_time_s"]


def test_an_unknown_key_in_a_dict_raises_input_error_with_position_and_key():
    experiment = json.loads(json.dumps(LLAMA3_8B))
    experiment["training"]["micro_batch"] = 2
    with pytest.raises(trainsim.InputError) as raised:
        trainsim.simulate(experiment)
    error = raised.value
    assert error.exit_code == 2
    assert error.where.startswith("<experiment dict>:")
    line, column = error.where.split(":")[1:3]
    assert int(line) > 0 and int(column) > 0
    assert error.key == "training.micro_batch"
    assert "unknown key" in error.message
    assert "trainsim-" not in str(error)  # the temporary file is not named


def test_a_bad_file_names_the_file_line_and_column(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(
        "name: x\nmodel: llama3-8b\ncluster: dgx-h100\n"
        "training: {seq_len: 8192, global_batch_size: 128, micro_batch_size: 1}\n"
        "parallelism:\n  gpus: 8\n  tp: many\n"
    )
    with pytest.raises(trainsim.InputError) as raised:
        trainsim.simulate(str(path))
    assert raised.value.where.startswith(f"{path}:7:")
    assert raised.value.key == "parallelism.tp"


def test_a_bad_override_is_blamed_on_the_override():
    with pytest.raises(trainsim.InputError) as raised:
        trainsim.simulate("llama3-8b-dgx-h100", parallelism__tp=3)
    assert raised.value.where == "--set parallelism.tp=3"
    assert raised.value.key == "parallelism.tp"


def test_a_missing_preset_raises_input_error():
    with pytest.raises(trainsim.InputError) as raised:
        trainsim.simulate("no-such-experiment")
    assert "no-such-experiment" in str(raised.value)


def test_an_option_the_command_refuses_raises_input_error():
    with pytest.raises(trainsim.InputError):
        trainsim.simulate("llama3-8b-dgx-h100", goodput_draws=-1)


def test_values_python_cannot_pass_are_refused():
    with pytest.raises(TypeError):
        trainsim.simulate("llama3-8b-dgx-h100", parallelism__tp=object())
    with pytest.raises(TypeError):
        trainsim.simulate(42)


def test_a_plan_that_does_not_fit_is_returned_not_raised():
    result = trainsim.memory("llama3-8b-dgx-h100", parallelism__cp=1, parallelism__dp=8)
    assert result == cli_json("memory", "llama3-8b-dgx-h100", "--set", "parallelism.cp=1", "--set", "parallelism.dp=8")
    assert result["memory"]["fits"] is False
    simulated = trainsim.simulate("llama3-8b-dgx-h100", parallelism__cp=1, parallelism__dp=8)
    assert simulated["memory"]["fits"] is False


def test_sweep_plans_flatten_into_table_rows():
    result = trainsim.sweep("llama3-8b-dgx-h100", fix={"pp": 1, "cp": 2}, vary={"tp": [1, 2]}, threads=1)
    assert result == cli_json(
        "sweep", "llama3-8b-dgx-h100", "--fix", "pp=1", "--fix", "cp=2", "--vary", "tp=1,2", "--threads", "1"
    )
    rows = trainsim.sweep_table(result)
    assert len(rows) == len(result["plans"]) > 0
    assert {row["parallelism.tp"] for row in rows} <= {1, 2}
    for row in rows:
        assert all(not isinstance(value, dict) for value in row.values())


def test_collective_rows_match_the_command_line():
    result = trainsim.collective("dgx-a100", "all_reduce", gpus=16, min_bytes="1M", max_bytes="64M")
    assert result == cli_json(
        "collective", "--cluster", "dgx-a100", "--op", "all_reduce", "--gpus", "16", "-b", "1M", "-e", "64M"
    )


def test_topology_matches_the_command_line():
    result = trainsim.topology("dgx-h100", nodes=2)
    assert result == cli_json("topology", "dgx-h100", "--set", "nodes=2")


def test_run_returns_exit_code_and_output():
    completed = trainsim.run("--version")
    assert completed.exit_code == 0
    assert completed.stdout.startswith("trainsim ")
    failed = trainsim.run("simulate", "no-such-experiment")
    assert failed.exit_code == 2
    assert "no-such-experiment" in failed.stderr


def test_commands_from_several_threads_give_the_same_results():
    expected = trainsim.simulate("llama3-8b-dgx-h100")
    results = [None] * 4

    def work(index):
        results[index] = trainsim.simulate("llama3-8b-dgx-h100")

    threads = [threading.Thread(target=work, args=(index,)) for index in range(len(results))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [expected] * len(results)
