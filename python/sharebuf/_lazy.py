"""A package's public names loaded on first use (PEP 562), so that importing the package (or
one light module of it) imports nothing else."""


def lazy_attributes(namespace: dict, where: dict):
    """A module ``__getattr__`` for the package whose globals are ``namespace``: ``where`` maps a
    public name to the submodule (relative to the package) that defines it."""
    package = namespace["__name__"]

    def __getattr__(name):
        mod = where.get(name)
        if mod is None:
            raise AttributeError(f"module '{package}' has no attribute '{name}'")
        from importlib import import_module

        value = getattr(import_module(f".{mod}", package), name)
        namespace[name] = value
        return value

    return __getattr__
