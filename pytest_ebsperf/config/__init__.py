"""The run's settings: every option declared once (options: flag, ini key, environment variable,
type, help), resolved into one frozen Settings (settings: marker > command line > environment >
ini > default), and the combinations refused before fio starts (consistency).

Owns: what the user asked for. Never: imports pytest (the plugin hands it lookups), or touches a
device.
"""
