from abc import ABC


class SFTTrainer(ABC):
    """A training loop of the package's own: its engine is set up by the caller."""

    def __init__(self, model, strategy, optim, train_dataloader, max_epochs=1):
        self.model = model
        self.strategy = strategy
        self.optim = optim
        self.train_dataloader = train_dataloader
        self.max_epochs = max_epochs

    def fit(self):
        for _ in range(self.max_epochs):
            for batch in self.train_dataloader:
                self.strategy.backward(self.model(batch), self.model, self.optim)
