"""A Trainer whose training loop is HF's, with the step chosen by `--trainer`."""
import numpy as np
import torch
from transformers import Trainer


class ZerothOrderTrainer(Trainer):
    def _inner_training_loop(self, batch_size=None, args=None, resume_from_checkpoint=None, trial=None,
                             ignore_keys_for_eval=None):
        model = self._wrap_model(self.model_wrapped)
        train_dataloader = self.get_train_dataloader()
        for epoch in range(int(args.num_train_epochs)):
            for step, inputs in enumerate(train_dataloader):
                if args.trainer == "zo":
                    tr_loss_step = self.zo_step(model, inputs)
                else:
                    tr_loss_step = self.training_step(model, inputs)
                if (step + 1) % args.gradient_accumulation_steps == 0:
                    if args.trainer == "zo":
                        self.zo_update(model)
                    else:
                        self.optimizer.step()
                        self.lr_scheduler.step()
                        model.zero_grad()
        return tr_loss_step

    def zo_perturb_parameters(self, scaling_factor=1.0):
        torch.manual_seed(self.zo_random_seed)
        for _name, param in self.named_parameters_to_optim:
            z = torch.normal(mean=0, std=1, size=param.data.size(), device=param.data.device, dtype=param.data.dtype)
            param.data = param.data + scaling_factor * z * self.args.zo_eps

    def zo_forward(self, model, inputs):
        model.eval()
        with torch.inference_mode():
            loss = self.compute_loss(model, inputs)
        return loss.detach()

    def zo_step(self, model, inputs):
        self.named_parameters_to_optim = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
        self.zo_random_seed = np.random.randint(1000000000)
        self.zo_perturb_parameters(scaling_factor=1)
        loss1 = self.zo_forward(model, inputs)
        self.zo_perturb_parameters(scaling_factor=-2)
        loss2 = self.zo_forward(model, inputs)
        self.projected_grad = ((loss1 - loss2) / (2 * self.args.zo_eps)).item()
        self.zo_perturb_parameters(scaling_factor=1)
        return loss1

    def zo_update(self, model):
        torch.manual_seed(self.zo_random_seed)
        for _name, param in self.named_parameters_to_optim:
            z = torch.normal(mean=0, std=1, size=param.data.size(), device=param.data.device, dtype=param.data.dtype)
            param.data = param.data - self._get_learning_rate() * self.projected_grad * z
