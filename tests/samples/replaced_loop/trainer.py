import torch
from transformers import Trainer


class ZerothOrderTrainer(Trainer):
    """Perturbs the weights in place and compares two losses: memory of inference, whatever the batch."""

    def _inner_training_loop(self, batch_size=None, args=None, resume_from_checkpoint=None, trial=None,
                             ignore_keys_for_eval=None):
        dataloader = self.get_train_dataloader()
        for step, inputs in enumerate(dataloader):
            self.zo_step(self.model, inputs)
            if step >= args.max_steps:
                break

    @torch.no_grad()
    def zo_step(self, model, inputs):
        seed = torch.randint(0, 2**31, (1,)).item()
        self.perturb(model, seed, 1)
        positive = model(**inputs).loss
        self.perturb(model, seed, -2)
        negative = model(**inputs).loss
        self.perturb(model, seed, 1)
        return (positive - negative) / (2 * self.args.zo_eps)

    def perturb(self, model, seed, scale):
        torch.manual_seed(seed)
        for parameter in model.parameters():
            parameter.data += scale * self.args.zo_eps * torch.randn_like(parameter)


class LoggingTrainer(Trainer):
    """HF's own loop, with a loss of its own."""

    def compute_loss(self, model, inputs, return_outputs=False, **kwargs):
        outputs = model(**inputs)
        return (outputs.loss, outputs) if return_outputs else outputs.loss
