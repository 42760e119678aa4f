# Entry point that patches attention first, then runs the shared training loop.
from moellava.train.train import train

if __name__ == "__main__":
    train()
