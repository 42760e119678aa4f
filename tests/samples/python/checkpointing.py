"""Gradient checkpointing turned on in code, with and without conditions."""
import transformers
from peft import prepare_model_for_int8_training, prepare_model_for_kbit_training


def build(model, training_args, model_args):
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    if training_args.gradient_checkpointing:
        model.gradient_checkpointing_enable()
        training_args.gradient_checkpointing = True
    if model_args.tune_vision and training_args.gradient_checkpointing:
        model.vision.gradient_checkpointing_enable()
    if model_args.tune_vision:
        model.vision.gradient_checkpointing_enable()
    else:
        training_args.gradient_checkpointing = False
    model = prepare_model_for_kbit_training(model)
    model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=training_args.gradient_checkpointing)
    model = prepare_model_for_int8_training(model)  # its name before peft 0.6, with the same default
    training_args.max_steps = 10
    training_args.eval_steps += 5
    return model
