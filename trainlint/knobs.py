"""Canonical settings ("knobs"), every spelling that writes them, their types and framework defaults."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Dict, Optional, Tuple

from trainlint.core import Unknown, Value

# Namespaces a name is written in. "args" covers CLI flags, HF argument dataclass fields,
# TrainingArguments(...) keywords and LLaMA-Factory YAML keys, which all share HF's names.
ARGS, DEEPSPEED, AXOLOTL, ACCELERATE = "args", "deepspeed", "axolotl", "accelerate"
# ms-swift's flags: HfArgumentParser over TrainingArguments and ms-swift's own argument classes, so every "args"
# spelling holds unless a name below is its own (or is listed in SWIFT_OTHER_MEANINGS).
SWIFT = "swift"
# LLaMA-Factory's v1 trainer: its own argument classes, of which only the names below mean what HF's do.
LLAMAFACTORY_V1 = "llamafactory-v1"


class K(str, Enum):
    """Every canonical knob name as a symbol: a typo is an AttributeError, not a knob that is never set.
    String-valued (and printed as the name) so settings keyed by plain names, the JSON output and every
    comparison with a string keep working. A test keeps it equal to the names in KNOBS."""

    PER_DEVICE_TRAIN_BATCH_SIZE = "per_device_train_batch_size"
    PER_DEVICE_EVAL_BATCH_SIZE = "per_device_eval_batch_size"
    GRADIENT_ACCUMULATION_STEPS = "gradient_accumulation_steps"
    GLOBAL_BATCH_SIZE = "global_batch_size"
    WORLD_SIZE = "world_size"
    NUM_NODES = "num_nodes"
    GRADIENT_CHECKPOINTING = "gradient_checkpointing"
    BF16 = "bf16"
    FP8 = "fp8"
    FP16 = "fp16"
    TF32 = "tf32"
    MIXED_PRECISION = "mixed_precision"
    EVAL_STRATEGY = "eval_strategy"
    EVAL_STEPS = "eval_steps"
    LOGGING_STEPS = "logging_steps"
    MAX_STEPS = "max_steps"
    NUM_TRAIN_EPOCHS = "num_train_epochs"
    MAX_SEQ_LENGTH = "max_seq_length"
    MAX_SOURCE_LENGTH = "max_source_length"
    MAX_TARGET_LENGTH = "max_target_length"
    ZERO_STAGE = "zero_stage"
    OFFLOAD_OPTIMIZER = "offload_optimizer"
    OFFLOAD_PARAM = "offload_param"
    REDUCE_BUCKET_SIZE = "reduce_bucket_size"
    OVERLAP_COMM = "overlap_comm"
    CONTIGUOUS_GRADIENTS = "contiguous_gradients"
    OFFLOAD = "offload"
    DS_MICRO_BATCH = "ds_micro_batch"
    DS_GRADIENT_ACCUMULATION_STEPS = "ds_gradient_accumulation_steps"
    DS_TRAIN_BATCH_SIZE = "ds_train_batch_size"
    DS_BF16 = "ds_bf16"
    DS_FP16 = "ds_fp16"
    DEEPSPEED = "deepspeed"
    FSDP = "fsdp"
    DISTRIBUTED_TYPE = "distributed_type"
    FSDP_SHARDING_STRATEGY = "fsdp_sharding_strategy"
    FSDP_RESHARD_AFTER_FORWARD = "fsdp_reshard_after_forward"
    FSDP_OFFLOAD_PARAMS = "fsdp_offload_params"
    FSDP_VERSION = "fsdp_version"
    LORA = "lora"
    FINETUNING_TYPE = "finetuning_type"
    ADAPTER = "adapter"
    LORA_R = "lora_r"
    LORA_MODULES_TO_SAVE = "lora_modules_to_save"
    GRADIENT_CHECKPOINTING_KWARGS = "gradient_checkpointing_kwargs"
    USE_LIGER_KERNEL = "use_liger_kernel"
    BITS = "bits"
    LOAD_IN_4BIT = "load_in_4bit"
    LOAD_IN_8BIT = "load_in_8bit"
    MODEL_NAME_OR_PATH = "model_name_or_path"
    MODEL_TYPE = "model_type"
    VISION_TOWER = "vision_tower"
    IMAGE_TILES = "image_tiles"
    IMAGE_ASPECT_RATIO = "image_aspect_ratio"
    TUNE_VISION = "tune_vision"
    FREEZE_VISION_TOWER = "freeze_vision_tower"
    TUNE_MM_MLP_ADAPTER = "tune_mm_mlp_adapter"
    MM_TUNABLE_PARTS = "mm_tunable_parts"
    FREEZE_BACKBONE = "freeze_backbone"
    FREEZE_LLM = "freeze_llm"
    AUTO_FIND_BATCH_SIZE = "auto_find_batch_size"
    USE_GALORE = "use_galore"
    USE_PEFT = "use_peft"
    USE_VLLM = "use_vllm"
    TRL_PEFT_CONFIG = "trl_peft_config"
    PACKING = "packing"
    USE_APOLLO = "use_apollo"
    USE_BADAM = "use_badam"
    PREDICTION_LOSS_ONLY = "prediction_loss_only"
    EVAL_ACCUMULATION_STEPS = "eval_accumulation_steps"
    ATTN_IMPLEMENTATION = "attn_implementation"
    ATTENTION_PATCH = "attention_patch"
    FLASH_ATTENTION = "flash_attention"
    PURE_BF16 = "pure_bf16"
    OPTIM = "optim"
    TORCH_DTYPE = "torch_dtype"
    ALLOC_CONF = "alloc_conf"
    EVAL_DATA = "eval_data"

    def __str__(self) -> str:  # f-strings print the name (Python 3.11 would print K.NAME)
        return self.value


@dataclass(frozen=True)
class Knob:
    name: str
    type: type
    description: str
    spellings: Dict[str, Tuple[str, ...]]
    default: Value = None  # HF TrainingArguments default; None when the framework has none
    # Words a framework accepts for this knob beyond its type, and what they mean here
    # (axolotl's `gradient_checkpointing: offload` is checkpointing, with activations on the CPU).
    aliases: Tuple[Tuple[str, Value], ...] = ()


KNOBS: Tuple[Knob, ...] = (
    Knob(
        K.PER_DEVICE_TRAIN_BATCH_SIZE,
        int,
        "per-device train micro-batch",
        {
            ARGS: (
                "per_device_train_batch_size",
                "per_gpu_train_batch_size",
                "micro_batch_size",
                "micro-batch-size",
                "train_micro_batch_size_per_gpu",
            ),
            AXOLOTL: ("micro_batch_size",),
            SWIFT: ("per_device_train_batch_size", "batch_size"),  # `--batch_size` before ms-swift 3.0
            LLAMAFACTORY_V1: ("micro_batch_size",),
        },
        8,
    ),
    Knob(
        K.PER_DEVICE_EVAL_BATCH_SIZE,
        int,
        "per-device eval batch",
        {
            ARGS: ("per_device_eval_batch_size", "per_gpu_eval_batch_size", "eval_batch_size", "eval-micro-batch-size"),
            AXOLOTL: ("eval_batch_size",),
        },
        8,
    ),
    Knob(
        K.GRADIENT_ACCUMULATION_STEPS,
        int,
        "gradient accumulation steps",
        {
            ARGS: ("gradient_accumulation_steps", "gradient-accumulation-steps", "grad_accum_steps"),
            AXOLOTL: ("gradient_accumulation_steps",),
            ACCELERATE: ("gradient_accumulation_steps", "deepspeed_config.gradient_accumulation_steps"),
        },
        1,
    ),
    Knob(
        K.GLOBAL_BATCH_SIZE,
        int,
        "global batch from which accumulation is derived",
        {ARGS: ("global-batch-size", "global_batch_size"), LLAMAFACTORY_V1: ("global_batch_size",)},
    ),
    Knob(K.WORLD_SIZE, int, "number of training processes (GPUs)", {ACCELERATE: ("num_processes",)}),
    Knob(K.NUM_NODES, int, "number of nodes", {ACCELERATE: ("num_machines",)}),
    Knob(
        K.GRADIENT_CHECKPOINTING,
        bool,
        "activation (gradient) checkpointing",
        {
            ARGS: ("gradient_checkpointing", "checkpoint-activations", "recompute-activations"),
            # FSDP's own activation checkpointing is checkpointing too (the Trainer refuses both at once).
            AXOLOTL: ("gradient_checkpointing", "fsdp_config.activation_checkpointing",
                      "fsdp_config.fsdp_activation_checkpointing"),
            ACCELERATE: ("fsdp_config.fsdp_activation_checkpointing",),
        },
        False,
        aliases=(("offload", True), ("offload_disk", True), ("unsloth", True)),
    ),
    Knob(K.BF16, bool, "bf16 mixed precision", {ARGS: ("bf16",), AXOLOTL: ("bf16",)}, False),
    Knob(K.FP16, bool, "fp16 mixed precision", {ARGS: ("fp16",), AXOLOTL: ("fp16",)}, False),
    # axolotl's float8 training (torchao): matmuls in fp8 under 16-bit autocast, so not an fp32 job.
    Knob(K.FP8, bool, "fp8 mixed precision", {AXOLOTL: ("fp8",)}, False),
    Knob(K.TF32, bool, "TF32 matmuls", {ARGS: ("tf32",), AXOLOTL: ("tf32",)}),
    Knob(K.MIXED_PRECISION, str, "accelerate mixed precision", {ACCELERATE: ("mixed_precision",)}),
    Knob(K.EVAL_STRATEGY, str, "when evaluation runs", {ARGS: ("eval_strategy", "evaluation_strategy")}, "no"),
    Knob(K.EVAL_STEPS, float, "steps between evaluations", {ARGS: ("eval_steps",), AXOLOTL: ("eval_steps",)}),
    Knob(K.LOGGING_STEPS, float, "steps between logs", {ARGS: ("logging_steps",), AXOLOTL: ("logging_steps",)}, 500),
    Knob(K.MAX_STEPS, int, "total optimizer steps",
         {ARGS: ("max_steps",), AXOLOTL: ("max_steps",), LLAMAFACTORY_V1: ("max_steps",)}, -1),
    Knob(K.NUM_TRAIN_EPOCHS, float, "epochs",
         {ARGS: ("num_train_epochs",), AXOLOTL: ("num_epochs",), LLAMAFACTORY_V1: ("num_train_epochs",)}, 3.0),
    Knob(
        K.MAX_SEQ_LENGTH,
        int,
        "maximum sequence length in tokens",
        {
            ARGS: (
                "model_max_length",
                "max_seq_length",
                "max_length",
                "cutoff_len",
                "seq_length",
                "seq-length",
                "max_seq_len",
                "max-seq-len",
            ),
            AXOLOTL: ("sequence_len",),
            SWIFT: ("max_length",),
            LLAMAFACTORY_V1: ("cutoff_len",),
        },
    ),
    # Seq2seq-style scripts (ChatGLM's P-tuning, MedicalGPT's reward model) bound the prompt and the
    # response apart; a decoder-only model trains on them concatenated (resolution derives the row length).
    Knob(K.MAX_SOURCE_LENGTH, int, "maximum prompt length in tokens", {ARGS: ("max_source_length",)}),
    Knob(K.MAX_TARGET_LENGTH, int, "maximum response length in tokens", {ARGS: ("max_target_length",)}),
    Knob(
        K.ZERO_STAGE,
        int,
        "DeepSpeed ZeRO stage",
        {DEEPSPEED: ("zero_optimization.stage",), ACCELERATE: ("deepspeed_config.zero_stage",)},
        0,
    ),
    Knob(
        K.OFFLOAD_OPTIMIZER,
        str,
        "ZeRO optimizer offload device",
        {
            DEEPSPEED: ("zero_optimization.offload_optimizer.device", "zero_optimization.cpu_offload"),
            ACCELERATE: ("deepspeed_config.offload_optimizer_device",),
        },
        "none",
    ),
    Knob(
        K.OFFLOAD_PARAM,
        str,
        "ZeRO parameter offload device",
        {
            DEEPSPEED: ("zero_optimization.offload_param.device", "zero_optimization.cpu_offload_params"),
            ACCELERATE: ("deepspeed_config.offload_param_device",),
        },
        "none",
    ),
    # ZeRO-1/2 gradient buckets (docs/memory-model.md §5); no default here: DeepSpeed's own defaults depend
    # on the stage and "auto" is filled by the HF integration, so the memory model decides.
    Knob(K.REDUCE_BUCKET_SIZE, float, "ZeRO gradient bucket, in elements",
         {DEEPSPEED: ("zero_optimization.reduce_bucket_size",)}),
    Knob(K.OVERLAP_COMM, bool, "ZeRO overlaps gradient reduction with backward",
         {DEEPSPEED: ("zero_optimization.overlap_comm",)}),
    Knob(K.CONTIGUOUS_GRADIENTS, bool, "ZeRO copies gradients into a contiguous bucket",
         {DEEPSPEED: ("zero_optimization.contiguous_gradients",)}),
    # DeepSpeed-Chat-style `--offload`: the config builder puts optimizer states and parameters on the
    # CPU. Set only when the entry script hands the switch to a config builder deepspeed.initialize gets.
    Knob(K.OFFLOAD, bool, "ZeRO offload switch of a DeepSpeed config built in code", {}),
    Knob(
        K.DS_MICRO_BATCH,
        int,
        "DeepSpeed train_micro_batch_size_per_gpu",
        {DEEPSPEED: ("train_micro_batch_size_per_gpu",)},
    ),
    Knob(
        K.DS_GRADIENT_ACCUMULATION_STEPS,
        int,
        "DeepSpeed gradient_accumulation_steps",
        {DEEPSPEED: ("gradient_accumulation_steps",)},
    ),
    Knob(K.DS_TRAIN_BATCH_SIZE, int, "DeepSpeed train_batch_size", {DEEPSPEED: ("train_batch_size",)}),
    Knob(K.DS_BF16, bool, "DeepSpeed bf16.enabled", {DEEPSPEED: ("bf16.enabled", "bfloat16.enabled")}),
    Knob(K.DS_FP16, bool, "DeepSpeed fp16.enabled", {DEEPSPEED: ("fp16.enabled",)}),
    # `--deepspeed_config` is the path flag deepspeed.add_config_arguments adds (its `--deepspeed` is a switch).
    Knob(K.DEEPSPEED, str, "DeepSpeed config path",
         {ARGS: ("deepspeed", "deepspeed_config"), AXOLOTL: ("deepspeed",)}),
    # FSDP shards like ZeRO: the resolution derives zero_stage and offload from these.
    Knob(
        K.FSDP,
        str,
        "HF/axolotl FSDP options (`full_shard auto_wrap`, `shard_grad_op offload`)",
        {ARGS: ("fsdp",), AXOLOTL: ("fsdp",)},
    ),
    Knob(
        K.DISTRIBUTED_TYPE,
        str,
        "accelerate distributed backend (FSDP, DEEPSPEED, MULTI_GPU)",
        {ACCELERATE: ("distributed_type",)},
    ),
    Knob(
        K.FSDP_SHARDING_STRATEGY,
        str,
        "FSDP sharding strategy (FULL_SHARD, SHARD_GRAD_OP, ... or 1-5)",
        {
            ACCELERATE: ("fsdp_config.fsdp_sharding_strategy",),
            AXOLOTL: ("fsdp_config.fsdp_sharding_strategy", "fsdp_config.sharding_strategy"),
        },
    ),
    Knob(
        K.FSDP_RESHARD_AFTER_FORWARD,
        str,
        "FSDP2: free gathered weights after forward (full sharding)",
        {
            ACCELERATE: ("fsdp_config.fsdp_reshard_after_forward",),
            AXOLOTL: ("fsdp_config.reshard_after_forward", "fsdp_config.fsdp_reshard_after_forward"),
        },
    ),
    Knob(
        K.FSDP_OFFLOAD_PARAMS,
        bool,
        "FSDP parameter (and optimizer) offload to CPU",
        {
            ACCELERATE: ("fsdp_config.fsdp_offload_params",),
            AXOLOTL: ("fsdp_config.offload_params", "fsdp_config.fsdp_offload_params"),
        },
    ),
    Knob(
        K.FSDP_VERSION,
        int,
        "FSDP version (1 or 2)",
        {ACCELERATE: ("fsdp_config.fsdp_version",), AXOLOTL: ("fsdp_version", "fsdp_config.fsdp_version")},
    ),
    Knob(
        K.LORA,
        bool,
        "LoRA adapters instead of full fine-tuning",
        {ARGS: ("lora_enable", "use_lora", "lora"), AXOLOTL: ()},
    ),
    Knob(
        K.FINETUNING_TYPE,
        str,
        "how the model is trained: full, freeze, lora",
        {ARGS: ("finetuning_type", "language_training_method", "training_method")},
    ),
    Knob(K.ADAPTER, str, "axolotl adapter", {AXOLOTL: ("adapter",)}),
    Knob(K.LORA_R, int, "LoRA rank", {ARGS: ("lora_r", "lora_rank", "lora_dim"), AXOLOTL: ("lora_r",),
                                      SWIFT: ("lora_rank",)}),
    # peft's `modules_to_save`: modules trained as full copies next to the adapters (LLaMA-Factory's
    # `additional_target`, axolotl's `lora_modules_to_save`), comma-separated names.
    Knob(K.LORA_MODULES_TO_SAVE, str, "modules trained in full next to LoRA",
         {ARGS: ("lora_modules_to_save", "additional_target"), AXOLOTL: ("lora_modules_to_save",)}),
    # TrainingArguments.gradient_checkpointing_kwargs (transformers >= 4.35): `{"use_reentrant": false}` lets a LoRA job
    # checkpoint without making its inputs require grad (trainlint.readers.python.adapter_inputs).
    Knob(K.GRADIENT_CHECKPOINTING_KWARGS, str, "keyword arguments of the checkpoint function",
         {ARGS: ("gradient_checkpointing_kwargs",),
          AXOLOTL: ("gradient_checkpointing_kwargs", "gradient_checkpointing_kwargs.use_reentrant")}),
    Knob(K.BITS, int, "quantized base bits", {ARGS: ("bits", "quantization_bit", "q_lora_bits"),
                                              SWIFT: ("quant_bits", "quantization_bit")}),
    # TrainingArguments.use_liger_kernel (transformers >= 4.45) patches the model with Liger's kernels, its fused
    # linear cross-entropy among them; `use_liger` is the same switch in scripts of their own.
    Knob(K.USE_LIGER_KERNEL, bool, "Liger kernels", {ARGS: ("use_liger_kernel", "use_liger")}),
    Knob(K.LOAD_IN_4BIT, bool, "4-bit base", {ARGS: ("load_in_4bit", "q_lora"), AXOLOTL: ("load_in_4bit",)}),
    Knob(K.LOAD_IN_8BIT, bool, "8-bit base", {ARGS: ("load_in_8bit",), AXOLOTL: ("load_in_8bit",)}),
    Knob(
        K.MODEL_NAME_OR_PATH,
        str,
        "base model",
        {
            ARGS: (
                "model_name_or_path",
                "model_name",
                "model_path",
                "model_id",
                "pretrained_model_name_or_path",
                "base_model",
                "llm_path",
                "pretrained_ckpt",
                "pretrained-ckpt",
            ),
            AXOLOTL: ("base_model",),
            SWIFT: ("model", "model_id_or_path"),
            LLAMAFACTORY_V1: ("model",),
        },
    ),
    Knob(K.MODEL_TYPE, str, "model family an entry script selects its classes by", {ARGS: ("model_type",)}),
    Knob(K.VISION_TOWER, str, "vision encoder", {ARGS: ("vision_tower", "image_tower", "vision_model")}),
    Knob(
        K.IMAGE_TILES,
        int,
        "maximum image slices/crops per sample",
        {ARGS: ("max_slice_nums", "hd_num", "max_dynamic_patch", "max_num_tiles", "image_crops", "num_crops")},
    ),
    Knob(K.IMAGE_ASPECT_RATIO, str, "image preprocessing mode", {ARGS: ("image_aspect_ratio",)}),
    Knob(
        K.TUNE_VISION,
        bool,
        "vision encoder is trained",
        {ARGS: ("tune_vision", "unfreeze_vision_tower", "tune_vision_tower")},
    ),
    Knob(K.FREEZE_VISION_TOWER, bool, "vision encoder is frozen", {ARGS: ("freeze_vision_tower", "fix_vit")}),
    Knob(K.TUNE_MM_MLP_ADAPTER, bool, "only the multimodal projector trains", {ARGS: ("tune_mm_mlp_adapter",)}),
    # LLaVA-NeXT/OneVision's train.py: when given, everything is frozen, then each named part trains
    # (`mm_mlp_adapter`, `mm_vision_resampler`, `mm_vision_tower`, `mm_language_model`).
    Knob(K.MM_TUNABLE_PARTS, str, "the parts of a multimodal model that train", {ARGS: ("mm_tunable_parts",)}),
    Knob(K.FREEZE_BACKBONE, bool, "the language model is frozen", {ARGS: ("freeze_backbone",)}),
    # A script with a switch of its own for the language model (InternVL, Phi3-Vision-Finetune) names the LLM with it;
    # its `freeze_backbone`, when it has one, freezes another part (InternVL's vision model).
    Knob(K.FREEZE_LLM, bool, "the language model is frozen (its own switch)", {ARGS: ("freeze_llm",)}),
    Knob(
        K.AUTO_FIND_BATCH_SIZE,
        bool,
        "the trainer halves the batch after an out-of-memory error",
        {ARGS: ("auto_find_batch_size",)},
        False,
    ),
    # Samples packed into rows filled to the length limit (TRL's and LLaMA-Factory's `packing`, axolotl's
    # `sample_packing`): every row is as long as the limit, whatever the data.
    Knob(K.PACKING, bool, "samples packed into rows of the length limit",
         {ARGS: ("packing", "neat_packing"), AXOLOTL: ("sample_packing",)}),
    Knob(K.USE_GALORE, bool, "GaLore low-rank optimizer states", {ARGS: ("use_galore",)}),
    Knob(K.USE_APOLLO, bool, "APOLLO optimizer", {ARGS: ("use_apollo",)}),
    # TRL's ModelConfig switch, which its `get_peft_config(model_args)` reads; LoRA follows it only when the trainer's
    # `peft_config` is that call (TRL_PEFT_CONFIG, from the entry script's code).
    Knob(K.USE_PEFT, bool, "TRL's use_peft (adapters from get_peft_config)", {ARGS: ("use_peft",)}),
    Knob(K.USE_VLLM, bool, "TRL's use_vllm (generation in vLLM, on a GPU of its own)", {ARGS: ("use_vllm",)}),
    Knob(K.TRL_PEFT_CONFIG, bool, "the trainer's peft_config is TRL's get_peft_config(model_args)", {}),
    Knob(K.USE_BADAM, bool, "BAdam block-wise optimizer", {ARGS: ("use_badam",)}),
    Knob(K.PREDICTION_LOSS_ONLY, bool, "evaluation keeps only the loss", {ARGS: ("prediction_loss_only",)}, False),
    Knob(
        K.EVAL_ACCUMULATION_STEPS,
        int,
        "eval steps before moving predictions to CPU",
        {ARGS: ("eval_accumulation_steps",)},
    ),
    Knob(K.ATTN_IMPLEMENTATION, str, "attention kernel", {ARGS: ("attn_implementation",), AXOLOTL: ()}),
    # `replace_llama_attn_with_flash_attn()`: the family whose eager attention is replaced, `llama` (readers/facts.py).
    Knob(K.ATTENTION_PATCH, str, "a model family's eager attention replaced in code", {}),
    # A switch in most scripts (`--flash_attn True`), a choice in LLaMA-Factory (`flash_attn: fa2`,
    # `sdpa`, `disabled`, `auto`): kept as written; the resolution tells attn_implementation from it.
    Knob(
        K.FLASH_ATTENTION,
        str,
        "flash attention (a switch, or the kernel's name)",
        {AXOLOTL: ("flash_attention",), ARGS: ("flash_attn", "use_flash_attn")},
    ),
    Knob(
        K.PURE_BF16, bool, "LLaMA-Factory: weights, gradients and optimizer states all in bf16", {ARGS: ("pure_bf16",)}
    ),
    Knob(K.OPTIM, str, "optimizer", {ARGS: ("optim",), AXOLOTL: ("optimizer",)}, "adamw_torch"),
    # `dtype` is the name transformers (4.56) and TRL's ModelConfig gave `torch_dtype` after it.
    Knob(K.TORCH_DTYPE, str, "dtype weights are loaded in", {ARGS: ("torch_dtype", "dtype"),
                                                              SWIFT: ("torch_dtype", "dtype")}),
    Knob(K.ALLOC_CONF, str, "PYTORCH_CUDA_ALLOC_CONF", {}),
    Knob(
        K.EVAL_DATA,
        str,
        "evaluation data (a path or a split)",
        {
            ARGS: ("eval_data_path", "eval_dataset", "val_size", "validation_file", "eval_file"),
            AXOLOTL: ("val_set_size",),
        },
    ),
)

# ms-swift flags spelt like an "args" name that mean something else there: `--model_type` names an entry of
# ms-swift's model registry (`qwen2_5`), not a family a script selects classes by; `--model_name` is the name the
# trained model gives itself in self-cognition data (`swift-robot`), not the model trained.
SWIFT_OTHER_MEANINGS = frozenset({"model_type", "model_name"})

_BY_NAME: Dict[str, Knob] = {knob.name: knob for knob in KNOBS}
_BY_SPELLING: Dict[Tuple[str, str], str] = {}
for _knob in KNOBS:
    for _namespace, _names in _knob.spellings.items():
        for _written in _names:
            _BY_SPELLING.setdefault((_namespace, _written), _knob.name)


def knob(name: str) -> Knob:
    return _BY_NAME[name]


def knob_for(written: str, namespace: str = ARGS) -> Optional[str]:
    """The canonical knob for a name as written in a namespace (`--cutoff_len` -> max_seq_length).
    Leading dashes are ignored; in "args", hyphens and underscores are interchangeable, as
    HfArgumentParser accepts both."""
    name = written.lstrip("-")
    if namespace == SWIFT:
        name = name.replace("-", "_")
        own = _BY_SPELLING.get((SWIFT, name))
        if own is not None or name in SWIFT_OTHER_MEANINGS:
            return own
        namespace = ARGS
    found = _BY_SPELLING.get((namespace, name))
    if found is None and namespace == ARGS:
        found = _BY_SPELLING.get((namespace, name.replace("-", "_"))) or _BY_SPELLING.get(
            (namespace, name.replace("_", "-"))
        )
    return found


_TRUE = {"true", "True", "TRUE", "1", "yes", "Yes"}
_FALSE = {"false", "False", "FALSE", "0", "no", "No"}


@dataclass(frozen=True)
class Coerced:
    value: Value
    error: Optional[str] = None  # set when the text cannot be a value of the knob's type


def coerce(name: str, value: Value) -> Coerced:
    """Convert a value as written (often a string from the shell) to the knob's type."""
    if isinstance(value, Unknown) or value is None:
        return Coerced(value)
    if isinstance(value, str) and value.strip() == "auto":
        return Coerced("auto")  # DeepSpeed and the HF integration fill "auto" from the trainer
    spec = _BY_NAME.get(name)
    if spec is not None and spec.aliases and isinstance(value, str):
        meaning = dict(spec.aliases).get(value.strip().lower())
        if meaning is not None:
            return Coerced(meaning)
    return coerce_as(spec.type if spec else type(value), value)


