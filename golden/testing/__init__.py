"""Test support: what the test suites, ``make soak`` and ``make docs`` share. The reference
tools (:mod:`.gnu`, :mod:`.qemu`), the public RISC-V ISA tests (:mod:`.riscv_tests`), random
programs (:mod:`.randprog`) and their checks against the golden models (:mod:`.randcheck`,
:mod:`.soak`), the bad inputs of the command line (:mod:`.bad_input`) and the pytest plugin of
the tool markers (:mod:`.plugin`). It is the top layer: it may import every other one, and no
product code imports it (docs/architecture.md, "Layers")."""
