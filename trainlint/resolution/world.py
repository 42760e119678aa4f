"""How many training processes a launch starts, from the launcher's own options and environment."""
from __future__ import annotations

from typing import Mapping, Optional, Sequence

from trainlint.core import Setting, SourceKind, Unknown
from trainlint.knobs import coerce
from trainlint.readers.facts import Launch
from trainlint.resolution.flags import option_value


def _as_int(setting: Optional[Setting]) -> Optional[int]:
    if setting is None:
        return None
    value = coerce("world_size", setting.value).value
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _derived(value, reason_or_note: str, *sources: Optional[Setting]) -> Setting:
    via = tuple(s for s in sources if s is not None)
    return Setting(value, SourceKind.DERIVED, None, note=reason_or_note, via=via)


def _unknown(reason: str, *sources: Optional[Setting]) -> Setting:
    return _derived(Unknown(reason), reason, *sources)


def _count_devices(spec: str) -> Optional[int]:
    """`0,1,2,3` -> 4."""
    items = [item for item in spec.split(",") if item.strip()]
    return len(items) if items and all(i.strip().isdigit() for i in items) else None


def _visible_devices(env: Mapping[str, Setting]) -> Optional[Setting]:
    return env.get("CUDA_VISIBLE_DEVICES")


def _multiply(per_node: Setting, nodes: Optional[Setting], label: str) -> Setting:
    per = _as_int(per_node)
    if per is None:
        return _unknown(f"{label} is `{per_node.text or per_node.value}`, not a number trainlint can resolve", per_node)
    if nodes is None:
        return _derived(per, label, per_node)
    count = _as_int(nodes)
    if count is None:
        return _unknown(f"the node count `{nodes.text or nodes.value}` cannot be resolved statically", per_node, nodes)
    return _derived(per * count, f"{label} × nodes", per_node, nodes)


def _deepspeed(args: Sequence[Setting], env: Mapping[str, Setting]) -> Setting:
    include = option_value(args, "include")
    nodes = option_value(args, "num_nodes")
    if include is not None:
        if isinstance(include.value, str):
            hosts = include.value.split("@")
            counts = []
            for host in hosts:
                _, _, slots = host.partition(":")
                counts.append(_count_devices(slots) if slots else None)
            if counts and all(c is not None for c in counts):
                return _derived(sum(counts), "--include", include)
        return _unknown("`--include` names hosts or slots trainlint cannot count", include)
    gpus = option_value(args, "num_gpus", "num-gpus")
    if gpus is not None:
        return _multiply(gpus, nodes, "--num_gpus")
    hostfile = option_value(args, "hostfile")
    if hostfile is not None:
        return _unknown("the GPUs come from the hostfile", hostfile)
    visible = _visible_devices(env)
    if visible is not None and isinstance(visible.value, str) and _count_devices(visible.value):
        return _multiply(_derived(_count_devices(visible.value), "CUDA_VISIBLE_DEVICES", visible), nodes,
                         "CUDA_VISIBLE_DEVICES")
    return _unknown("`deepspeed` without --num_gpus or --include uses every visible GPU")


def _torchrun(args: Sequence[Setting], env: Mapping[str, Setting]) -> Setting:
    per_node = option_value(args, "nproc_per_node", "nproc-per-node")
    nodes = option_value(args, "nnodes")
    if nodes is not None and isinstance(nodes.value, str) and ":" in nodes.value:
        return _unknown(f"elastic node range `{nodes.value}`", nodes)
    if per_node is None:
        return _multiply(_derived(1, "torchrun default --nproc_per_node 1"), nodes, "--nproc_per_node")
    if isinstance(per_node.value, str) and per_node.value in ("gpu", "auto"):
        return _unknown(f"`--nproc_per_node {per_node.value}` uses every visible GPU", per_node)
    return _multiply(per_node, nodes, "--nproc_per_node")


def _accelerate(args: Sequence[Setting]) -> Optional[Setting]:
    processes = option_value(args, "num_processes")
    machines = option_value(args, "num_machines")
    if processes is None:
        return None  # the accelerate config file decides
    count = _as_int(processes)
    if count is None:
        return _unknown(f"`--num_processes {processes.text}` cannot be resolved statically", processes)
    # accelerate's --num_processes is the total over all machines.
    return _derived(count, "--num_processes", processes, machines)


def world_size(launch: Launch) -> Optional[Setting]:
    """The total process count, Unknown with a reason, or None when a config file decides (accelerate)."""
    if launch.launcher == "deepspeed":
        return _deepspeed(launch.launcher_args, launch.env)
    if launch.launcher in ("torchrun", "torch.distributed.run", "torch.distributed.launch"):
        return _torchrun(launch.launcher_args, launch.env)
    if launch.launcher == "accelerate":
        return _accelerate(launch.launcher_args)
    if launch.launcher == "python":
        return _derived(1, "a plain `python` launch is one process")
    return None