def coerce_as(wanted: type, value: Value) -> Coerced:
    """`value` as a `wanted` (bool, int, float or str): for a framework's own switch or count that is no knob
    (OpenRLHF's `adam_offload`, a parallel degree), read with the same words and numbers as the knobs."""
    if isinstance(value, Unknown) or value is None:
        return Coerced(value)
    try:
        if wanted is bool:
            if isinstance(value, bool):
                return Coerced(value)
            if isinstance(value, (int, float)):
                return Coerced(bool(value))
            text = str(value).strip()
            if text in _TRUE:
                return Coerced(True)
            if text in _FALSE:
                return Coerced(False)
            return Coerced(Unknown(f"`{text}` is not a boolean"), f"`{text}` is not a boolean")
        if wanted is int:
            if isinstance(value, bool):
                return Coerced(int(value))
            if isinstance(value, int):
                return Coerced(value)
            if isinstance(value, float) and value.is_integer():
                return Coerced(int(value))
            text = str(value).strip()
            try:
                return Coerced(int(text))
            except ValueError:
                as_float = float(text)
                if as_float.is_integer():
                    return Coerced(int(as_float))
                raise
        if wanted is float:
            if isinstance(value, bool):
                raise ValueError
            number = float(str(value).strip()) if not isinstance(value, (int, float)) else value
            return Coerced(int(number) if float(number).is_integer() else float(number))
        if wanted is str:
            if isinstance(value, bool):
                return Coerced(str(value).lower())
            return Coerced(str(value))
    except (ValueError, TypeError, OverflowError):
        pass
    type_name = {int: "an integer", float: "a number", str: "a string"}.get(wanted, wanted.__name__)
    return Coerced(Unknown(f"`{value}` is not {type_name}"), f"`{value}` is not {type_name}")


