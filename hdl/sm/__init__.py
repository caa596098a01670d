"""The integrated SM in Amaranth: its stages, one module each (docs/sm-hardware.md)."""
