"""What the shell and ``man`` know of nfs-tuner, made from the one argparse definition.

``model`` reads the parser (``app.cli.build_parser``) into a plain tree of commands and
options; ``bash``, ``zsh`` and ``fish`` write completion scripts from it, ``manpage``
the nfs-tuner(1) page, and ``completion`` is the ``nfs-tuner completion`` subcommand.
Nothing here is kept by hand beside the parser, so neither can drift from it.
"""
