suppressMessages(library(mclust))
args <- commandArgs(trailingOnly=TRUE)
out <- args[1]
sets <- list(iris=as.matrix(iris[,1:4]), faithful=as.matrix(faithful))
models <- c("EII","VII","EEI","VEI","EVI","VVI","EEE","VEE","EVE","VVE","EEV","VEV","EVV","VVV")
rows <- list()
parts <- list()
for (nm in names(sets)) {
  X <- sets[[nm]]
  hcp <- hc(X, modelName="VVV", use="SVD")
  cl <- hclass(hcp, 1:4)
  for (G in 1:4) {
    parts[[paste(nm, G)]] <- cl[, G]
    for (m in models) {
      z <- unmap(cl[, G])
      fit <- tryCatch(me(modelName=m, data=X, z=z, control=emControl(tol=c(1e-11, 1e-13), itmax=c(100000, 100000)), warn=FALSE), error=function(e) NULL)
      ll <- if (is.null(fit)) NA else fit$loglik
      b <- if (is.null(fit) || is.na(ll)) NA else bic(m, ll, nrow(X), ncol(X), G)
      rows[[length(rows)+1]] <- data.frame(data=nm, model=m, G=G, loglik=ll, bic=b, df=nMclustParams(m, ncol(X), G))
    }
  }
}
tab <- do.call(rbind, rows)
write.csv(tab, paste0(out, "_table.csv"), row.names=FALSE)
P <- do.call(cbind, lapply(names(parts), function(k) c(parts[[k]], rep(NA, 272 - length(parts[[k]])))))
colnames(P) <- names(parts)
write.csv(P, paste0(out, "_partitions.csv"), row.names=FALSE)
