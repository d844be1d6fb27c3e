"""Benchmarking methods (RFC 2544, 5180, 8219, 9004), built only on the
measurer interface (:mod:`v6bench.core.tester`)."""
