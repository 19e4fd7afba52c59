"""Reading finished runs: comparison of two runs, the failure explorer's data and the
fidelity report against the paper."""
