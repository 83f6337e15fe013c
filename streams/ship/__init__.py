"""`sluice ship`: the node-side shipper that tails training logs and sends them to Kafka in batches.

Pure parts (no I/O, clock passed in): ``identity`` (file identity and rotation detection),
``lines`` (splitting bytes into lines), ``batching`` (batches and the staggered send schedule),
``acks`` (contiguous acknowledged offsets), ``checkpoint`` (the checkpoint document),
``labels`` (source and labels from configuration, environment and the downward API).
I/O at the edges: ``tailer`` (open files), ``discovery`` (globs), ``sender`` (the Kafka producer),
``shipper`` (the loop that wires them). ``testing`` holds a Kafka-aware TCP proxy for outage tests.
"""
