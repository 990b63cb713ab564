"""Spark MLlib's GaussianMixture on a Parquet data set: seconds per EM iteration (run by distributed.py).

Run with the Python of pyspark's own virtualenv:
``python _spark_gmm.py PARQUET_DIR N_FEATURES N_COMPONENTS N_ITER``. Prints one JSON line.

Spark draws its own start, so the seconds per iteration come from two fits of the same cached data:
``(fit(1 + N_ITER) - fit(1)) / N_ITER``, after a warm-up fit; the mean log-likelihood per row of the
longer fit is reported beside it.
"""

import json
import sys
import time


def main(path, n_features, n_components, n_iter):
    from pyspark.ml.clustering import GaussianMixture
    from pyspark.ml.feature import VectorAssembler
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.driver.memory", "8g")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    frame = spark.read.parquet(path)
    columns = [f"x{j}" for j in range(n_features)]
    data = VectorAssembler(inputCols=columns, outputCol="features").transform(frame).select("features").cache()
    n_rows = data.count()

    def fit(max_iter):
        start = time.perf_counter()
        model = GaussianMixture(k=n_components, maxIter=max_iter, tol=0.0, seed=0).fit(data)
        return time.perf_counter() - start, model

    fit(1)  # warm-up: JIT, caching of the rows
    short, _ = fit(1)
    long, model = fit(1 + n_iter)
    result = {
        "rows": n_rows,
        "seconds_per_iteration": (long - short) / n_iter,
        "fit_1_seconds": short,
        "mean_log_likelihood": model.summary.logLikelihood / n_rows,
    }
    print(json.dumps(result))
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
