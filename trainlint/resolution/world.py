"""How many training processes a launch starts, from the launcher's own options and environment."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Dict, Mapping, Optional, Sequence

from trainlint.core import Launcher, Setting, SourceKind, Unknown
from trainlint.knobs import K, coerce
from trainlint.readers.facts import Launch
from trainlint.readers.hostfile import HostFile
from trainlint.resolution.flags import option_value


@dataclass(frozen=True)
class UnknownNodes(Unknown):
    """A world size unknown because the launch spans a node count that cannot be resolved (`--nnodes
    $SLURM_NNODES`): the job runs on that many machines, so one machine's GPU count (`--num-gpus`) does not
    stand in for it."""


def _as_int(setting: Optional[Setting]) -> Optional[int]:
    if setting is None:
        return None
    value = coerce(K.WORLD_SIZE, setting.value).value
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _derived(value, reason_or_note: str, *sources: Optional[Setting]) -> Setting:
    via = tuple(s for s in sources if s is not None)
    return Setting(value, SourceKind.DERIVED, None, note=reason_or_note, via=via)


def _unknown(reason: str, *sources: Optional[Setting]) -> Setting:
    return _derived(Unknown(reason), reason, *sources)


def count_devices(spec: str) -> Optional[int]:
    """`0,1,2,3` -> 4, `0-7` -> 8 (deepspeed's `--include` takes ranges)."""
    items = [item.strip() for item in spec.split(",") if item.strip()]
    total = 0
    for item in items:
        low, dash, high = item.partition("-")
        if not low.isdigit() or (dash and (not high.isdigit() or int(high) < int(low))):
            return None
        total += int(high) - int(low) + 1 if dash else 1
    return total or None


def _visible_devices(env: Mapping[str, Setting]) -> Optional[Setting]:
    return env.get("CUDA_VISIBLE_DEVICES")


def visible_gpus(env: Mapping[str, Setting], reason: str) -> Optional[Setting]:
    """One process per GPU `CUDA_VISIBLE_DEVICES` lists, or None when it lists none trainlint can count."""
    visible = _visible_devices(env)
    if visible is None or not isinstance(visible.value, str) or not count_devices(visible.value):
        return None
    return _derived(count_devices(visible.value), f"CUDA_VISIBLE_DEVICES ({reason})", visible)


def _per_visible_gpu(env: Mapping[str, Setting], nodes: Optional[Setting], otherwise: str) -> Setting:
    """One process per GPU `CUDA_VISIBLE_DEVICES` lists on each node; unknown, for `otherwise`, when it lists
    none trainlint can count."""
    visible = _visible_devices(env)
    if visible is not None and isinstance(visible.value, str) and count_devices(visible.value):
        return _multiply(_derived(count_devices(visible.value), "CUDA_VISIBLE_DEVICES", visible), nodes,
                         "CUDA_VISIBLE_DEVICES")
    if nodes is not None and _as_int(nodes) != 1:
        # Every visible GPU of each of several machines (`NNODES=$WORLD_SIZE`): one machine's GPU count (`--num-gpus`)
        # is not the world size.
        reason = f"{otherwise}, on `{nodes.text or nodes.value}` machines"
        return _derived(UnknownNodes(reason), reason, nodes)
    return _unknown(otherwise)


def _multiply(per_node: Setting, nodes: Optional[Setting], label: str) -> Setting:
    per = _as_int(per_node)
    if per is None:
        return _unknown(f"{label} is `{per_node.text or per_node.value}`, not a number trainlint can resolve", per_node)
    if nodes is None:
        return _derived(per, label, per_node)
    count = _as_int(nodes)
    if count is None:
        return _derived(UnknownNodes(f"the node count `{nodes.text or nodes.value}` cannot be resolved statically"),
                        f"the node count `{nodes.text or nodes.value}` cannot be resolved statically", per_node, nodes)
    return _derived(per * count, f"{label} × nodes", per_node, nodes)


def _deepspeed(args: Sequence[Setting], env: Mapping[str, Setting], hostfile: Optional[HostFile]) -> Setting:
    include = option_value(args, "include")
    nodes = option_value(args, "num_nodes")
    if include is not None:
        if isinstance(include.value, str):
            hosts = include.value.split("@")
            counts = []
            for host in hosts:
                _, _, slots = host.partition(":")
                counts.append(count_devices(slots) if slots else None)
            if counts and all(c is not None for c in counts):
                return _derived(sum(counts), "--include", include)
        return _unknown("`--include` names hosts or slots trainlint cannot count", include)
    gpus = option_value(args, "num_gpus", "num-gpus")
    named = option_value(args, "hostfile")
    if named is not None:
        return _from_hostfile(named, hostfile, gpus, nodes, option_value(args, "exclude"))
    if gpus is not None:
        return _multiply(gpus, nodes, "--num_gpus")
    return _per_visible_gpu(env, nodes, "`deepspeed` without --num_gpus or --include uses every visible GPU")


def _from_hostfile(named: Setting, hostfile: Optional[HostFile], gpus: Optional[Setting], nodes: Optional[Setting],
                   exclude: Optional[Setting]) -> Setting:
    """deepspeed's runner over the machines of a hostfile: every slot of each host, the first `--num_nodes`
    hosts only, and `--num_gpus` GPUs on each of them (deepspeed/launcher/runner.py)."""
    if hostfile is None:
        return _unknown("the GPUs come from the hostfile", named)
    if hostfile.problem is not None:
        return _unknown(f"the hostfile cannot be used ({hostfile.problem.message})", named)
    if exclude is not None:
        return _unknown("`--exclude` removes hosts or slots of the hostfile", named, exclude)
    hosts = list(hostfile.hosts)
    if nodes is not None:
        count = _as_int(nodes)
        if count is None:
            reason = f"the node count `{nodes.text or nodes.value}` cannot be resolved statically"
            return _derived(UnknownNodes(reason), reason, nodes)
        hosts = hosts[:count]
    if not hosts:
        return _unknown("the hostfile names no host", named)
    machines = _derived(len(hosts), f"hosts in {hostfile.path}", named, nodes)
    if gpus is not None:
        per_host = _as_int(gpus)
        if per_host is None:
            return _unknown(f"--num_gpus is `{gpus.text or gpus.value}`, not a number trainlint can resolve", gpus)
        return _derived(per_host * len(hosts), "--num_gpus × hosts of the hostfile", gpus, machines)
    return _derived(sum(slots.value for _, slots in hosts), f"slots of the hosts in {hostfile.path}",
                    hosts[0][1], machines)


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
    processes = option_value(args, "num_processes", "num-processes")
    machines = option_value(args, "num_machines")
    if processes is None:
        return None  # the accelerate config file decides
    count = _as_int(processes)
    if count is None:
        return _unknown(f"`--num_processes {processes.text}` cannot be resolved statically", processes)
    # accelerate's --num_processes is the total over all machines.
    return _derived(count, "--num_processes", processes, machines)


# Options of a process-starting wrapper that take a value, by their long name; short spellings map to them.
_SRUN_SHORT = {"-n": "ntasks", "-N": "nodes"}
_MPIRUN_SHORT = {"-n": "np", "-np": "np", "-c": "np"}


def _wrapper_options(words: Sequence[Setting], short: Mapping[str, str]) -> Dict[str, Setting]:
    """`--ntasks=8`, `--ntasks 8`, `-n8`, `-n 8` -> {"ntasks": <8>}: the last one wins, as in the tools."""
    found: Dict[str, Setting] = {}
    index = 0
    while index < len(words):
        word = words[index]
        text = word.value if isinstance(word.value, str) else ""
        following = words[index + 1] if index + 1 < len(words) else None
        index += 1
        if text in short:
            if following is not None:
                found[short[text]] = following
                index += 1
            continue
        if text.startswith("--"):
            name, equals, raw = text[2:].partition("=")
            if equals:
                found[name] = replace(word, value=raw)
            elif following is not None and isinstance(following.value, str) and not following.value.startswith("-"):
                found[name] = following
                index += 1
            continue
        for prefix, name in short.items():
            if len(prefix) == 2 and text.startswith(prefix) and len(text) > 2 and text[2:].lstrip("=").isdigit():
                found[name] = replace(word, value=text[2:].lstrip("="))
    return found


def _srun(args: Sequence[Setting], sbatch: Mapping[str, Setting]) -> Setting:
    """srun starts `--ntasks` processes, else `--ntasks-per-node` on each of `--nodes`; what it is not
    told it takes from the allocation (`#SBATCH` lines of the same script)."""
    options = _wrapper_options(args, _SRUN_SHORT)
    for source, label in ((options, "srun"), (sbatch, "#SBATCH")):
        tasks = source.get("ntasks")
        if tasks is not None:
            count = _as_int(tasks)
            if count is None:
                return _unknown(f"{label} --ntasks `{tasks.text or tasks.value}` cannot be resolved statically", tasks)
            # --ntasks is the total; the node count travels with it, so that a port does not rewrite the
            # total of a multi-node layout alone (its --nodes and --ntasks-per-node would still say otherwise).
            return _derived(count, f"{label} --ntasks", tasks, options.get("nodes") or sbatch.get("nodes"))
        per_node = source.get("ntasks-per-node")
        if per_node is not None:
            nodes = options.get("nodes") or sbatch.get("nodes")
            return _multiply(per_node, nodes, f"{label} --ntasks-per-node")
    return _unknown("`srun` without --ntasks starts as many tasks as the allocation has")


def _mpirun(args: Sequence[Setting]) -> Setting:
    count = _wrapper_options(args, _MPIRUN_SHORT).get("np")
    if count is None:
        return _unknown("`mpirun` without -np starts one process per slot of the hosts")
    return _multiply(count, None, "mpirun -np")


def _llamafactory(env: Mapping[str, Setting]) -> Setting:
    """`llamafactory-cli train` starts torchrun itself: NPROC_PER_NODE × NNODES processes, or one per
    visible GPU."""
    nodes = env.get("NNODES")
    per_node = env.get("NPROC_PER_NODE")
    if per_node is not None:
        return _multiply(per_node, nodes, "NPROC_PER_NODE")
    return _per_visible_gpu(env, nodes, "`llamafactory-cli train` runs on every visible GPU")


def swift_runs_torchrun(env: Mapping[str, Setting]) -> bool:
    """Whether `swift sft|pt|rlhf` starts torchrun (swift/cli/main.py `use_torchrun`), not one plain process."""
    return "NPROC_PER_NODE" in env or "NNODES" in env


def _swift(env: Mapping[str, Setting]) -> Setting:
    """`swift sft|pt|rlhf` runs torchrun itself when NPROC_PER_NODE or NNODES is set: NPROC_PER_NODE × NNODES
    processes, torchrun's one per node when only NNODES is (swift/cli/main.py `use_torchrun`, `get_torchrun_args`).
    With neither it runs one plain process, which spreads the model over every GPU it sees; the script may also
    leave NPROC_PER_NODE to its caller, so the count is known only when the script names the GPUs it sees."""
    if swift_runs_torchrun(env):
        per_node = env.get("NPROC_PER_NODE") or _derived(1, "torchrun's one process per node")
        return _multiply(per_node, env.get("NNODES"), "NPROC_PER_NODE" if "NPROC_PER_NODE" in env else "NNODES")
    visible = _visible_devices(env)
    if visible is not None and isinstance(visible.value, str) and count_devices(visible.value):
        # Not derived from the device list: that says how many GPUs the one process spreads over, not a count of
        # processes a port may rewrite.
        return _derived(1, "`swift` without NPROC_PER_NODE runs one process, on the GPUs CUDA_VISIBLE_DEVICES lists")
    return _unknown("`swift` without NPROC_PER_NODE runs one process (unless the caller exports NPROC_PER_NODE), "
                    "spread over every GPU it sees")


_TORCH_LAUNCHERS = (Launcher.TORCHRUN, Launcher.TORCH_DISTRIBUTED_RUN, Launcher.TORCH_DISTRIBUTED_LAUNCH)


def world_size(launch: Launch, sbatch: Optional[Mapping[str, Setting]] = None,
               hostfile: Optional[HostFile] = None) -> Optional[Setting]:
    """The total process count, Unknown with a reason, or None when a config file decides (accelerate).
    `sbatch` holds the `#SBATCH` options of the launching script (an `srun` inherits them); `hostfile`, the
    hostfile `deepspeed --hostfile` names, when it was read."""
    if launch.launcher == Launcher.PYTHON and launch.wrapper in ("srun", "mpirun", "mpiexec"):
        started = _srun(launch.wrapper_args, sbatch or {}) if launch.wrapper == "srun" else \
            _mpirun(launch.wrapper_args)
        if started.value == 1:
            # One task is one `python` process, as without the wrapper: how many GPUs it drives is the script's
            # choice (a Ray driver such as verl's places its workers itself), so the launch states no GPU count.
            return _derived(1, f"`{launch.wrapper}` starts one task: a plain `python` process")
        return started
    if launch.launcher == Launcher.DEEPSPEED:
        return _deepspeed(launch.launcher_args, launch.env, hostfile)
    if launch.launcher in _TORCH_LAUNCHERS:
        return _torchrun(launch.launcher_args, launch.env)
    if launch.launcher == Launcher.ACCELERATE:
        return _accelerate(launch.launcher_args)
    if launch.launcher == Launcher.PYTHON:
        return _derived(1, "a plain `python` launch is one process")
    if launch.launcher == Launcher.LLAMAFACTORY_CLI:
        return _llamafactory(launch.env)
    if launch.launcher == Launcher.SWIFT:
        return _swift(launch.env)
    return None
