SELECT name, hex(name) FROM sweeps
