from share4v.train.train import train

if __name__ == "__main__":
    train()
