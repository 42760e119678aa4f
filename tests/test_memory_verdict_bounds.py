"""Memory verdicts that hold whatever an unread setting turns out to be: judged at the least memory any
value of that setting leaves on each GPU, and reported as warnings that say so."""
from __future__ import annotations

from tests.conftest import SAMPLES

VERDICTS = SAMPLES / "verdicts"


def _memory_findings(document):
    return [f for f in document["findings"] if f["code"].startswith("TL1") and f["severity"] != "info"]


def test_long_context_overflows_whatever_the_unread_deepspeed_config(cli):
    _, document = cli.check_json(VERDICTS / "unknown_sharding", "train_long.sh", "--gpu", "rtx4090",
                                 "--num-gpus", "8")
    [finding] = _memory_findings(document)
    assert finding["code"] == "TL111" and finding["severity"] == "warning"
    assert "sharded as far as any DeepSpeed or FSDP config can" in finding["message"]
    assert "logits" in finding["message"]


def test_unread_deepspeed_config_gives_no_verdict_where_the_least_sharding_fits(cli):
    _, short = cli.check_json(VERDICTS / "unknown_sharding", "train_short.sh", "--gpu", "rtx4090", "--num-gpus", "8")
    assert not _memory_findings(short)
    _, roomy = cli.check_json(VERDICTS / "unknown_sharding", "train_long.sh", "--gpu", "a100-80gb", "--num-gpus", "8")
    assert not _memory_findings(roomy)
