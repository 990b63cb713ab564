# mclust 6.0.0's EDDA BIC of every covariance model on iris: mclust_edda_iris.csv
suppressMessages(library(mclust))
models <- c("EII","VII","EEI","VEI","EVI","VVI","EEE","VEE","EVE","VVE","EEV","VEV","EVV","VVV")
rows <- lapply(models, function(m) {
  r <- MclustDA(iris[, 1:4], iris$Species, modelType = "EDDA", modelNames = m, verbose = FALSE)
  data.frame(model = m, loglik = r$loglik, df = r$df, bic = r$bic)
})
write.csv(do.call(rbind, rows), "mclust_edda_iris.csv", row.names = FALSE)
