# Repository-root conftest: nothing here on purpose. The plugin registers itself through its
# pytest11 entry point; listing it in pytest_plugins as well would register it twice.
