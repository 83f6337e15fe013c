"""GPU telemetry on the node: a sampler beside `sluice ship` that sends one metric point per GPU and
interval to ``logs.metrics``.

Readers (:mod:`~streams.gpu.nvml` through NVML, :mod:`~streams.gpu.dcgm` scraping the DCGM
exporter) turn the driver's figures into :class:`~streams.gpu.reading.GpuReading` values;
:mod:`~streams.gpu.attribution` tells which task holds a GPU (pid -> cgroup -> container -> the
labels the shipper already knows); :mod:`~streams.gpu.points` builds the ``sluice.v1.MetricPoint``
records; :mod:`~streams.gpu.sampler` schedules, batches and sends them.
"""
