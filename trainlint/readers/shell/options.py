"""What launchers, wrappers and shells look like on a command line, as data."""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import FrozenSet, Mapping, Tuple

from trainlint.core import Launcher  # defined with the types runs carry; imported from here too


@dataclass(frozen=True)
class LauncherSyntax:
    """How a launcher's own options are written, to tell them from the entry script that follows them.

    Options are looked up after normalising `-` to `_` past the leading dashes (`--nproc-per-node`)."""

    value_options: FrozenSet[str]  # take the next word as their value
    flags: FrozenSet[str]  # take no value
    value_prefixes: Tuple[str, ...] = ()  # whole families of options that take a value (`--fsdp_...`)
    module_flags: Tuple[str, ...] = ("-m", "--module")  # the entry is a module, not a file


TORCHRUN_VALUE_OPTIONS = frozenset(
    {
        "--nnodes",
        "--nproc_per_node",
        "--node_rank",
        "--master_addr",
        "--master_port",
        "--rdzv_backend",
        "--rdzv_endpoint",
        "--rdzv_id",
        "--rdzv_conf",
        "--max_restarts",
        "--monitor_interval",
        "--start_method",
        "--role",
        "--log_dir",
        "-r",
        "--redirects",
        "-t",
        "--tee",
        "--local_addr",
        "--logs_specs",
        "--local_ranks_filter",
        "--omp_num_threads",
        "--event_log_handler",
        "--numa_binding",
        "--nproc",
    }
)
TORCHRUN_FLAGS = frozenset({"--standalone", "--no_python", "--run_path", "--use_env", "--virtual_local_rank"})
DEEPSPEED_VALUE_OPTIONS = frozenset(
    {
        "-H",
        "--hostfile",
        "-i",
        "--include",
        "-e",
        "--exclude",
        "--num_nodes",
        "--min_elastic_nodes",
        "--max_elastic_nodes",
        "--num_gpus",
        "--num_accelerators",
        "--master_port",
        "--master_addr",
        "--node_rank",
        "--launcher",
        "--launcher_args",
        "--enable_each_rank_log",
        "--autotuning",
        "--ssh_port",
        "--venv_script",
        "--comment",
        "--bind_core_list",
    }
)
DEEPSPEED_FLAGS = frozenset(
    {
        "--no_python",
        "--no_local_rank",
        "--no_ssh_check",
        "--force_multi",
        "--save_pid",
        "--elastic_training",
        "--bind_cores_to_rank",
        "--no_ssh",
    }
)
ACCELERATE_VALUE_OPTIONS = frozenset(
    {
        "--config_file",
        "--num_processes",
        "--num_machines",
        "--machine_rank",
        "--main_process_ip",
        "--main_process_port",
        "--mixed_precision",
        "--gpu_ids",
        "--num_cpu_threads_per_process",
        "--zero_stage",
        "--offload_optimizer_device",
        "--offload_param_device",
        "--offload_optimizer_nvme_path",
        "--offload_param_nvme_path",
        "--gradient_accumulation_steps",
        "--gradient_clipping",
        "--zero3_init_flag",
        "--zero3_save_16bit_model",
        "--rdzv_backend",
        "--rdzv_conf",
        "--max_restarts",
        "--monitor_interval",
        "--main_training_function",
        "--tpu_cluster",
        "--tpu_vm",
        "--env",
        "--mpirun_hostfile",
        "--mpirun_ccl",
    }
)
ACCELERATE_VALUE_PREFIXES = ("--fsdp_", "--deepspeed_", "--megatron_lm_", "--dynamo_", "--tpu_", "--fp8_")
ACCELERATE_FLAGS = frozenset(
    {
        "--cpu",
        "--multi_gpu",
        "--tpu",
        "--use_deepspeed",
        "--use_fsdp",
        "--use_megatron_lm",
        "--use_xpu",
        "--debug",
        "--no_python",
        "--quiet",
        "-q",
        "--same_network",
        "--enable_cpu_affinity",
        "--downcast_bf16",
        "--ipex",
        "--use_cpu",
        "--dynamo_use_fullgraph",
        "--dynamo_use_dynamic",
        "--dynamo_use_regional_compilation",
        "--fsdp_use_orig_params",
        "--tpu_use_cluster",
        "--tpu_use_sudo",
        "--mpirun_ccl",
    }
)
TORCHRUN_SYNTAX = LauncherSyntax(TORCHRUN_VALUE_OPTIONS, TORCHRUN_FLAGS)
DEEPSPEED_SYNTAX = LauncherSyntax(DEEPSPEED_VALUE_OPTIONS, DEEPSPEED_FLAGS, module_flags=("--module",))
ACCELERATE_SYNTAX = LauncherSyntax(ACCELERATE_VALUE_OPTIONS, ACCELERATE_FLAGS, ACCELERATE_VALUE_PREFIXES)
# torch.distributed.launch and .run read torchrun's options.
LAUNCHER_SYNTAX: Mapping[Launcher, LauncherSyntax] = MappingProxyType(
    {
        Launcher.DEEPSPEED: DEEPSPEED_SYNTAX,
        Launcher.TORCHRUN: TORCHRUN_SYNTAX,
        Launcher.TORCH_DISTRIBUTED_LAUNCH: TORCHRUN_SYNTAX,
        Launcher.TORCH_DISTRIBUTED_RUN: TORCHRUN_SYNTAX,
        Launcher.ACCELERATE: ACCELERATE_SYNTAX,
    }
)
# Options of the python interpreter itself that take the next word as their value.
PYTHON_VALUE_OPTIONS = ("-W", "-X")
# Words that run the rest of the line as a command and do not change what the launch is.
TRANSPARENT_WRAPPERS = frozenset({"nohup", "time", "exec", "command", "builtin", "env"})
# Words whose own options we do not know: the launch is the first launcher word after them.
SEARCHING_WRAPPERS = frozenset(
    {"srun", "mpirun", "mpiexec", "timeout", "numactl", "taskset", "stdbuf", "xargs", "nice", "ionice", "sudo", "chrt"}
)
ISOLATING_WRAPPERS = frozenset({"srun", "mpirun", "mpiexec"})
SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
LAUNCHER_NAMES = frozenset({"deepspeed", "torchrun", "accelerate", "llamafactory-cli", "axolotl", "swift"})
# `python -m MODULE` that is a launcher in disguise.
PYTHON_MODULE_LAUNCHERS: Mapping[str, Launcher] = MappingProxyType(
    {
        "torch.distributed.launch": Launcher.TORCH_DISTRIBUTED_LAUNCH,
        "torch.distributed.run": Launcher.TORCH_DISTRIBUTED_RUN,
        "deepspeed.launcher.runner": Launcher.DEEPSPEED,
        "accelerate.commands.launch": Launcher.ACCELERATE,
    }
)
