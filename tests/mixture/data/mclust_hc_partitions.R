# mclust 6.0.0's hierarchical start, hclass(hc(X, modelName = "VVV", use = "SVD"), 1:9), on the
# data sets of test_hierarchical.py. Writes mclust_hc_simulated.csv (the simulated data) and
# mclust_hc_partitions.csv (case, G, labels: the 1-based cluster of every row as one digit).
# Run from this folder, with scikit-learn's wine data (the UCI data set R lacks) exported first:
#   python -c "import numpy, sklearn.datasets as d; numpy.savetxt('/tmp/wine.csv', d.load_wine().data, delimiter=',', fmt='%.10g')"
#   Rscript mclust_hc_partitions.R /tmp/wine.csv
suppressMessages(library(mclust))
wine <- as.matrix(read.csv(commandArgs(trailingOnly = TRUE)[1], header = FALSE))

set.seed(20240601)
# wide: 8 features; three groups of 40 rows and four tight groups of 3 rows, fewer than the features
centers <- rbind(diag(8)[1:4, ] * 12, -diag(8)[5:7, ] * 12)
wide <- rbind(matrix(rnorm(40 * 8), 40, 8),
              matrix(rnorm(40 * 8, sd = 2), 40, 8) %*% diag(c(2, 1, 1, 1, 1, 1, 1, 0.5)) + 6,
              matrix(rnorm(40 * 8), 40, 8) %*% matrix(runif(64), 8, 8) - 6,
              do.call(rbind, lapply(1:4, function(k) rep(1, 3) %o% centers[k, ] + matrix(rnorm(24, sd = 0.3), 3, 8))))
wide <- round(wide, 3)
# ties: 3 integer features (many duplicated rows), three groups
ties <- round(rbind(matrix(rnorm(90 * 3, sd = 1.5), 90, 3),
                    matrix(rnorm(60 * 3, mean = 4), 60, 3),
                    cbind(rnorm(50, -4, 2), rnorm(50, 4), rnorm(50, sd = 0.5))))
simulated <- rbind(data.frame(case = "wide", wide),
                   data.frame(case = "ties", ties, X4 = NA, X5 = NA, X6 = NA, X7 = NA, X8 = NA))
names(simulated) <- c("case", paste0("x", 1:8))
write.csv(simulated, "mclust_hc_simulated.csv", row.names = FALSE, na = "")

sets <- list(iris = as.matrix(iris[, 1:4]), faithful = as.matrix(faithful), wine = wine,
             rounded_gaussian = as.matrix(read.csv("rounded_gaussian.csv")),
             wide = wide, ties = ties)
rows <- list()
for (name in names(sets)) {
  cl <- hclass(hc(sets[[name]], modelName = "VVV", use = "SVD"), 1:9)
  for (G in 1:9) rows[[length(rows) + 1]] <- data.frame(case = name, G = G, labels = paste(cl[, G], collapse = ""))
}
write.csv(do.call(rbind, rows), "mclust_hc_partitions.csv", row.names = FALSE)
