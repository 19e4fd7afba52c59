"""NLPLego: a second test generator (adjunct disassembly, assembly into derivation trees, DIR oracles)."""
