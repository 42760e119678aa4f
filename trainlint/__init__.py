"""trainlint: find the settings that will run a fine-tuning job out of GPU memory, before launch.

The command line is `trainlint` (trainlint.cli); programs use trainlint.api."""

__version__ = "0.1.0"
