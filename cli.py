"""Shim: ``python cli.py ...`` is ``sieve-lite ...`` (the real CLI is ``sieve_lite.cli``)."""

from sieve_lite.cli import main

if __name__ == "__main__":
    main()
