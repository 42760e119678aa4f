"""Class headers read with the standard library's parser alone: what a Trainer class is built on."""
from __future__ import annotations

from trainlint.readers.python.class_bases import read_class_headers


def test_each_class_comes_with_its_bases_as_written(tmp_path):
    module = tmp_path / "trainers.py"
    module.write_text("import transformers\n\n\nclass FusedTrainer:\n    pass\n\n\n"
                      "class HFTrainer(transformers.Trainer, Mixin):\n    class Inner(object):\n        pass\n")
    assert read_class_headers(module).bases == {"FusedTrainer": (), "HFTrainer": ("transformers.Trainer", "Mixin"),
                                               "Inner": ("object",)}


def test_a_file_that_cannot_be_parsed_or_read_has_no_classes(tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text("class Half(:\n")
    binary = tmp_path / "binary.py"
    binary.write_bytes(b"class A:\x00\x01 pass\n")
    deep = tmp_path / "deep.py"
    deep.write_text("class Deep(" + "(" * 5000 + "object" + ")" * 5000 + "): pass\n")
    assert read_class_headers(broken).bases == {} and read_class_headers(binary).bases == {}
    assert read_class_headers(deep).bases == {}
    assert read_class_headers(tmp_path / "missing.py").bases == {}
