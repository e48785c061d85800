"""Test support code, imported by the tests as ``helpers`` (tests/ is on sys.path under pytest).

appender.py here is not imported: it is a script the crash and concurrency
tests run as a child process (``python tests/helpers/appender.py``).
"""
