"""Storage performance over months: a history of runs, trends per check, change points."""
