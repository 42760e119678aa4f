from __future__ import annotations

from trainlint.checks._examples import job
from trainlint.checks.base import Example, Rule
from trainlint.core import Severity


class MissingReferencedFile(Rule):
    """
    ## What it does
    Reports an entry script, module, DeepSpeed config or recipe that a launcher names but that does
    not exist where the launcher would look (its `cd` directory, the directory trainlint runs in,
    the launcher's folder and the folders above it within the repository).

    ## Why is this bad
    The job fails at start, or, for a config, runs without the settings the author meant (a missing
    ZeRO config is a job without ZeRO). Repositories rename entry scripts and leave old launchers
    pointing at them.

    ## Example
    ```sh
    deepspeed llava/train/train_mem.py --deepspeed ./scripts/zero2.json ...
    ```
    where `llava/train/train_mem.py` was renamed.

    ## Fix safety
    No fix: which file was meant needs a person.
    """

    code = "TL302"
    name = "missing-referenced-file"
    severity = Severity.ERROR
    summary = "An entry script or config the launcher names does not exist"
    diagnostic_kinds = ("missing-file",)
    examples = (
        Example("the launcher runs train.py, which is missing",
                {"finetune.sh": "deepspeed --num_gpus 2 train.py --per_device_train_batch_size 4\n"}, True,
                at="finetune.sh:1:24"),
        Example("the entry script exists", job("--per_device_train_batch_size 4"), False),
    )
