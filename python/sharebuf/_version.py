"""The version, in a module of its own: the package's modules import it from here, not from the
package's ``__init__`` (whose lazy front imports them)."""

__version__ = "0.1.0"
