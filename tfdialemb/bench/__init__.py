"""Speed and efficiency benchmarks (`python -m tfdialemb.bench`), reported as ratios measured in
one run rather than as absolute timings asserted in tests."""
