"""Desktop integration data (.desktop entry, AppStream metainfo, icons).

A package of its own so the files ship in the wheel and in the bundle, and are found
with importlib.resources; packaging/ links to them, app.desktop_entry installs them.
"""
