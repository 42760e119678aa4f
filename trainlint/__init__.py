"""trainlint: find the settings that will run a fine-tuning job out of GPU memory, before launch."""

__version__ = "0.1.0"
