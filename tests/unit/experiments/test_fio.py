"""fio job export (checked by fio itself) and fio output parsed into samples."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from experiments import workloads as w
from experiments.fio import fio_argv, parse_fio_json, parse_fio_logs, to_fio_job

FIO = shutil.which("fio")
needs_fio = pytest.mark.skipif(FIO is None, reason="fio is not installed (apt install fio)")
MIB = 1 << 20

EXPORTABLE = [w.SeqWrite(), w.SeqRead(direct=True), w.Rewrite(duration_s=5, loop=True), w.RandRead(jobs=8),
              w.RandWrite(fsync=True), w.Mixed(read_share=0.6), w.SmallFiles(fsync=True), w.Tree(), w.DirScaling(),
              w.TcpSink(port=5201), w.TcpSource(host="lab-server", port=5201, duration_s=10)]


def _parse_only(tmp_path: Path, text: str) -> subprocess.CompletedProcess[str]:
    job = tmp_path / "job.fio"
    job.write_text(text)
    return subprocess.run([str(FIO), "--parse-only", str(job)], capture_output=True, text=True, timeout=60)


@needs_fio
@pytest.mark.parametrize("spec", EXPORTABLE, ids=lambda s: s.kind)
def test_every_exported_job_parses_in_fio(tmp_path: Path, spec: w.WorkloadSpec) -> None:
    text = to_fio_job(spec, str(tmp_path))
    out = _parse_only(tmp_path, text)
    assert out.returncode == 0, out.stderr
    assert f"[{spec.kind}]" in text and "# spec:" in text


@needs_fio
def test_parse_only_does_reject_a_bad_job(tmp_path: Path) -> None:
    """The check above means something: fio's parser refuses unknown options."""
    assert _parse_only(tmp_path, to_fio_job(w.SeqWrite(), str(tmp_path)) + "no_such_option=1\n").returncode != 0


def test_translation_keeps_the_spec_s_choices() -> None:
    text = to_fio_job(w.Mixed(read_share=0.6, block_size=8192, jobs=4, io_size=4 * MIB, direct=True), "/mnt/t")
    for line in ("rw=randrw", "rwmixread=60", "bs=8192", "numjobs=4", "direct=1", f"io_size={MIB}", "directory=/mnt/t",
                 "log_avg_msec=250"):
        assert line in text.splitlines()
    seq = to_fio_job(w.SeqWrite(duration_s=30, loop=True), "/m", log_prefix=None).splitlines()
    assert "end_fsync=1" in seq and "runtime=30s" in seq and "time_based=1" in seq
    assert not any(x.startswith("write_bw_log") for x in seq)


def test_what_fio_cannot_express_is_refused() -> None:
    with pytest.raises(ValueError, match="no fio equivalent"):
        to_fio_job(w.Telemetry(), "/m")
    with pytest.raises(ValueError, match="absolute path"):
        to_fio_job(w.SeqWrite(), "relative/dir")
    with pytest.raises(ValueError, match="absolute path"):
        to_fio_job(w.SeqWrite(), "/a:b")


@needs_fio
def test_a_real_fio_run_parses_into_a_summary_and_samples(tmp_path: Path) -> None:
    spec = w.SeqWrite(file_size=32 * MIB, block_size=MIB, jobs=2, interval_s=0.1, duration_s=1.5, loop=True)
    job = tmp_path / "job.fio"
    # rate-capped so that the run spans many log windows however fast the disk is:
    # fio does not log a job's last partial window, which would dominate a short run
    job.write_text(to_fio_job(spec, str(tmp_path)) + "rate=64m\n")
    out = subprocess.run(fio_argv(str(job), str(tmp_path / "out.json"), str(FIO)), capture_output=True, text=True,
                         cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr
    summary = parse_fio_json("fio: some warning\n" + (tmp_path / "out.json").read_text(), "c1", cache_mode="fsync")
    assert summary.bytes_read == 0 and summary.bytes_written > 32 * MIB and summary.bytes_written % MIB == 0
    assert summary.ops * MIB == summary.bytes_written and summary.duration > 1.0 and summary.mode == "fio:write"
    assert 0 < summary.lat_p50_ms <= summary.lat_p99_ms <= summary.lat_max_ms
    samples = parse_fio_logs(tmp_path, "c1", interval_s=0.1)
    assert len(samples) >= 10 and all(s.client == "c1" and s.interval == 0.1 and s.bytes_read == 0 for s in samples)
    assert [s.t for s in samples] == sorted({s.t for s in samples})
    logged = sum(s.bytes_written for s in samples)
    # fio logs averaged rates per window, so the sum is close to, not exactly, the total
    assert 0.75 * summary.bytes_written < logged <= 1.05 * summary.bytes_written


def test_fio_error_and_missing_logs_are_reported(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no JSON"):
        parse_fio_json("fio: command not found", "c")
    bad = '{"fio version": "3.33", "jobs": [{"jobname": "x", "error": 28, "read": {}, "write": {}}]}'
    with pytest.raises(ValueError, match="failed with error 28"):
        parse_fio_json(bad, "c")
    with pytest.raises(FileNotFoundError):
        parse_fio_logs(tmp_path, "c")
    # job 1 reads 1 MiB/s for 100 ms, then a row covering 150 ms straddles two intervals
    (tmp_path / "nfs-tuner_bw.1.log").write_text("100, 1024, 0, 0, 0\nnot a row\n250, 2048, 0, 0, 0\n")
    (tmp_path / "nfs-tuner_bw.2.log").write_text("200, 1000, 1, 0, 0\n")  # job 2 writes
    samples = parse_fio_logs(tmp_path, "c", interval_s=0.1)
    assert [(s.t, s.bytes_read, s.bytes_written) for s in samples] == [
        (0.1, 104858, 102400), (0.2, 209715, 102400), (0.3, 104858, 0)]
