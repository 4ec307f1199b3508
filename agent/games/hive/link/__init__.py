"""The link to the arena: the TCP client (:mod:`.client`), one match's decider with its coach and
transcript (:mod:`.session`), and a configured match played to its end (:mod:`.match`)."""
