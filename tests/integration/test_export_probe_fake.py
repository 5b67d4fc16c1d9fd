"""The pre-flight's looks at the export over real SSH (the in-process server runs them on this machine):
free space as the file system counts it, and write access as access(2) answers, immutable folders included."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from app.runner.errors import RunError
from app.runner.export_probe import export_free, may_write
from tests.integration.test_ssh_support import FakeSshServer, run
from tests.unwritable import unwritable


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)


def test_free_space_and_write_access_read_over_ssh_change_nothing(tmp_path: Path) -> None:
    export = tmp_path / "export"
    export.mkdir()
    before = sorted(p.name for p in export.iterdir())

    async def go() -> tuple[int, bool, bool, str]:
        fake = await FakeSshServer(tmp_path).start()
        fake.trust_host_key()
        conn = fake.connection()
        try:
            free = await export_free(conn, str(export))
            writable = await may_write(conn, str(export))
            with unwritable(export):
                locked = await may_write(conn, str(export))
            with pytest.raises(RunError) as missing:
                await export_free(conn, str(tmp_path / "absent"))
            return free, writable, locked, str(missing.value)
        finally:
            await conn.close()
            await fake.stop()

    free, writable, locked, missing = run(go())
    st = os.statvfs(export)
    assert abs(free - st.f_bavail * st.f_frsize) < 64 * 1024 * 1024  # the same counters, read a moment apart
    assert writable is True and locked is False
    assert missing.startswith("fake: could not read the free space of ") and "absent" in missing
    assert sorted(p.name for p in export.iterdir()) == before