# Names of HF TrainingArguments fields that are booleans: a bare `--flag` on the command line sets them.
HF_BOOL_FIELDS = frozenset(
    {
        "bf16",
        "fp16",
        "tf32",
        "do_train",
        "do_eval",
        "do_predict",
        "gradient_checkpointing",
        "overwrite_output_dir",
        "remove_unused_columns",
        "group_by_length",
        "load_best_model_at_end",
        "disable_tqdm",
        "dataloader_pin_memory",
        "dataloader_drop_last",
        "save_safetensors",
        "save_only_model",
        "push_to_hub",
        "bf16_full_eval",
        "fp16_full_eval",
        "include_inputs_for_metrics",
        "prediction_loss_only",
        "no_cuda",
        "use_cpu",
        "auto_find_batch_size",
        "torch_compile",
        "ddp_find_unused_parameters",
        "log_on_each_node",
        "skip_memory_metrics",
        "lazy_preprocess",
        "freeze_mm_mlp_adapter",
        "tune_mm_mlp_adapter",
        "lora_enable",
        "use_lora",
        "q_lora",
        "tune_vision",
        "group_by_modality_length",
        "fix_vit",
        "load_in_4bit",
        "load_in_8bit",
        "is_multimodal",
        "mm_use_im_start_end",
        "mm_use_im_patch_token",
        "mm_projector_lr",
        "use_flash_attn",
        "flash_attn",
        "eval_on_start",
        "packing",
        "neat_packing",
    }
)


