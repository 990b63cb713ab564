# Oracle of test_icl.py: mclust 6.0.0's BIC and ICL tables of iris, all 14 models, G = 1..9, from its
# hierarchical start, with EM run to a relative tolerance of 1e-15 (ICL, unlike BIC, is not stationary
# at the maximum: the point where EM stops moves it at the 1e-6 level at mclust's default tolerance).
# Rscript mclust_icl_tight.R <output directory>
suppressMessages(library(mclust))
out <- commandArgs(trailingOnly = TRUE)[1]
X <- as.matrix(iris[, 1:4])
ctrl <- emControl(tol = c(1e-15, 1e-13), itmax = c(1000000, 1000000))
b <- mclustBIC(X, G = 1:9, verbose = FALSE, control = ctrl)
i <- mclustICL(X, G = 1:9, verbose = FALSE, control = ctrl)
rows <- list()
for (m in colnames(b)) for (G in 1:9) {
  rows[[length(rows) + 1]] <- data.frame(model = m, G = G, bic = b[as.character(G), m], icl = i[as.character(G), m])
}
write.csv(do.call(rbind, rows), file.path(out, "mclust_icl_iris_tight.csv"), row.names = FALSE)
