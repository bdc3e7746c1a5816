"""The referee: a gRPC server per match, seats bound by tokens, deadlines, faults, logs
(``arena.referee.match``); its modules are imported one by one, so that what needs only
the limits (``arena.referee.limits``) or the log reader loads no gRPC."""
