"""What a user runs: the command (cli, console), `shimgen port` (port, porting/), [tool.shimgen] (project)."""
