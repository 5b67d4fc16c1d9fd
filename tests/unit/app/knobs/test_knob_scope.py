"""Where a change acts is the catalog's word (Scope), and it is where the engine really applies it."""

from __future__ import annotations

from app.knobs.catalog import SPECS
from app.knobs.model import Scope
from app.sweep.apply import SERVER_GROUPS
from app.sweep.spec import CLIENT_HOST_KNOBS, MOUNT_KNOBS
from app.vocabulary import where_text


def _scoped(scope: Scope) -> set[str]:
    return {k for k, s in SPECS.items() if s.scope is scope}


def test_the_catalogs_scope_is_where_the_engine_applies_each_knob() -> None:
    assert _scoped(Scope.CLIENT) == set(CLIENT_HOST_KNOBS) == {"dirty_bytes", "dirty_background", "rpc_slots"}
    assert _scoped(Scope.TEST_MOUNT) == {*MOUNT_KNOBS, "read_ahead_kb"}  # options of the mount, its bdi
    assert _scoped(Scope.SERVER) | _scoped(Scope.LINK) == {k for g in SERVER_GROUPS for k in g}
    assert _scoped(Scope.LINK) == {"mtu"}


def test_every_host_wide_knob_says_so_in_its_note() -> None:
    for knob in _scoped(Scope.CLIENT):
        assert SPECS[knob].safety_note.startswith("Host-wide on each client"), knob
        assert where_text(knob) == "the whole client"
    assert {where_text(k) for k in SPECS} == {"the server", "the test mount", "the whole client", "both ends of the link"}
