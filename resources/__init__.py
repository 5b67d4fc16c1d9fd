"""Icons, style sheets and snippet templates, loaded with importlib.resources."""
