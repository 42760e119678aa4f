"""No input crashes a scan: damaged launchers, entry scripts and configs give diagnostics, never a
traceback. Bounded so the suite stays fast; raise max_examples by hand for a longer run."""
from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import MOE_LLAVA
from trainlint.linter import lint, make_target
from trainlint.resolution.workspace import Workspace

LAUNCHER = (MOE_LLAVA / "scripts" / "finetune_phi2.sh").read_bytes()
ENTRY = (MOE_LLAVA / "moellava" / "train" / "train.py").read_bytes()
CONFIG = (MOE_LLAVA / "scripts" / "zero2.json").read_bytes()


def _damage(data: bytes, cuts, inserts) -> bytes:
    out = bytearray(data)
    for position, length in cuts:
        start = position % max(len(out), 1)
        del out[start:start + length]
    for position, chunk in inserts:
        start = position % max(len(out), 1)
        out[start:start] = chunk
    return bytes(out)


edits = st.tuples(
    st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 40)), max_size=4),
    st.lists(st.tuples(st.integers(0, 10_000),
                       st.sampled_from([b"\\", b" \\ # x\n", b'"', b"'", b"$(", b"${", b"((", b"\x00", b"\xff\xfe",
                                        b"{", b"}", b",", b"\r\n", b"\n--bf16 w \\\n", b"def (", b"\t"])), max_size=6),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(launcher=edits, entry=edits, config=edits)
def test_a_damaged_job_never_crashes_the_scan(launcher, entry, config):
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp)
        (root / "scripts").mkdir()
        (root / "moellava" / "train").mkdir(parents=True)
        (root / "scripts" / "finetune_phi2.sh").write_bytes(_damage(LAUNCHER, *launcher))
        (root / "scripts" / "zero2.json").write_bytes(_damage(CONFIG, *config))
        (root / "moellava" / "train" / "train_mem.py").write_bytes(
            (MOE_LLAVA / "moellava" / "train" / "train_mem.py").read_bytes())
        (root / "moellava" / "train" / "train.py").write_bytes(_damage(ENTRY, *entry))
        result = lint([root], make_target("a100-40gb", num_gpus=8), workspace=Workspace(root))
        for finding in result.findings:
            assert finding.code.startswith("TL") and finding.message
