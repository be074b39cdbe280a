# The progress lines carry the time of day and measured times: those become words.
s/^[0-9]\{4\}-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9] /TIME /
s/ [0-9][0-9.]* ms / N ms /
s/ [0-9][0-9.]*x / Nx /