# Fields of HF `TrainingArguments` (recent releases), for telling which flags a parser accepts.
# `evaluation_strategy` was removed in transformers 4.51 in favour of `eval_strategy` (4.50 still accepts it).
HF_TRAINING_ARGUMENTS_FIELDS = frozenset(
    {
        "output_dir",
        "overwrite_output_dir",
        "do_train",
        "do_eval",
        "do_predict",
        "eval_strategy",
        "prediction_loss_only",
        "per_device_train_batch_size",
        "per_device_eval_batch_size",
        "per_gpu_train_batch_size",
        "per_gpu_eval_batch_size",
        "gradient_accumulation_steps",
        "eval_accumulation_steps",
        "eval_delay",
        "torch_empty_cache_steps",
        "learning_rate",
        "weight_decay",
        "adam_beta1",
        "adam_beta2",
        "adam_epsilon",
        "max_grad_norm",
        "num_train_epochs",
        "max_steps",
        "lr_scheduler_type",
        "lr_scheduler_kwargs",
        "warmup_ratio",
        "warmup_steps",
        "log_level",
        "log_level_replica",
        "log_on_each_node",
        "logging_dir",
        "logging_strategy",
        "logging_first_step",
        "logging_steps",
        "logging_nan_inf_filter",
        "save_strategy",
        "save_steps",
        "save_total_limit",
        "save_safetensors",
        "save_on_each_node",
        "save_only_model",
        "restore_callback_states_from_checkpoint",
        "no_cuda",
        "use_cpu",
        "use_mps_device",
        "seed",
        "data_seed",
        "jit_mode_eval",
        "use_ipex",
        "bf16",
        "fp16",
        "fp16_opt_level",
        "half_precision_backend",
        "bf16_full_eval",
        "fp16_full_eval",
        "tf32",
        "local_rank",
        "ddp_backend",
        "tpu_num_cores",
        "tpu_metrics_debug",
        "debug",
        "dataloader_drop_last",
        "eval_steps",
        "dataloader_num_workers",
        "dataloader_prefetch_factor",
        "past_index",
        "run_name",
        "disable_tqdm",
        "remove_unused_columns",
        "label_names",
        "load_best_model_at_end",
        "metric_for_best_model",
        "greater_is_better",
        "ignore_data_skip",
        "fsdp",
        "fsdp_min_num_params",
        "fsdp_config",
        "fsdp_transformer_layer_cls_to_wrap",
        "accelerator_config",
        "deepspeed",
        "label_smoothing_factor",
        "optim",
        "optim_args",
        "adafactor",
        "group_by_length",
        "length_column_name",
        "report_to",
        "ddp_find_unused_parameters",
        "ddp_bucket_cap_mb",
        "ddp_broadcast_buffers",
        "dataloader_pin_memory",
        "dataloader_persistent_workers",
        "skip_memory_metrics",
        "use_legacy_prediction_loop",
        "push_to_hub",
        "resume_from_checkpoint",
        "hub_model_id",
        "hub_strategy",
        "hub_token",
        "hub_private_repo",
        "hub_always_push",
        "gradient_checkpointing",
        "gradient_checkpointing_kwargs",
        "include_inputs_for_metrics",
        "include_for_metrics",
        "eval_do_concat_batches",
        "fp16_backend",
        "push_to_hub_model_id",
        "push_to_hub_organization",
        "push_to_hub_token",
        "mp_parameters",
        "auto_find_batch_size",
        "full_determinism",
        "torchdynamo",
        "ray_scope",
        "ddp_timeout",
        "torch_compile",
        "torch_compile_backend",
        "torch_compile_mode",
        "include_tokens_per_second",
        "include_num_input_tokens_seen",
        "neftune_noise_alpha",
        "optim_target_modules",
        "batch_eval_metrics",
        "eval_on_start",
        "use_liger_kernel",
        "eval_use_gather_object",
        "average_tokens_across_devices",
        "evaluation_strategy",
    }
)

# HF TrainingArguments fields whose existence depends on the transformers version:
# name -> (first version that has it, first version that no longer has it, the field's other name). The two names
# are one field (renamed in 4.41, the old name kept as an alias until 4.51): a version that lacks one spelling takes
# the other, with the same values.
HF_VERSIONED_FIELDS = {
    "evaluation_strategy": (None, "4.51", "eval_strategy"),
    "eval_strategy": ("4.41", None, "evaluation_strategy"),
}
