"""nfs-tuner's PySide6 face: wizard pages, live plots, session browser."""
