"""The built-in suites: one package per volume type, each test a documented claim.

From a checkout: ``pytest suites/io1 --device=/dev/xvdf``. Installed (``pip install
pytest-ebsperf``): ``pytest --pyargs pytest_ebsperf.suites.io1 --device=/dev/xvdf``, or
``pytest --pyargs pytest_ebsperf.suites`` for all of them.
"""
