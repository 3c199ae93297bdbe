"""A check package stopping in a class body (tests/checks/test_bad_inputs.py)."""
