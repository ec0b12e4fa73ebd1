"""The one skip list of the ONNX backend node tests.

Every entry is a node test whose op the frontend claims to support (it is in CONVERTERS) but that
does not pass, with the reason. Entries run as strict xfail: they are counted in every pytest run,
and an entry that starts passing fails the run until it is removed here — the list only shrinks.
`tests/onnx_node/report.py --check` also fails on entries that are no longer selected.
"""

SKIPS: dict[str, str] = {
}
