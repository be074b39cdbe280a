-- Schema 2: the flag lists jaxlibs report for XLA_FLAGS=--help, imported by `flagtune flags
-- import`, one list per jaxlib version. `flagtune flags --jaxlib V` compares the catalog with
-- the list of V; a re-import of V replaces its list.
CREATE TABLE jaxlib_flags (
  jaxlib TEXT NOT NULL,          -- the version as given (--jaxlib) or probed, e.g. '0.4.31'
  name TEXT NOT NULL,            -- without dashes: xla_gpu_enable_latency_hiding_scheduler
  type TEXT NOT NULL,            -- as XLA prints it: bool, int32, int64, float, string
  default_value TEXT,            -- as printed, quotes removed from strings
  description TEXT,
  imported_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  PRIMARY KEY (jaxlib, name)
) WITHOUT ROWID;
