"""Loads a training config and lets unknown command-line flags override its keys (for sweeps)."""
import argparse

import yaml


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", type=str, required=True)
    parser.add_argument("--num_nodes", type=int, default=1)
    args, unknown = parser.parse_known_args()
    with open(args.config) as handle:
        config = yaml.safe_load(handle)
    index = 0
    while index < len(unknown):
        key = unknown[index].lstrip("-")
        config[key] = unknown[index + 1]
        index += 2
    print(config)


if __name__ == "__main__":
    main()
