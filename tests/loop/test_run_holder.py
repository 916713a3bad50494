"""L9, README "Hooks and the server": where the transport names the pusher (REMOTE_USER
behind `git http-backend`, or an SSH user), the spine's lease is taken in the pusher's own
name. A newcomer's hunt: `leap merge` had `--holder NAME` for it, `leap run` had none and
always took the lease as `integrator`, so a run pushed as anyone else never landed. The
refusal names the holder to give; `leap run S --holder NAME`, as printed, lands.

The pusher is named by REMOTE_USER in the environment of a push over a local path
(receive-pack inherits it), which is what the server's hook reads behind http-backend."""

from __future__ import annotations

from pathlib import Path

from tests.loop import workers_world as ww
from tests.support import git, hinted_leap
from tests.tribunal.jurors import JurorServer


def test_leap_run_lands_a_slice_for_a_pusher_the_transport_names(tmp_path: Path) -> None:
    alice = {"REMOTE_USER": "alice"}
    with JurorServer("openai", ww.jurors) as jurors:
        w = ww.build(tmp_path, lambda bare: str(bare), jurors.url, 2)
        refused = w.leap("run", ww.S, "--heartbeat", "0", env=alice)
        said = refused.out + refused.err
        assert refused.code == 1 and "names holder 'integrator'" in said, refused
        runs = [c for c in hinted_leap(said) if c[:1] == ["run"]]
        assert ["run", "SLICE", "--holder", "alice"] in runs, said
        landed = w.leap("run", ww.S, "--holder", "alice", "--heartbeat", "0", env=alice)
        assert landed.code == 0 and "landed" in landed.out, landed
        assert git("rev-parse", "refs/heads/main", cwd=w.bare) == \
            git("rev-parse", "refs/heads/main", cwd=w.work)
        ledger = git("ls-tree", "-r", "--name-only", "leap/ledger", "spines/main/leases",
                     cwd=w.bare)
        assert ledger, "no lease went up"
