"""Submits a command to a cluster queue: its own options, then `--` and the command to run there."""
import argparse
import shlex
import subprocess


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--image", type=str, default="trainer:latest")
    parser.add_argument("--gpus", type=int, default=0)
    parser.add_argument("--num_nodes", type=int, default=1)
    parser.add_argument("--preemptible", action="store_true")
    options, command = parser.parse_known_args()
    if command and command[0] == "--":
        command = command[1:]
    subprocess.run(["queue", "submit", "--gpus", str(options.gpus), "--", shlex.join(command)], check=True)


if __name__ == "__main__":
    main()
