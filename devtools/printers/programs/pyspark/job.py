"""A tiny PySpark job whose failures Spark itself prints: ``python job.py SCENARIO`` (local[1], no UI).

What reaches stderr is Spark's log4j2 console records (``yy/MM/dd HH:mm:ss LEVEL Logger: message``, a
record's throwable under it) and, last, the driver's uncaught Python traceback:

- ``udf``: a Python UDF raising in ``DataFrame.collect()``: the executor's ``ERROR Executor: Exception
  in task ...`` record with the ``PythonException`` and its Java frames, the ``WARN TaskSetManager: Lost
  task ...`` record with the same, ``ERROR TaskSetManager: Task 0 in stage 0.0 failed 1 times; aborting
  job``, then the driver's ``pyspark.errors.exceptions.captured.PythonException`` traceback.
- ``rdd``: the same failure through the RDD API: the driver's traceback ends with py4j's
  ``Py4JJavaError: An error occurred while calling ...`` holding the ``SparkException`` with its
  ``Driver stacktrace:`` and ``Caused by: org.apache.spark.api.python.PythonException: Traceback ...``.
- ``analysis``: a query naming a missing column: ``AnalysisException`` with the query plan under its
  message.
- ``analysis_jvm``: the same with ``spark.sql.pyspark.jvmStacktrace.enabled`` (the JVM stack under
  ``JVM stacktrace:``).

The driver catches the error, waits for the JVM's records to be written, then raises it again.
"""

import sys
import time

from pyspark.sql import SparkSession
from pyspark.sql.functions import udf


def parse_tokens(s):
    if s.startswith("bad"):
        raise ValueError(f"cannot tokenize record {s!r}: unexpected byte 0xff at offset 17")
    return len(s.split())


def main(scenario):
    builder = (SparkSession.builder.master("local[1]").appName("sluice-printers")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false"))
    if scenario == "analysis_jvm":
        builder = builder.config("spark.sql.pyspark.jvmStacktrace.enabled", "true")
    spark = builder.getOrCreate()
    try:
        if scenario == "udf":
            df = spark.createDataFrame([("good record",), ("bad record",)], ["text"])
            df.select(udf(parse_tokens, "int")("text").alias("n")).collect()
        elif scenario == "rdd":
            spark.sparkContext.parallelize(["good record", "bad record"], 1).map(parse_tokens).collect()
        elif scenario.startswith("analysis"):
            spark.sql("SELECT tokens FROM range(3)").collect()
    except Exception:
        time.sleep(1)  # the executor's and scheduler's records before the driver's traceback
        sys.stderr.flush()
        raise


if __name__ == "__main__":
    main(sys.argv[1])
