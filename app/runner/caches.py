"""Cache honesty: empty the page cache on a host before a measurement reads."""

from __future__ import annotations

from app.hosts import HostConnection, HostError
from app.runner.errors import RunError
from app.vocabulary.hosts import host_detail


async def drop_caches(conn: HostConnection) -> None:
    """sync, then write 3 to drop_caches (page cache, dentries, inodes) as root or via sudo.

    ``tee`` rather than a shell redirect, so a sudoers rule can name the one file.
    """
    priv = await conn.privilege()
    if not priv.can_change:
        raise RunError(
            conn.name,
            "cannot drop the page cache: this login is neither root nor allowed passwordless sudo; "
            f"with visudo add: {priv.sudoers_line()}",
        )
    sudo = not priv.is_root
    try:
        await conn.run(["sync"], sudo=sudo, timeout=120)
        result = await conn.run(["tee", "/proc/sys/vm/drop_caches"], sudo=sudo, input="3\n", timeout=120)
    except HostError as exc:
        raise RunError(conn.name, f"dropping the page cache failed: {host_detail(conn.name, str(exc))}") from exc
    if not result.ok:
        raise RunError(conn.name, f"dropping the page cache failed: {result.stderr.strip() or result.stdout.strip()}")
