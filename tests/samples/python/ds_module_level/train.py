"""A DeepSpeed script that extends its parser at module level, as small examples do."""
import argparse

import deepspeed

parser = argparse.ArgumentParser(description="toy classifier")
parser.add_argument("--epochs", type=int, default=10)
parser.add_argument("--local_rank", type=int, default=-1)
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
