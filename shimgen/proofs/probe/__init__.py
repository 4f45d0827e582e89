"""The dispatcher probe: which conversion-table rows libtorch's boxed dispatcher really carries, per release.

For every argument and return row of data/conversion_table.yaml that is not refused, the probe builds one
tiny stable extension per targeted release (stable headers of the installed torch, -DTORCH_TARGET_VERSION)
that pushes values of the row's C++ type exactly as a generated dispatcher-route wrapper does
(`from(<stack column>)`, `to<cpp>()` for returns) and calls a custom op whose schema has the row's type, defined
in Python on the runtime (shimgen_probe::arg_<row> records what its kernel receives; shimgen_probe::ret_<row>_<i>
returns a known value). Each case is one of:

    converts   the value arrived as the C++ caller wrote it (or, for a return, as the kernel returned it)
    refuses    libtorch returned an error (e.g. "Not yet supported conversion from StableIValue to IValue")
    wrong      the call succeeded with a different value, or the process crashed
    unbuilt    the stable headers offer no conversion for that C++ type at that target (compile error)

The runs (python -m shimgen.dev probe, see __main__) go to data/probe.yaml; probe.results derives each row's
`ivalue` from them, and tests/test_probe.py holds the table to it.

Modules: cases (what is probed), build (the extensions), runner (runs inside each runtime: stdlib + torch only),
results (data/probe.yaml, the derived facts), __main__ (the command).
"""
