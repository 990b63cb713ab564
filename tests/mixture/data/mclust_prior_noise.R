# Oracles for the conjugate prior, the noise component and the bootstrap LRT (mclust 6.0.0).
# Rscript mclust_prior_noise.R <output directory>
suppressMessages(library(mclust))
args <- commandArgs(trailingOnly=TRUE)
out <- args[1]
ctrl <- emControl(tol=c(1e-11, 1e-13), itmax=c(100000, 100000))
prior_models <- c("EII","VII","EEI","VEI","EVI","VVI","EEE","EEV","VEV","VVV")
all_models <- c("EII","VII","EEI","VEI","EVI","VVI","EEE","VEE","EVE","VVE","EEV","VEV","EVV","VVV")
sets <- list(iris=as.matrix(iris[,1:4]), faithful=as.matrix(faithful))

# 1. MAP EM with priorControl() from mclust's hierarchical partitions (those of mclust_models_me.R)
rows <- list()
for (nm in names(sets)) {
  X <- sets[[nm]]
  cl <- hclass(hc(X, modelName="VVV", use="SVD"), 1:4)
  for (G in 1:4) for (m in prior_models) {
    fit <- tryCatch(me(modelName=m, data=X, z=unmap(cl[, G]), prior=priorControl(), control=ctrl, warn=FALSE),
                    error=function(e) NULL)
    ll <- if (is.null(fit)) NA else fit$loglik
    b <- if (is.null(fit) || is.na(ll)) NA else bic(m, ll, nrow(X), ncol(X), G)
    rows[[length(rows)+1]] <- data.frame(data=nm, model=m, G=G, loglik=ll, bic=b, df=nMclustParams(m, ncol(X), G))
  }
}
write.csv(do.call(rbind, rows), file.path(out, "mclust_prior_me.csv"), row.names=FALSE)
# the resolved default prior for iris, G = 3
p1 <- defaultPrior(sets$iris, G=3, modelName="VVV")
p2 <- defaultPrior(sets$iris, G=3, modelName="VII")
write.csv(data.frame(mean=p1$mean, dof=p1$dof, scale_vvv=p1$scale, scale_vii=p2$scale),
          file.path(out, "mclust_default_prior_iris_G3.csv"), row.names=FALSE)

# 2. A uniform noise component: faithful with 60 uniform rows over its bounding box
set.seed(2024)
Xf <- as.matrix(faithful)
lo <- apply(Xf, 2, min); hi <- apply(Xf, 2, max)
U <- cbind(runif(60, lo[1], hi[1]), runif(60, lo[2], hi[2]))
X <- rbind(Xf, U)
colnames(X) <- colnames(Xf)
truth <- c(rep(FALSE, nrow(Xf)), rep(TRUE, 60))
noiseInit <- sample(c(TRUE, FALSE), size=nrow(X), replace=TRUE, prob=c(1, 3))
write.csv(data.frame(X, truth=truth, noise_init=noiseInit), file.path(out, "faithful_noise.csv"), row.names=FALSE)
Vinv <- hypvol(X, reciprocal=TRUE)
cl <- hclass(hc(X[!noiseInit, ], modelName="VVV", use="SVD"), 1:3)
rows <- list()
parts <- list()
for (G in 1:3) {
  part <- rep(0, nrow(X)); part[!noiseInit] <- cl[, G]
  parts[[paste("G", G)]] <- part
  z <- matrix(0, nrow(X), G + 1); z[!noiseInit, 1:G] <- unmap(cl[, G]); z[noiseInit, G + 1] <- 1
  for (m in all_models) {
    fit <- tryCatch(me(modelName=m, data=X, z=z, Vinv=Vinv, control=ctrl, warn=FALSE), error=function(e) NULL)
    ll <- if (is.null(fit)) NA else fit$loglik
    npar <- nMclustParams(m, ncol(X), G, noise=TRUE)
    b <- if (is.null(fit) || is.na(ll)) NA else 2 * ll - npar * log(nrow(X))
    pn <- if (is.null(fit)) NA else fit$parameters$pro[G + 1]
    M <- tryCatch(Mclust(X, G=G, modelNames=m, initialization=list(noise=noiseInit), verbose=FALSE),
                  error=function(e) NULL)
    rows[[length(rows)+1]] <- data.frame(model=m, G=G, loglik=ll, bic=b, df=npar, noise_weight=pn,
                                         mclust_bic=if (is.null(M)) NA else M$bic)
  }
}
write.csv(do.call(rbind, rows), file.path(out, "mclust_noise_me.csv"), row.names=FALSE)
write.csv(as.data.frame(parts), file.path(out, "mclust_noise_partitions.csv"), row.names=FALSE)
write.csv(data.frame(log_volume=log(1 / Vinv)), file.path(out, "mclust_noise_hypvol.csv"), row.names=FALSE)

# 3. mclustBootstrapLRT's observed statistics on faithful (its bootstrap draws are R's own), with
# the tight EM tolerances above so that each fit is at its maximum
rows <- list()
for (m in c("VVV", "EEE", "VII")) {
  set.seed(1)
  r <- mclustBootstrapLRT(faithful, modelName=m, nboot=19, maxG=3, verbose=FALSE, control=ctrl)
  rows[[length(rows)+1]] <- data.frame(model=m, G=r$G, obs=r$obs, p_value=r$p.value)
}
write.csv(do.call(rbind, rows), file.path(out, "mclust_bootstrap_lrt_faithful.csv"), row.names=FALSE)
