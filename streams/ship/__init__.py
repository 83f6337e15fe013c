"""`sluice ship`: the node-side shipper that tails training logs and sends them to Kafka in batches.

Pure parts (no I/O, clock passed in): ``paths`` (glob matching and confinement), ``identity`` (file
identity and rotation detection), ``lines`` (bytes into lines), ``batching`` (batches, the staggered
send schedule, splitting what does not fit), ``bounds`` (every field fitted to the contract),
``encoding`` (the contract checked locally, quarantined lines), ``backlog`` (the waiting bound and
drop-oldest), ``acks`` (contiguous acknowledged offsets), ``checkpoint`` (the checkpoint document),
``labels`` (source and labels from configuration, environment and the downward API), ``health`` and
``stats`` (what the endpoints report).
I/O at the edges: ``tailer`` (walking the globs, opening files confined), ``files`` (the files being
shipped, through rotation and restarts), ``sender`` (the Kafka producer), ``packing`` (batches into
records), ``shipper`` (the loop that wires them), ``metrics`` and ``run`` (the endpoints, the process).
``devtools.testing.ship`` holds a recording sender and a Kafka-aware TCP proxy for tests.
"""
