"""nfs-tuner core: Qt-free host layer, knobs, journal, store, recommendation, CLI."""

__version__ = "0.1.0"
