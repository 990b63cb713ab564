# mclust 6.0.0's EVE and VVE fits from its hierarchical starts (mclust_hc_partitions.csv) on iris,
# faithful and wine, G = 2..9: me() from z = unmap(partition), with emControl()'s defaults
# (control "default": the fits of Mclust(X, G, modelNames)) and with the EM tolerance tightened
# to 1e-11 (control "tight"; the inner tolerance stays sqrt(.Machine$double.eps)).
# Writes mclust_vve_me.csv (case, model, G, control, loglik, bic in mclust's sign, n_iter).
# Run from this folder, with scikit-learn's wine data exported first (see mclust_hc_partitions.R):
#   Rscript mclust_vve_me.R /tmp/wine.csv
suppressMessages(library(mclust))
wine <- as.matrix(read.csv(commandArgs(trailingOnly = TRUE)[1], header = FALSE))
sets <- list(iris = as.matrix(iris[, 1:4]), faithful = as.matrix(faithful), wine = wine)
partitions <- read.csv("mclust_hc_partitions.csv", colClasses = c("character", "integer", "character"))
controls <- list(default = emControl(), tight = emControl(tol = c(1e-11, sqrt(.Machine$double.eps))))
rows <- list()
for (name in names(sets)) {
  X <- sets[[name]]
  for (G in 2:9) {
    labels <- as.integer(strsplit(partitions$labels[partitions$case == name & partitions$G == G], "")[[1]])
    for (model in c("EVE", "VVE")) for (control in names(controls)) {
      fit <- me(modelName = model, data = X, z = unmap(labels), control = controls[[control]], warn = FALSE)
      ll <- if (is.null(fit$loglik)) NA else fit$loglik
      b <- if (is.na(ll)) NA else bic(model, ll, nrow(X), ncol(X), G)
      rows[[length(rows) + 1]] <- data.frame(case = name, model = model, G = G, control = control,
                                             loglik = ll, bic = b, n_iter = abs(attr(fit, "info")[[1]]))
    }
  }
}
write.csv(do.call(rbind, rows), "mclust_vve_me.csv", row.names = FALSE)
