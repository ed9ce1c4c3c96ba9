import sys

try:
    from .cli import main

    code = main()
except KeyboardInterrupt:  # Ctrl-C while the package or a sub-command's toolkit loads: as during a run
    sys.stderr.write("interrupted\n")
    code = 130
sys.exit(code)
