"""pytest hooks (placeholder until the plugin module lands)."""
