"""Synthesizable Amaranth RTL of the matNDP slice. Imports nothing else of the project."""

# The folder is the package ``matndp.hw``; imported under its bare folder name it would
# be a second copy of every module (and of every enum and layout), so refuse.
if __name__ != "matndp.hw":
    raise ImportError(f"import matndp.hw, not {__name__}: the folder hw/ is installed as "
                      f"the package matndp.hw (run `make setup`)")
