# Hands its command line (a recipe file) to the package that parses it.
from mypkg.tuner import run_experiment


def main():
    run_experiment()


if __name__ == "__main__":
    main()
