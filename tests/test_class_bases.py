"""Class outlines read with the standard library's parser alone: what a Trainer class is built on, and whether it
runs a training loop of its own."""
from __future__ import annotations

from trainlint.readers.python.class_bases import read_class_outline


def test_each_class_comes_with_its_bases_as_written(tmp_path):
    module = tmp_path / "trainers.py"
    module.write_text("import transformers\n\n\nclass FusedTrainer:\n    pass\n\n\n"
                      "class HFTrainer(transformers.Trainer, Mixin):\n    class Inner(object):\n        pass\n")
    assert read_class_outline(module).bases == {"FusedTrainer": (), "HFTrainer": ("transformers.Trainer", "Mixin"),
                                                "Inner": ("object",)}


def test_a_class_defining_the_whole_training_loop_is_named(tmp_path):
    module = tmp_path / "trainers.py"
    module.write_text("from transformers import Trainer\n\n\nclass LoopTrainer(Trainer):\n"
                      "    def _inner_training_loop(self, *args, **kwargs):\n        pass\n\n\n"
                      "class StepTrainer(Trainer):\n    def training_step(self, model, inputs):\n        pass\n\n\n"
                      "def _inner_training_loop():\n    pass\n")
    assert read_class_outline(module).own_loops == frozenset({"LoopTrainer"})


def test_a_file_that_cannot_be_parsed_or_read_has_no_classes(tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text("class Half(:\n")
    binary = tmp_path / "binary.py"
    binary.write_bytes(b"class A:\x00\x01 pass\n")
    deep = tmp_path / "deep.py"
    deep.write_text("class Deep(" + "(" * 5000 + "object" + ")" * 5000 + "): pass\n")
    assert read_class_outline(broken).bases == {} and read_class_outline(binary).bases == {}
    assert read_class_outline(deep).bases == {}
    assert read_class_outline(tmp_path / "missing.py").bases == {}
