import sys

from transformers import HfArgumentParser


class ProjectArgumentParser(HfArgumentParser):
    """Reads a YAML recipe when the only argument is one, else the command line."""

    def parse(self):
        if len(sys.argv) == 2 and sys.argv[1].endswith(".yaml"):
            return self.parse_yaml_file(sys.argv[1])
        return self.parse_args_into_dataclasses()
