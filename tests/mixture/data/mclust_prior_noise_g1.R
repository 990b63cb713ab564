# Oracle of test_prior.py's noise test: mclust 6.0.0's Mclust with a prior (priorControl()) and a
# noise component, on faithful_noise.csv (from mclust_prior_noise.R) started from its noise_init
# column, G = 1 and 2, the 10 models with a prior; EM to a relative tolerance of 1e-13.
# Beside a noise component mclust fits G = 1 by each model's own EM formulas (me*), not by its
# single-component ones (mvn*), which it takes without noise.
# Rscript mclust_prior_noise_g1.R <output directory>
suppressMessages(library(mclust))
out <- commandArgs(trailingOnly = TRUE)[1]
d <- read.csv(file.path(out, "faithful_noise.csv"))
X <- as.matrix(d[, 1:2]); noiseInit <- as.logical(d$noise_init)
ctrl <- emControl(tol = c(1e-13, 1e-13), itmax = c(1000000, 1000000))
rows <- list()
for (m in c("EII","VII","EEI","VEI","EVI","VVI","EEE","EEV","VEV","VVV")) for (G in 1:2) {
  M <- tryCatch(Mclust(X, G = G, modelNames = m, prior = priorControl(), initialization = list(noise = noiseInit),
                       control = ctrl, verbose = FALSE), error = function(e) NULL)
  rows[[length(rows) + 1]] <- data.frame(model = m, G = G, bic = if (is.null(M)) NA else M$bic)
}
write.csv(do.call(rbind, rows), file.path(out, "mclust_prior_noise_g1.csv"), row.names = FALSE)
